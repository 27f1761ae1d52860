import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Write transactions that keep conflicting run alone (`Configuration.runAloneAfter`) and
/// commit.
@Suite(.dedicatedThreads) struct PostgreSQLConflictTests {
    struct Counter: Codable, Equatable {
        var id: Int64
        var value: Int
    }

    /// A private server with room for few serializable transactions (`max_connections = 20`):
    /// `SERIALIZABLE` keeps every committed transaction that overlapped one still running, and
    /// once that room is full it summarizes the oldest, after which a read of a row they wrote
    /// fails whatever ran concurrently. Calls `body` with the server's URL.
    static func withSmallServer(_ name: String, _ body: (String) throws -> Void) throws {
        try TemporaryDirectory.with(name) { directory in
            let folder = directory.appendingPathComponent("server").path
            let first = try PostgreSQLTestServer.run(["start", folder]).trimmingCharacters(in: .whitespacesAndNewlines)
            defer { _ = try? PostgreSQLTestServer.run(["stop", folder]) }
            try RawConnection(first).execute("ALTER SYSTEM SET max_connections = 20")
            _ = try PostgreSQLTestServer.run(["stop", folder])
            let url = try PostgreSQLTestServer.run(["start", folder]).trimmingCharacters(in: .whitespacesAndNewlines)
            try body(url)
        }
    }

    /// While a serializable transaction that wrote stays open (a long bulk load, say) and
    /// hundreds of others commit meanwhile, every `SERIALIZABLE` read-modify-write of rows
    /// written by the summarized ones fails, however often it runs again. Such transactions run
    /// again alone after `runAloneAfter` failures and commit, each increment counted once.
    @Test func transactionsThatKeepConflictingRunAloneAndCommit() throws {
        try Self.withSmallServer("postgres-conflicts") { url in
            let store = ObjectStore(
                backend: try PostgreSQLStorageBackend(
                    url: url,
                    configuration: .init(retryLimit: 12, runAloneAfter: 3, observesOtherProcesses: false)
                )
            )
            try store.save(contentsOf: (1...3).map { Counter(id: $0, value: 0) })
            let setUp = try RawConnection(url)
            try setUp.execute("CREATE TABLE held (n int); CREATE TABLE flood (n int)")
            let held = try RawConnection(url)
            try held.execute("BEGIN ISOLATION LEVEL SERIALIZABLE; INSERT INTO held VALUES (1)")
            // Transactions that read the counters and write them, then hundreds more that push
            // them out of the server's room into its summary.
            for round in 1...2 {
                try store.transaction { tx in
                    #expect(try tx.count(Counter.self) == 3)
                    try tx.save(contentsOf: (1...3).map { Counter(id: $0, value: round) })
                }
            }
            for n in 0..<600 {
                try setUp.execute("BEGIN ISOLATION LEVEL SERIALIZABLE; INSERT INTO flood VALUES (\(n)); COMMIT")
            }

            let runs = Locked(0)
            for _ in 0..<5 {
                try store.transaction { tx in
                    runs.withLock { $0 += 1 }
                    #expect(try tx.count(Counter.self) == 3)
                    var counter = try #require(try tx.fetch(Counter.self, id: 1))
                    counter.value += 1
                    try tx.save(counter)
                    try tx.save(Counter(id: 2, value: counter.value))
                }
            }
            try held.execute("COMMIT")
            #expect(try store.fetch(Counter.self, id: 1) == Counter(id: 1, value: 7))
            #expect(try store.fetch(Counter.self, id: 2) == Counter(id: 2, value: 7))
            // The conflicts happened: the transactions ran more often than they committed.
            #expect(runs.withLock { $0 } > 5)
        }
    }

