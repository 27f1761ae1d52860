import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

@testable import PostgreSQLBackend

#if canImport(Glibc)
import Glibc
#endif

/// What a transaction does when its connection is lost: run again when it cannot have committed
/// (lost before its commit was sent, or on an idle connection the server had ended), and
/// `.connectionLost` saying the outcome is unknown when it may have; and the multi-host URLs of a
/// failover pair passed through to libpq.
@Suite(.dedicatedThreads) struct PostgreSQLLostConnectionTests {
    struct Parcel: Codable, Equatable {
        var id: Int64
        var weight: Int64
    }

    /// `url` with an `application_name` of its own, by which `pg_stat_activity` finds the
    /// store's sessions.
    static func url(_ url: String, applicationName: String) -> String {
        url + (url.contains("?") ? "&" : "?") + "application_name=" + applicationName
    }

    static func applicationName(_ label: String) -> String {
        "lost_" + label + "_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }

    /// Waits until `condition` holds, at most 30 seconds.
    static func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while try !condition() {
            guard ContinuousClock.now < deadline else { throw StorageError(.timedOut, "waited 30 s for " + what) }
            usleep(20_000)
        }
    }

    // MARK: Multi-host URLs

    @Test func aMultiHostURLNamesEachHostWithItsPort() throws {
        let uri = try PostgreSQLEndpoint(
            url: "postgresql://app@10.0.0.1:5433,10.0.0.2:5434/shop?target_session_attrs=read-write"
        )
        #expect(uri.server == "10.0.0.1:5433,10.0.0.2:5434")
        #expect(uri.description == "postgresql://app@10.0.0.1:5433,10.0.0.2:5434/shop")
        let pairs = try PostgreSQLEndpoint(url: "host=a,b port=7001,7002 dbname=shop target_session_attrs=primary")
        #expect(pairs.server == "a:7001,b:7002")
        #expect(try PostgreSQLEndpoint(url: "host=a,b port=7001").server == "a:7001,b:7001")
        #expect(try PostgreSQLEndpoint(url: "postgresql://a,b/shop").server == "a:5432,b:5432")
        #expect(try PostgreSQLEndpoint(url: "postgresql://db1/shop").server == "db1:5432")
        // libpq's values are checked before any connection.
        _ = expectStorageError(.cannotOpen) {
            _ = try PostgreSQLEndpoint(url: "postgresql://a,b/shop?target_session_attrs=primary-ish")
        }
    }

