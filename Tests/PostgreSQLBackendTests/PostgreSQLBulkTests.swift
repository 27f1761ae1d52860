import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// The bulk path (`COPY` straight into the table, or through the staging table as an upsert) and
/// the reads of one query run outside a transaction.
@Suite struct PostgreSQLBulkTests {
    struct Member: Codable, Equatable, StorableModel {
        static let indexes: [IndexDefinition] = [.init(["email"], unique: true)]
        var id: Int64
        var email: String
        var rank: Int
    }

    static func members(_ ids: Range<Int>, rank: Int = 0) -> [Member] {
        ids.map { Member(id: Int64($0), email: "m\($0)@example.org", rank: rank) }
    }

    /// Small batches (several `COPY`s per save) and the default ones.
    static let batchSizes = [700, PostgreSQLStorageBackend.Configuration().batchSize]

    /// A bulk load copies straight into the table, and every record reads back.
    @Test(arguments: batchSizes) func bulkLoadStoresEveryRecord(
        batchSize: Int
    ) throws {
        let configuration = PostgreSQLStorageBackend.Configuration(poolSize: 2, batchSize: batchSize)
        try withStore("bulk-load", configuration: configuration) { store, _ in
            try store.save(contentsOf: Self.members(0..<5_000))
            let stored = try store.fetchAll(Member.self)
            #expect(stored == Self.members(0..<5_000))
        }
    }

    /// Saving keys already stored is an upsert: the direct copy hits the primary key, and the
    /// batch goes through the staging table; the new values win, the other records stay.
    @Test(arguments: batchSizes) func bulkSaveOverStoredKeysUpserts(
        batchSize: Int
    ) throws {
        let configuration = PostgreSQLStorageBackend.Configuration(poolSize: 2, batchSize: batchSize)
        try withStore("bulk-upsert", configuration: configuration) { store, _ in
            try store.save(contentsOf: Self.members(0..<1_000))
            try store.save(contentsOf: Self.members(500..<3_000, rank: 7))
            let stored = try store.fetchAll(Member.self)
            #expect(stored == Self.members(0..<500) + Self.members(500..<3_000, rank: 7))
        }
    }

    /// A key saved twice in one save keeps its last values, the batch's first key as any other.
    @Test func keySavedTwiceKeepsItsLastValues() throws {
        try withStore("bulk-twice") { store, _ in
            var batch = Self.members(0..<100)
            batch.append(Member(id: 5, email: "m5@example.org", rank: 3))
            batch.append(Member(id: 5, email: "five@example.org", rank: 4))
            batch += Self.members(100..<200)
            batch.append(Member(id: 0, email: "zero@example.org", rank: 9))
            try store.save(contentsOf: batch)
            #expect(try store.count(Member.self) == 200)
            #expect(try store.fetch(Member.self, id: 5) == Member(id: 5, email: "five@example.org", rank: 4))
            #expect(try store.fetch(Member.self, id: 0) == Member(id: 0, email: "zero@example.org", rank: 9))
            try store.transaction { tx in
                try tx.save(Member(id: 1, email: "one-a@example.org", rank: 1))
                try tx.save(Member(id: 1, email: "one-b@example.org", rank: 2))
            }
            #expect(try store.fetch(Member.self, id: 1) == Member(id: 1, email: "one-b@example.org", rank: 2))
        }
    }

    /// A unique violation in the middle of a bulk save (against a stored record, or within the
    /// batch) is `.constraintViolation`, and nothing of the save remains.
    @Test(arguments: batchSizes) func uniqueViolationMidBatchLeavesNothing(
        batchSize: Int
    ) throws {
        let configuration = PostgreSQLStorageBackend.Configuration(poolSize: 2, batchSize: batchSize)
        try withStore("bulk-unique", configuration: configuration) { store, _ in
            try store.save(contentsOf: Self.members(0..<10))
            var clashing = Self.members(1_000..<4_000)
            clashing[2_500].email = "m3@example.org"
            expectStorageError(.constraintViolation) { try store.save(contentsOf: clashing) }
            var twice = Self.members(5_000..<8_000)
            twice[2_000].email = twice[10].email
            expectStorageError(.constraintViolation) { try store.save(contentsOf: twice) }
            #expect(try store.fetchAll(Member.self) == Self.members(0..<10))
            // The store still writes afterwards, on the same connections.
            try store.save(contentsOf: Self.members(10..<20))
            #expect(try store.count(Member.self) == 20)
        }
    }

