import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Streams in single-row mode, statements issued while a stream is open, a killed client.
@Suite(.dedicatedThreads) struct PostgreSQLStreamingTests {
    struct Row: Codable, Equatable {
        var id: Int64
        var n: Int64
    }

    /// Inside a transaction, `forEach` streams on the transaction's connection; look-ups and
    /// writes made in its callback run on that same connection (the rest of the stream is
    /// buffered first), and the stream still delivers every row, in order.
    @Test func statementsInsideAStreamRunAndTheStreamGoesOn() throws {
        try withStore("nested") { store, _ in
            try store.save(contentsOf: (1...3_000).map { Row(id: Int64($0), n: Int64($0)) })
            var seen: [Int64] = []
            try store.transaction { tx in
                try tx.forEach(Row.self, where: Column("n") > 0) { row in
                    seen.append(row.id)
                    if row.id % 1_000 == 0 {
                        #expect(try tx.fetch(Row.self, id: row.id - 1)?.n == row.id - 1)
                        try tx.save(Row(id: -row.id, n: -1))
                    }
                }
            }
            #expect(seen == (1...3_000).map { Int64($0) })
            #expect(try store.count(Row.self, where: Column("n") < 0) == 3)
        }
    }

    /// The crash writer is killed with SIGKILL at random moments while it commits batches: each
    /// reopened store holds every acknowledged batch whole and no torn one.
    @Test func aKilledClientLeavesNothingOfItsTransaction() throws {
        // The server first: the writer finds it through STORAGE_POSTGRES_URL.
        _ = try PostgreSQLTestServer.url()
        try TemporaryDirectory.with("postgres-kill") { directory in
            let path = DiskBackend.postgresql.storePath(in: directory)
            let committed = try CrashHarness.killRepeatedly(
                backend: DiskBackend.postgresql.rawValue,
                path: path,
                kills: 8,
                maximumDelay: 50_000
            ) {
                try DiskBackend.postgresql.openStore(path: $0)
            } afterEach: {
            }
            #expect(committed >= 8)
        }
    }
}
