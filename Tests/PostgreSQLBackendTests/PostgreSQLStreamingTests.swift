import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Streams through a cursor (reads of one query) and in single-row mode (inside transactions),
/// statements issued while a stream is open, a killed client.
@Suite(.dedicatedThreads) struct PostgreSQLStreamingTests {
    struct Row: Codable, Equatable {
        var id: Int64
        var n: Int64
    }

    struct Wide: Codable, Equatable {
        var id: Int64
        var name: String
        var payload: Data
        var ratio: Double?
    }

    struct Stop: Error {}

    /// `fetchAll` and `forEach` outside a transaction stream through a cursor in batches that
    /// grow from 32 rows: every row arrives once and in order whatever the count, around each
    /// batch boundary, with a limit and an offset; a scan its callback ends early (it throws)
    /// leaves the connection ready for the next read.
    @Test func readsOfOneQueryStreamEveryRowThroughTheCursor() throws {
        try withStore("cursor") { store, _ in
            var stored: [Row] = []
            for count in [0, 1, 31, 32, 33, 288, 289, 20_000] {
                let more = (stored.count..<count).map { Row(id: Int64($0 + 1), n: Int64(($0 * 7) % 1_000)) }
                try store.save(contentsOf: more)
                stored += more
                #expect(try store.fetchAll(Row.self) == stored, "\(count) rows")
                var streamed: [Row] = []
                try store.forEach(Row.self) { streamed.append($0) }
                #expect(streamed == stored, "\(count) rows")
            }
            #expect(try store.fetchAll(Row.self, limit: 5_000, offset: 700) == Array(stored[700..<5_700]))
            let filtered = try store.fetchAll(Row.self, where: Column("n") < 100, orderBy: [.descending("n")])
            #expect(filtered == stored.filter { $0.n < 100 }.sorted { ($0.n, $1.id) > ($1.n, $0.id) })
            for stop in [5, 40, 500, 10_000] {
                var seen = 0
                do {
                    try store.forEach(Row.self) { _ in
                        seen += 1
                        if seen == stop { throw Stop() }
                    }
                    Issue.record("the scan did not stop")
                } catch is Stop {}
                #expect(seen == stop)
                #expect(try store.count(Row.self) == stored.count)
                #expect(try store.fetch(Row.self, id: 17) == stored[16])
                #expect(try store.fetchAll(Row.self, where: Column("id") > 19_990) == Array(stored[19_990...]))
            }
        }
    }

    /// Rows of very different sizes (a few bytes, then 256 KB each, then small again) stream
    /// through the cursor whole: batches follow the size of the rows they read.
    @Test func rowsOfEverySizeStreamThroughTheCursor() throws {
        try withStore("cursor-wide") { store, _ in
            func payload(_ id: Int) -> Data {
                let size = (100..<200).contains(id) ? 256 << 10 : id % 17
                return Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ id) })
            }
            let rows = (0..<600).map { id in
                Wide(
                    id: Int64(id),
                    name: String(repeating: "é", count: id % 40),
                    payload: payload(id),
                    ratio: id % 3 == 0 ? nil : Double(id) / 8
                )
            }
            try store.save(contentsOf: rows)
            #expect(try store.fetchAll(Wide.self) == rows)
            var streamed = 0
            try store.forEach(Wide.self) { row in
                #expect(row == rows[streamed])
                streamed += 1
            }
            #expect(streamed == rows.count)
        }
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