    /// Hostile column names reach the table quoted, and the staging table, whose columns are
    /// `c1`…`cn`, never sees them: a second insert of the same keys (an upsert through the
    /// staging table) replaces the values.
    @Test func hostileColumnNamesThroughTheStagingTable() throws {
        try withStore("bulk-hostile") { store, _ in
            let names = [
                #"a"b"#, "x); DROP TABLE storage; --", "$1", "c1", "excluded", String(repeating: "long", count: 30),
            ]
            func rows(_ value: Int) -> [[String: StorageValue]] {
                (0..<50).map { id in
                    var row: [String: StorageValue] = ["id": .integer(Int64(id))]
                    for (index, name) in names.enumerated() { row[name] = .integer(Int64(id * 10 + index + value)) }
                    return row
                }
            }
            try store.insert(dictionaries: rows(0), into: "hostile")
            try store.insert(dictionaries: rows(1_000), into: "hostile")
            let stored = try store.fetchDictionaries(from: "hostile", orderBy: [.ascending("id")])
            #expect(stored.count == 50)
            for (id, row) in stored.enumerated() {
                for (index, name) in names.enumerated() {
                    #expect(row[name] == .integer(Int64(id * 10 + index + 1_000)), "\(name)")
                }
            }
        }
    }

    /// `insert(jsonArray:into:)` goes through the same writer: a second array over the same keys
    /// replaces the values.
    @Test func jsonArrayIngestionUpserts() throws {
        try withStore("bulk-json") { store, _ in
            let first = (0..<3_000).map { #"{"id": \#($0), "v": "a\#($0)"}"# }.joined(separator: ",")
            let second = (1_500..<4_000).map { #"{"id": \#($0), "v": "b\#($0)"}"# }.joined(separator: ",")
            try store.insert(jsonArray: Data(("[" + first + "]").utf8), into: "items")
            try store.insert(jsonArray: Data(("[" + second + "]").utf8), into: "items")
            let stored = try store.fetchDictionaries(from: "items", orderBy: [.ascending("id")])
            #expect(stored.count == 4_000)
            #expect(stored[10]["v"] == .text("a10"))
            #expect(stored[2_000]["v"] == .text("b2000"))
        }
    }

    /// A single-query read whose schema is not cached reads the catalog in a transaction, and its
    /// query sees that snapshot: a record committed elsewhere in between is not seen. With the
    /// schema cached, the query runs on its own and sees it.
    @Test func singleQueryReadSharesTheCatalogSnapshot() throws {
        try TemporaryDirectory.with("postgres-single") { directory in
            let path = DiskBackend.postgresql.storePath(in: directory)
            let schema = PostgreSQLTestServer.schema(for: path)
            let writer = try PostgreSQLTestServer.openStore(path: path)
            try writer.save(Member(id: 1, email: "one@example.org", rank: 1))
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            let backend = try PostgreSQLStorageBackend(
                url: try PostgreSQLTestServer.url(),
                configuration: .init(schema: schema, poolSize: 1, observesOtherProcesses: false)
            )
            defer { backend.close() }
            var nextID = 2
            /// Whether the record committed behind the backend's back, between the schema
            /// look-up and the query, was seen.
            func seesRecordCommittedInBetween() throws -> Bool {
                let id = nextID
                nextID += 1
                return try backend.readSingleQuery { transaction in
                    let stored = try #require(try transaction.schema(of: "Member"))
                    try raw.execute(
                        "INSERT INTO \"\(schema)\".member (id, email, rank) VALUES (\(id), 'r\(id)@example.org', 0)"
                    )
                    return try transaction.get("Member", key: .integer(Int64(id)), columns: [stored.primaryKey]) { _ in
                    }
                }
            }
            #expect(try seesRecordCommittedInBetween() == false)  // the catalog was read: one snapshot
            #expect(try seesRecordCommittedInBetween() == true)  // cached: the query alone, later
        }
    }

    /// A single-query read refuses a second query rather than run it on another snapshot.
    @Test func singleQueryReadRefusesASecondQuery() throws {
        try withStore("single-second") { store, path in
            try store.save(Member(id: 1, email: "one@example.org", rank: 1))
            let backend = try PostgreSQLStorageBackend(
                url: try PostgreSQLTestServer.url(),
                configuration: .init(schema: PostgreSQLTestServer.schema(for: path), observesOtherProcesses: false)
            )
            defer { backend.close() }
            _ = try backend.read { try $0.schema(of: "Member") }  // cached
            expectStorageError(.misuse) {
                _ = try backend.readSingleQuery { transaction in
                    _ = try transaction.count(in: "Member", where: nil)
                    return try transaction.count(in: "Member", where: nil)
                }
            }
            #expect(try backend.readSingleQuery { try $0.count(in: "Member", where: nil) } == 1)
        }
    }
}