    /// The store opened on two hosts, the first one down, with `target_session_attrs`: libpq
    /// gets both and the attribute (a store asking for a standby of a server that is none is
    /// refused; one asking for read-write connects to the second host and writes).
    @Test func aStoreOnAMultiHostURLConnectsToTheHostThatIsPrimary() throws {
        guard let directory = try PostgreSQLTestServer.privateClusterDirectory() else { return }
        let port = try String(contentsOfFile: directory + "/port", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // A port on which nothing listens.
        let down = try Self.unusedPort()
        let hosts = "postgresql://127.0.0.1:\(down),127.0.0.1:\(port)/postgres?user=postgres"
        let schema = "lost_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let store = try ObjectStore(
            backend: .postgreSQL(
                url: hosts + "&target_session_attrs=read-write",
                configuration: .init(schema: schema, connectTimeout: .seconds(2))
            )
        )
        defer { try? store.close() }
        try store.save(Parcel(id: 1, weight: 3))
        #expect(try store.fetch(Parcel.self, id: 1) == Parcel(id: 1, weight: 3))
        let refused = expectStorageError(.unavailable) {
            _ = try PostgreSQLStorageBackend(
                url: hosts + "&target_session_attrs=standby",
                configuration: .init(schema: schema, connectTimeout: .seconds(2))
            )
        }
        #expect(
            refused?.message.contains("127.0.0.1:\(down),127.0.0.1:\(port)") == true,
            "\(String(describing: refused))"
        )
    }

    /// The first hosts accept the TCP connection and never answer (a machine gone, which
    /// refuses nothing, looks the same until the timeout): after the connect timeout the next
    /// host is tried, as libpq's own blocking connect does, and the store opens and writes there.
    /// Each connection of the store passes the silent hosts (twice the connect timeout): about
    /// 21 s alone. No time limit: every wait of it is bounded by the connect timeout and the
    /// hosts are finite, and a Swift Testing time limit also counts the wait for a thread of the
    /// cooperative pool before the body runs — the clean-clone CI of 2026-12-03 failed it at
    /// 300 s (342 s in all) while the other synchronous PostgreSQL tests held both threads, and
    /// once before at 206 s. The store opens no change listener, one connection fewer through
    /// the silent hosts. Not run under ThreadSanitizer: it checks the order hosts are tried in,
    /// which has no thread to race.
    @Test(.disabled(if: Sanitizers.thread, "wall-clock connect timeouts; runs in the plain suite"))
    func aHostThatNeverAnswersIsPassedOverForTheNext() throws {
        guard let directory = try PostgreSQLTestServer.privateClusterDirectory() else { return }
        let port = try String(contentsOfFile: directory + "/port", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                guard bind(listener, socketAddress, length) == 0, listen(listener, 8) == 0,
                    getsockname(listener, socketAddress, &length) == 0
                else { throw StorageError(.io, "cannot listen") }
            }
        }
        let silent = UInt16(bigEndian: address.sin_port)
        let started = ContinuousClock.now
        let store = try ObjectStore(
            backend: .postgreSQL(
                // The silent host twice: each round goes on from the host after the one that
                // timed out, not from the first of the same name.
                url: "postgresql://127.0.0.1:\(silent),127.0.0.1:\(silent),127.0.0.1:\(port)/postgres?user=postgres"
                    + "&target_session_attrs=read-write",
                configuration: .init(
                    schema: "lost_" + String(UInt32.random(in: 0...UInt32.max), radix: 16),
                    poolSize: 1,
                    connectTimeout: .seconds(5),
                    observesOtherProcesses: false
                )
            )
        )
        defer { try? store.close() }
        try store.save(Parcel(id: 1, weight: 5))
        #expect(try store.fetch(Parcel.self, id: 1)?.weight == 5)
        #expect(ContinuousClock.now - started >= .seconds(5))
    }

    static func unusedPort() throws -> Int {
        for _ in 0..<50 {
            let port = Int.random(in: 20_000..<60_000)
            if (try? RawConnection("host=127.0.0.1 port=\(port) connect_timeout=2")) == nil { return port }
        }
        throw StorageError(.unavailable, "no unused port found")
    }

    // MARK: Lost before the commit: run again

    /// The server ends the session of a write transaction after its first statement ran (and
    /// before its commit was sent): the transaction did not commit, and the store runs it again on
    /// a new connection, without an error.
    @Test func aWriteWhoseConnectionIsLostBeforeItsCommitRunsAgain() throws {
        try TemporaryDirectory.with("postgres-lost") { directory in
            let name = Self.applicationName("before")
            var configuration = PostgreSQLStorageBackend.Configuration(poolSize: 2)
            configuration.schema = PostgreSQLTestServer.schema(for: DiskBackend.postgresql.storePath(in: directory))
            let store = try ObjectStore(
                backend: .postgreSQL(
                    url: Self.url(try PostgreSQLTestServer.url(), applicationName: name),
                    configuration: configuration
                )
            )
            defer { try? store.close() }
            try store.save(Parcel(id: 1, weight: 10))
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            let runs = Locked(0)
            try store.transaction { tx in
                let run = runs.withLock { runs in
                    runs += 1
                    return runs
                }
                let parcel = try #require(try tx.fetch(Parcel.self, id: 1))
                if run == 1 {
                    // The first statement ran: the session is idle in its transaction. Ended.
                    try raw.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(name)'"
                            + " AND state = 'idle in transaction'"
                    )
                    try Self.waitUntil("the session to end") {
                        try raw.execute(
                            "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(name)'"
                                + " AND state = 'idle in transaction'"
                        ) == ["0"]
                    }
                }
                try tx.save(Parcel(id: 1, weight: parcel.weight + 1))
                try tx.save(Parcel(id: 2, weight: 1))
            }
            #expect(runs.withLock { $0 } == 2)
            #expect(try store.fetch(Parcel.self, id: 1)?.weight == 11)
            #expect(try store.fetch(Parcel.self, id: 2)?.weight == 1)
        }
    }

    // MARK: A server of the test's own

    /// A private cluster whose commits wait for a synchronous standby that never comes
    /// (`synchronous_standby_names = 'nobody'`) while `waiting` is on, so that a commit can be
    /// caught between being sent and being answered.
    static func withPrivateCluster(_ body: (_ url: String, _ raw: RawConnection) throws -> Void) throws {
        // The prefix of the tests' private clusters: one left by a killed test is swept.
        let directory = PostgreSQLTestServer.clusterParent()
            .appendingPathComponent("storage-postgres-" + UUID().uuidString).path
        defer {
            _ = try? PostgreSQLTestServer.run(["stop", directory])
            try? FileManager.default.removeItem(atPath: directory)
        }
        let url = try PostgreSQLTestServer.run(["start", directory]).trimmingCharacters(in: .whitespacesAndNewlines)
        try? String(getpid()).write(toFile: directory + "/owner", atomically: true, encoding: .utf8)
        try body(url, try RawConnection(url))
    }

    static func waitForStandby(_ on: Bool, raw: RawConnection) throws {
        try raw.execute("ALTER SYSTEM SET synchronous_standby_names = '\(on ? "nobody" : "")'")
        try raw.execute("SELECT pg_reload_conf()")
        try waitUntil("the setting to apply") {
            try raw.execute("SHOW synchronous_standby_names") == [on ? "nobody" : ""]
        }
    }

    /// The server ends the session while a commit waits for its answer (here: for a synchronous
    /// standby; a primary lost at that moment is the same to the client): the transaction has
    /// committed locally, and the store says the outcome is unknown (`.connectionLost`) instead of
    /// running it again — a read-modify-write run again would apply twice. The same for a single
    /// saved record, one statement that commits on its own.
    @Test func aCommitWhoseAnswerIsLostIsNotRunAgain() throws {
        try Self.withPrivateCluster { url, raw in
            let name = Self.applicationName("after")
            let store = try ObjectStore(
                backend: .postgreSQL(url: Self.url(url, applicationName: name), configuration: .init(schema: "lost"))
            )
            defer { try? store.close() }
            try store.save(Parcel(id: 1, weight: 10))
            try Self.waitForStandby(true, raw: raw)
            for single in [false, true] {
                let runs = Locked(0)
                let outcome = Locked<StorageError?>(nil)
                let thread = Thread {
                    do {
                        if single {
                            runs.withLock { $0 += 1 }
                            try store.save(Parcel(id: 3, weight: 1))
                        } else {
                            try store.transaction { tx in
                                runs.withLock { $0 += 1 }
                                let parcel = try tx.fetch(Parcel.self, id: 1)
                                try tx.save(Parcel(id: 1, weight: (parcel?.weight ?? 0) + 1))
                                try tx.save(Parcel(id: 2, weight: 1))
                            }
                        }
                    } catch {
                        outcome.withLock { $0 = error as? StorageError }
                    }
                }
                thread.start()
                try Self.waitUntil("the commit to wait for the standby") {
                    try raw.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(name)'"
                            + " AND wait_event = 'SyncRep'"
                    ).contains("t")
                }
                try Self.waitUntil("the transaction to end") { outcome.withLock { $0 } != nil }
                let error = try #require(outcome.withLock { $0 })
                #expect(error.code == .connectionLost, "\(error)")
                #expect(error.message.contains("may or may not have committed"), "\(error)")
                #expect(runs.withLock { $0 } == 1)
            }
            try Self.waitForStandby(false, raw: raw)
            // Both committed locally before the session ended: run again, the increment would
            // have been applied twice.
            #expect(try store.fetch(Parcel.self, id: 1)?.weight == 11)
            #expect(try store.fetch(Parcel.self, id: 2)?.weight == 1)
            #expect(try store.fetch(Parcel.self, id: 3)?.weight == 1)
        }
    }

    /// The server process of a pooled, idle connection is killed (SIGKILL: it says nothing, and
    /// the server restarts): the next single save, one statement that commits on its own, gets
    /// a new connection instead of being sent on the dead one, where its outcome could only be
    /// unknown.
    @Test func anIdleConnectionWhoseServerProcessWasKilledIsNotHandedOut() throws {
        try Self.withPrivateCluster { url, raw in
            let name = Self.applicationName("idle")
            // `reconnectTimeout`: the server may still be recovering when the next save runs (a
            // connection made just after the kill can be one the server then resets; CI saw
            // 57P03, "in recovery mode"), which a store waits out as it waits out a failover.
            let store = try ObjectStore(
                backend: .postgreSQL(
                    url: Self.url(url, applicationName: name),
                    configuration: .init(schema: "idle", reconnectTimeout: .seconds(60))
                )
            )
            defer { try? store.close() }
            // The first save makes the collection (a transaction); the second is one statement.
            try store.save(Parcel(id: 1, weight: 1))
            try store.save(Parcel(id: 1, weight: 2))
            let pids = try raw.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = '\(name)' AND query LIKE 'INSERT%'"
            )
            let sessions = try raw.execute(
                "SELECT pid || ' ' || left(query, 40) FROM pg_stat_activity WHERE application_name = '\(name)'"
            )
            let pid = try #require(pids.first.flatMap { pid_t($0) }, "\(sessions)")
            #expect(kill(pid, SIGKILL) == 0)
            // The server restarts every session after a server process died.
            var fresh: RawConnection?
            try Self.waitUntil("the server to restart") {
                fresh = try? RawConnection(url)
                return (try? fresh?.execute("SELECT 1")) == ["1"]
            }
            try store.save(Parcel(id: 2, weight: 2))
            #expect(try store.fetch(Parcel.self, id: 2)?.weight == 2)
        }
    }
}
