import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

@Suite("storage schema shows references", .dedicatedThreads)
struct RelationsCommandTests {
    struct Writer: Codable, StorableModel {
        static let collectionName = "writers"
        var id: Int64
    }

    struct Novel: Codable, StorableModel {
        static let collectionName = "novels"
        static let references: [Reference] = [Reference("writerID", to: Writer.self, onDelete: .cascade)]
        var id: Int64
        var writerID: Int64?
    }

    @Test(arguments: [DiskBackend.sqlite, .lmdb])
    func schemaListsTheReferencesOfACollection(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("storage-cli-relations") { directory in
            let store = try backend.fixture.openStore(in: directory)
            try store.save(Writer(id: 1))
            try store.save(Novel(id: 1, writerID: 1))
            try store.close()
            let location = try storeURL(backend, in: directory)
            let text = try StorageProcess.run(["schema", location], in: directory)
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.contains("  reference writerID -> writers (on delete: cascade)\n"))
            #expect(text.stdout.contains("  index (writerID)\n"))
            let json = try StorageProcess.run(["schema", location, "novels", "--json"], in: directory)
            let schemas = try #require(try json.json() as? [[String: Any]])
            let references = try #require(schemas.first?["references"] as? [[String: String]])
            #expect(references == [["column": "writerID", "collection": "writers", "onDelete": "cascade"]])
            let writers = try StorageProcess.run(["schema", location, "writers", "--json"], in: directory)
            #expect((try writers.json() as? [[String: Any]])?.first?["references"] as? [Any] != nil)
        }
    }
}