    /// A transaction running alone waits for the write transaction running: its snapshot then
    /// holds that one's commit, so it reads what that one wrote (at `REPEATABLE READ`, with no
    /// wait, it would read the row as it was and write beside it: a write skew).
    @Test func aTransactionRunningAloneWaitsForTheWritersAroundIt() throws {
        try withStore("alone") { store, path in
            let alone = try PostgreSQLTestServer.openStore(
                path: path,
                configuration: .init(poolSize: 1, runAloneAfter: 0, observesOtherProcesses: false)
            )
            try store.save(contentsOf: [Counter(id: 1, value: 0), Counter(id: 2, value: 0)])
            let inside = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let writer = Thread {
                try? store.transaction { tx in
                    _ = try tx.count(Counter.self)  // sends the BEGIN and the lock
                    try tx.save(Counter(id: 1, value: 10))
                    inside.signal()
                    release.wait()
                }
            }
            writer.start()
            inside.wait()
            let seen = Locked<Int?>(nil)
            let finished = DispatchSemaphore(value: 0)
            let aloneThread = Thread {
                try? alone.transaction { tx in
                    // Reads row 1 and writes row 2: a write skew unless it follows the writer.
                    let first = try tx.fetch(Counter.self, id: 1)?.value ?? -1
                    try tx.save(Counter(id: 2, value: first + 1))
                    seen.withLock { $0 = first }
                }
                finished.signal()
            }
            aloneThread.start()
            let watcher = try RawConnection(try PostgreSQLTestServer.url())
            let schema = PostgreSQLTestServer.schema(for: path)
            let waiting = {
                try watcher.execute(
                    "SELECT a.query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
                        + " WHERE NOT l.granted AND l.relation = to_regclass('\"\(schema)\".\"storage$catalog\"')"
                )
            }
            #expect(try PostgreSQLObservationTests.eventually { try waiting().count == 1 })
            #expect(try waiting().first?.contains("IN EXCLUSIVE MODE") == true)
            #expect(finished.wait(timeout: .now() + 0.3) == .timedOut, "it ran beside a write transaction")
            release.signal()
            #expect(finished.wait(timeout: .now() + 30) == .success)
            #expect(seen.withLock { $0 } == 10)
            #expect(try store.fetch(Counter.self, id: 2) == Counter(id: 2, value: 11))
        }
    }

    /// With `runAloneAfter: .max` (for engines without `LOCK TABLE`) a write transaction takes
    /// no lock on the catalog table: it commits while another session holds that table in
    /// `EXCLUSIVE` mode, which a default store's write transaction waits for.
    @Test func withoutRunningAloneWritesTakeNoLock() throws {
        try withStore("no-alone") { store, path in
            let lockless = try PostgreSQLTestServer.openStore(
                path: path,
                configuration: .init(poolSize: 1, runAloneAfter: .max, observesOtherProcesses: false)
            )
            try store.save(Counter(id: 1, value: 0))
            let holder = try RawConnection(try PostgreSQLTestServer.url())
            let schema = PostgreSQLTestServer.schema(for: path)
            try holder.execute("BEGIN; LOCK TABLE \"\(schema)\".\"storage$catalog\" IN EXCLUSIVE MODE")
            let committed = DispatchSemaphore(value: 0)
            Thread {
                try? lockless.transaction { tx in
                    _ = try tx.count(Counter.self)
                    try tx.save(Counter(id: 2, value: 0))
                }
                committed.signal()
            }.start()
            let lockFree = committed.wait(timeout: .now() + 10) == .success
            #expect(lockFree, "a write without running alone waited for the catalog table's lock")
            let finished = DispatchSemaphore(value: 0)
            let waiting = Thread {
                try? store.transaction { tx in
                    _ = try tx.count(Counter.self)  // not a single save, which takes no lock
                    try tx.save(Counter(id: 3, value: 0))
                }
                finished.signal()
            }
            waiting.start()
            #expect(finished.wait(timeout: .now() + 0.3) == .timedOut, "a default write took no lock")
            try holder.execute("COMMIT")
            #expect(finished.wait(timeout: .now() + 30) == .success)
            if !lockFree { committed.wait() }
            #expect(try store.count(Counter.self) == 3)
        }
    }
}
