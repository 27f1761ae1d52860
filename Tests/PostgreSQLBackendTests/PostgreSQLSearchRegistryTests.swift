import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Every write asks whether its collection has a full-text index. On PostgreSQL a store that
/// found none answers from its cache, so that a single save stays one statement, and checks the
/// answer in the statement itself (or before the commit of a longer transaction): a full-text
/// index that another process created since is kept by the next write all the same.
@Suite struct PostgreSQLSearchRegistryTests {
    /// The films' collection through a type that declares no index (an older app version).
    struct PlainFilm: Codable, StorableModel {
        static let collectionName = "films"
        var id: Int64
        var title: String
        var year: Int
        var genre: String?
    }

    /// The films' collection through a type that declares the index (a newer app version).
    struct IndexedFilm: Codable, StorableModel {
        static let collectionName = "films"
        static let indexes: [IndexDefinition] = [.fullText(["title", "genre"])]
        var id: Int64
        var title: String
        var year: Int
        var genre: String?
    }

    /// Two stores (two processes, each with its own cache) write plain films and learn that the
    /// store keeps no full-text index. A third creates one. The first then saves one film (one
    /// statement), the second two in one transaction: both are found by a search, and the index
    /// holds every record.
    @Test func anIndexCreatedElsewhereIsKeptByStoresThatCachedItsAbsence() throws {
        try withStore("search-registry") { single, path in
            let longer = try PostgreSQLTestServer.openStore(path: path)
            try single.save(PlainFilm(id: 1, title: "Quiet Evening", year: 1977, genre: nil))
            try longer.save(PlainFilm(id: 2, title: "Loud Morning", year: 1978, genre: "Drama"))
            // Both now answer "no full-text index" from their caches.
            try single.save(PlainFilm(id: 3, title: "Quiet Noon", year: 1979, genre: nil))
            _ = try longer.transaction { transaction in
                try transaction.save(PlainFilm(id: 4, title: "Loud Night", year: 1980, genre: nil))
            }

            let indexing = try PostgreSQLTestServer.openStore(path: path)
            try indexing.save(IndexedFilm(id: 5, title: "Zebra Dawn", year: 1981, genre: nil))
            #expect(try indexing.search(IndexedFilm.self, matching: "quiet").map(\.id) == [1, 3])

            try single.save(PlainFilm(id: 6, title: "Zebra Crossing", year: 1982, genre: nil))
            try longer.transaction { transaction in
                try transaction.save(PlainFilm(id: 7, title: "Zebra Stripes", year: 1983, genre: nil))
                try transaction.save(PlainFilm(id: 1, title: "Zebra Evening", year: 1977, genre: nil))
            }
            #expect(Set(try indexing.search(IndexedFilm.self, matching: "zebra").map(\.id)) == [1, 5, 6, 7])
            #expect(try indexing.search(IndexedFilm.self, matching: "quiet").map(\.id) == [3])
            // The stores that cached the absence search it too, and find the same.
            #expect(Set(try single.search(IndexedFilm.self, matching: "zebra").map(\.id)) == [1, 5, 6, 7])
            #expect(try longer.search(in: "films", matching: "loud").count == 2)
        }
    }

    /// A store that cached the absence of any full-text index creates one itself: its own
    /// transaction's check does not refuse the registry it made.
    @Test func aStoreThatCachedTheAbsenceCreatesAnIndexItself() throws {
        try withStore("search-registry-own") { store, _ in
            try store.save(PlainFilm(id: 1, title: "Quiet Evening", year: 1977, genre: nil))
            try store.save(PlainFilm(id: 2, title: "Quiet Noon", year: 1978, genre: nil))
            try store.transaction { transaction in
                try transaction.save(PlainFilm(id: 3, title: "Quiet Night", year: 1979, genre: nil))
                try transaction.save(IndexedFilm(id: 4, title: "Quiet Dawn", year: 1980, genre: nil))
            }
            try store.save(PlainFilm(id: 5, title: "Quiet Dusk", year: 1981, genre: nil))
            #expect(try store.search(IndexedFilm.self, matching: "quiet").map(\.id).sorted() == [1, 2, 3, 4, 5])
        }
    }
}
