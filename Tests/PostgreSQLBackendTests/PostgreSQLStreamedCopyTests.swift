import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Batches of many chunks (`PostgreSQLRecordWriter.streamingChunkBytes`): the direct `COPY`
/// starts while the batch is still being encoded, and ends, fails or is abandoned as a whole.
@Suite struct PostgreSQLStreamedCopyTests {
    struct Streamed: Codable, Equatable, StorableModel {
        static let indexes: [IndexDefinition] = [.init(["email"], unique: true)]
        var id: Int64
        var email: String
        var note: String
    }

    /// A record whose encoding of `probeID` calls `probe`, in the middle of a save; only
    /// `copyStartsWhileTheBatchIsEncoded` uses the type (tests run at once).
    struct Probed: Codable, Equatable {
        var id: Int64
        var note: String

        nonisolated(unsafe) static var probe: (() -> Void)?
        static let probeID: Int64 = 30_000

        func encode(to encoder: any Encoder) throws {
            if id == Self.probeID { Self.probe?() }
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(note, forKey: .note)
        }
    }

    static func records(_ ids: Range<Int>, note: String = "a note of some length") -> [Streamed] {
        ids.map { Streamed(id: Int64($0), email: "s\($0)@example.org", note: note) }
    }

    /// One batch of 40,000 records (about 2 MB, many chunks).
    static let configuration = PostgreSQLStorageBackend.Configuration(poolSize: 1, batchSize: 50_000)

    /// While the batch is being encoded, the server is already copying its first records; all
    /// of them read back, in key order.
    @Test func copyStartsWhileTheBatchIsEncoded() throws {
        try withStore("streamed-copy", configuration: Self.configuration) { store, path in
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            let schema = PostgreSQLTestServer.schema(for: path)
            var copied: [String] = []
            Probed.probe = {
                copied =
                    (try? raw.execute(
                        "SELECT p.tuples_processed FROM pg_stat_progress_copy p JOIN pg_class c ON c.oid = p.relid"
                            + " JOIN pg_namespace n ON n.oid = c.relnamespace"
                            + " WHERE n.nspname = '\(schema)' AND p.command = 'COPY FROM'"
                    )) ?? ["the query failed"]
            }
            defer { Probed.probe = nil }
            let records = (0..<40_000).map { Probed(id: Int64($0), note: "a note of some length \($0)") }
            // The table is made (and committed) first: the catalog row of a table made by the
            // copy's own transaction is not visible to the probe's connection.
            let last = Probed(id: 40_000, note: "first")
            try store.save(last)
            try store.save(contentsOf: records.reversed())
            Probed.probe = nil
            #expect(copied.count == 1)
            #expect((copied.first.flatMap { Int($0) } ?? 0) > 0)
            #expect(try store.fetchAll(Probed.self) == records + [last])
        }
    }

    /// A record the client refuses (text with a NUL) after several chunks were sent: the save
    /// throws, nothing of it is stored, and the one connection writes again afterwards.
    @Test func refusedRecordAfterSeveralChunksStoresNothing() throws {
        try withStore("streamed-refused", configuration: Self.configuration) { store, _ in
            try store.save(contentsOf: Self.records(0..<10))
            var batch = Self.records(100..<40_000)
            batch[35_000].note = "nul\u{0}inside"
            expectStorageError(.typeMismatch) { try store.save(contentsOf: batch) }
            #expect(try store.fetchAll(Streamed.self) == Self.records(0..<10))
            try store.save(contentsOf: Self.records(10..<20_000))
            #expect(try store.count(Streamed.self) == 20_000)
        }
    }

    /// A unique violation the server finds after several chunks (an email stored already):
    /// `.constraintViolation`, nothing of the save remains, and the store writes again.
    @Test func uniqueViolationAfterSeveralChunksStoresNothing() throws {
        try withStore("streamed-unique", configuration: Self.configuration) { store, _ in
            try store.save(contentsOf: Self.records(0..<10))
            var batch = Self.records(100..<40_000)
            batch[38_000].email = "s3@example.org"
            expectStorageError(.constraintViolation) { try store.save(contentsOf: batch) }
            #expect(try store.fetchAll(Streamed.self) == Self.records(0..<10))
            try store.save(contentsOf: Self.records(10..<100))
            #expect(try store.count(Streamed.self) == 100)
        }
    }

    /// A streamed batch whose last records are stored already: the copy hits the primary key
    /// at its end, and the whole batch goes through the staging table as an upsert.
    @Test func streamedBatchOverStoredKeysUpserts() throws {
        try withStore("streamed-upsert", configuration: Self.configuration) { store, _ in
            try store.save(contentsOf: Self.records(39_000..<40_000))
            try store.save(contentsOf: Self.records(0..<40_000, note: "new"))
            #expect(try store.fetchAll(Streamed.self) == Self.records(0..<40_000, note: "new"))
        }
    }

    /// Two writers in one transaction, and a read between their records: each open copy ends
    /// before another statement runs, and everything commits.
    @Test func otherStatementsEndTheOpenCopy() throws {
        struct Other: Codable, Equatable, StorableModel {
            var id: Int64
            var text: String
        }
        try withStore("streamed-mixed", configuration: Self.configuration) { store, _ in
            let others = (0..<20_000).map { Other(id: Int64($0), text: String(repeating: "x", count: 30)) }
            try store.transaction { tx in
                try tx.save(contentsOf: Self.records(0..<20_000))
                #expect(try tx.count(Streamed.self) == 20_000)
                try tx.save(contentsOf: others)
                try tx.save(contentsOf: Self.records(20_000..<40_000))
            }
            #expect(try store.fetchAll(Streamed.self) == Self.records(0..<40_000))
            #expect(try store.fetchAll(Other.self) == others)
        }
    }
}
