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
@Suite(.dedicatedThreads) struct PostgreSQLSearchRegistryTests {
    /// Two stores (two processes, each with its own cache) write plain films and learn that the
    /// store keeps no full-text index. A third creates one. The first then saves one film (one
    /// statement), the second two in one transaction: both are found by a search, and the index
    /// holds every record.
    @Test func anIndexCreatedElsewhereIsKeptByStoresThatCachedItsAbsence() throws {
        try withStore("search-registry") { single, path in
            let longer = try PostgreSQLTestServer.openStore(path: path)
            try single.save(PlainSearchFilm(id: 1, title: "Quiet Evening", year: 1977, genre: nil))
            try longer.save(PlainSearchFilm(id: 2, title: "Loud Morning", year: 1978, genre: "Drama"))
            // Both now answer "no full-text index" from their caches.
            try single.save(PlainSearchFilm(id: 3, title: "Quiet Noon", year: 1979, genre: nil))
            _ = try longer.transaction { transaction in
                try transaction.save(PlainSearchFilm(id: 4, title: "Loud Night", year: 1980, genre: nil))
            }

            let indexing = try PostgreSQLTestServer.openStore(path: path)
            try indexing.save(SearchFilm(id: 5, title: "Zebra Dawn", year: 1981, genre: nil))
            #expect(try indexing.search(SearchFilm.self, matching: "quiet").map(\.id) == [1, 3])

            try single.save(PlainSearchFilm(id: 6, title: "Zebra Crossing", year: 1982, genre: nil))
            try longer.transaction { transaction in
                try transaction.save(PlainSearchFilm(id: 7, title: "Zebra Stripes", year: 1983, genre: nil))
                try transaction.save(PlainSearchFilm(id: 1, title: "Zebra Evening", year: 1977, genre: nil))
            }
            #expect(Set(try indexing.search(SearchFilm.self, matching: "zebra").map(\.id)) == [1, 5, 6, 7])
            #expect(try indexing.search(SearchFilm.self, matching: "quiet").map(\.id) == [3])
            // The stores that cached the absence search it too, and find the same.
            #expect(Set(try single.search(SearchFilm.self, matching: "zebra").map(\.id)) == [1, 5, 6, 7])
            #expect(try longer.search(in: "films", matching: "loud").count == 2)
        }
    }

    /// A store that cached the absence of any full-text index creates one itself: its own
    /// transaction's check does not refuse the registry it made.
    @Test func aStoreThatCachedTheAbsenceCreatesAnIndexItself() throws {
        try withStore("search-registry-own") { store, _ in
            try store.save(PlainSearchFilm(id: 1, title: "Quiet Evening", year: 1977, genre: nil))
            try store.save(PlainSearchFilm(id: 2, title: "Quiet Noon", year: 1978, genre: nil))
            try store.transaction { transaction in
                try transaction.save(PlainSearchFilm(id: 3, title: "Quiet Night", year: 1979, genre: nil))
                try transaction.save(SearchFilm(id: 4, title: "Quiet Dawn", year: 1980, genre: nil))
            }
            try store.save(PlainSearchFilm(id: 5, title: "Quiet Dusk", year: 1981, genre: nil))
            #expect(try store.search(SearchFilm.self, matching: "quiet").map(\.id).sorted() == [1, 2, 3, 4, 5])
        }
    }

    /// The statements a store opened on `path` sends, every one reported (a zero threshold).
    static func openCounting(_ path: String) throws -> (ObjectStore, Locked<[String]>) {
        let statements = Locked<[String]>([])
        var configuration = PostgreSQLStorageBackend.Configuration(poolSize: 2)
        configuration.events = StoreEventReporter(slowStatementThreshold: .zero) { event in
            if event.kind == .slowStatement { statements.withLock { $0.append(event.statement ?? "") } }
        }
        return (try PostgreSQLTestServer.openStore(path: path, configuration: configuration), statements)
    }

    /// In a store without any full-text index, and in one that indexes another collection, a
    /// single save is one statement once the store has looked (the first save looks in the
    /// catalog, or reads the collection's registry record): its upsert, which checks the answer.
    @Test func aSingleSaveStaysOneStatementWithOrWithoutIndexesElsewhere() throws {
        try withStore("search-registry-statements") { _, path in
            let (store, statements) = try Self.openCounting(path)
            for round in 0..<2 {
                try store.save(PlainSearchFilm(id: 1, title: "Warm Up", year: 1970, genre: nil))
                statements.withLock { $0.removeAll() }
                try store.save(PlainSearchFilm(id: 2, title: "Quiet \(round)", year: 1971, genre: nil))
                let sent = statements.withLock { $0 }
                #expect(sent.count == 1, "\(sent)")
                #expect(sent.first?.hasPrefix("INSERT INTO") == true, "\(sent)")
                // The second round: another collection is indexed, so the registry exists.
                struct Note: Codable, StorableModel {
                    static let indexes: [IndexDefinition] = [.fullText(["text"])]
                    var id: Int64
                    var text: String
                }
                try store.save(Note(id: 1, text: "an indexed note"))
            }
        }
    }

    /// A store that indexes another collection learns that `films` has no index, and answers
    /// so from its cache; another store then indexes `films`. The first store's next single save
    /// and its next two-record transaction are kept in that index.
    @Test func anIndexCreatedElsewhereOnACollectionCachedUnindexedIsKept() throws {
        struct Note: Codable, StorableModel {
            static let indexes: [IndexDefinition] = [.fullText(["text"])]
            var id: Int64
            var text: String
        }
        try withStore("search-registry-unindexed") { store, path in
            try store.save(Note(id: 1, text: "an indexed note"))
            let longer = try PostgreSQLTestServer.openStore(path: path)
            try longer.save(Note(id: 2, text: "another note"))
            for id in Int64(1)...2 {
                try store.save(PlainSearchFilm(id: id, title: "Quiet \(id)", year: 1970, genre: nil))
                try longer.save(PlainSearchFilm(id: id + 10, title: "Loud \(id)", year: 1970, genre: nil))
            }
            let indexing = try PostgreSQLTestServer.openStore(path: path)
            try indexing.save(SearchFilm(id: 20, title: "Zebra Dawn", year: 1981, genre: nil))
            try store.save(PlainSearchFilm(id: 3, title: "Zebra Crossing", year: 1982, genre: nil))
            _ = try longer.transaction { transaction in
                try transaction.save(PlainSearchFilm(id: 13, title: "Zebra Stripes", year: 1983, genre: nil))
                try transaction.save(PlainSearchFilm(id: 1, title: "Zebra Quiet", year: 1970, genre: nil))
            }
            #expect(try indexing.search(SearchFilm.self, matching: "zebra").map(\.id).sorted() == [1, 3, 13, 20])
            #expect(try indexing.search(SearchFilm.self, matching: "quiet").map(\.id).sorted() == [1, 2])
            #expect(try store.search(Note.self, matching: "note").count == 2)
        }
    }
}
