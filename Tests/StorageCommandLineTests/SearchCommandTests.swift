import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

@testable import StorageCommandLine

/// A film with a full-text index over its title and genre.
private struct SearchCommandFilm: Codable, StorableModel {
    static let collectionName = "films"
    static let indexes: [IndexDefinition] = [.fullText(["title", "genre"])]
    var id: Int64
    var title: String
    var year: Int
    var genre: String?
}

@Suite("storage search, run as a process", .dedicatedThreads)
struct SearchCommandTests {
    fileprivate static let films = [
        SearchCommandFilm(id: 1, title: "Star Wars: A New Hope", year: 1977, genre: "Science Fiction"),
        SearchCommandFilm(id: 2, title: "Star Trek", year: 1979, genre: "Science Fiction"),
        SearchCommandFilm(id: 3, title: "A Star Is Born", year: 1976, genre: "Drama"),
        SearchCommandFilm(id: 4, title: "Café Society", year: 2016, genre: "Comedy"),
        SearchCommandFilm(id: 5, title: "The Empire Strikes Back: Star Wars", year: 1980, genre: "Science Fiction"),
    ]

    @Test(arguments: DiskBackend.allCases)
    func printsTheMatchingRecordsBestFirst(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("storage-search") { directory in
            let store = try backend.openStore(path: backend.storePath(in: directory))
            try store.save(contentsOf: Self.films)
            let expected = try store.search(SearchCommandFilm.self, matching: "star -trek").map(\.id)
            try store.close()
            let url = try storeURL(backend, in: directory)

            let found = try StorageProcess.run(["search", url, "films", "star -trek"], in: directory)
            #expect(found.status == 0, "\(found.stderr)")
            let rows = try #require(try found.json() as? [[String: Any]])
            #expect(rows.compactMap { ($0["id"] as? Int).map(Int64.init) } == expected)
            #expect(Set(expected) == [1, 3, 5])
            #expect(found.stderr.hasPrefix("3 records of films in "), "\(found.stderr)")

            let filtered = try StorageProcess.run(
                ["search", url, "films", "cafe OR wars", "--where", "year >= 1980", "--limit", "1", "--format", "csv"],
                in: directory
            )
            #expect(filtered.status == 0, "\(filtered.stderr)")
            #expect(filtered.stdout.split(separator: "\r\n").count == 2, "\(filtered.stdout)")

            let malformed = try StorageProcess.run(["search", url, "films", "star OR"], in: directory)
            #expect(malformed.status == 1)
            #expect(malformed.stderr.contains("at position 6"), "\(malformed.stderr)")
            let missing = try StorageProcess.run(["search", url, "films"], in: directory)
            #expect(missing.status == 2)

            // `storage schema` shows the index, in text and in JSON.
            let schema = try StorageProcess.run(["schema", url, "films"], in: directory)
            #expect(schema.stdout.contains("  full-text index (title, genre)\n"), "\(schema.stdout)")
            let json = try StorageProcess.run(["schema", url, "--json"], in: directory)
            let collections = try #require(try json.json() as? [[String: Any]])
            #expect(
                collections.first { $0["collection"] as? String == "films" }?["fullText"] as? [String] == [
                    "title", "genre",
                ]
            )
        }
    }
}
