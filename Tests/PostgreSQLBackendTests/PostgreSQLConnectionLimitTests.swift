import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// `Configuration.maximumConnections` bounds every connection a store opens to the primary,
/// idle or in use, counted on the server (`pg_stat_activity`) as well as by the store; at the
/// limit a transaction waits `connectionTimeout` and then fails with `.busy` naming the limit.
@Suite struct PostgreSQLConnectionLimitTests {
    /// The tests' server URL with an `application_name` of its own, by which the server's
    /// `pg_stat_activity` tells this test's connections from everyone else's.
    static func url(applicationName: String) throws -> String {
        let url = try PostgreSQLTestServer.url()
        if url.hasPrefix("postgres") {
            return url + (url.contains("?") ? "&" : "?") + "application_name=" + applicationName
        }
        return url + " application_name=" + applicationName
    }

    static func backend(
        _ label: String,
        in directory: URL,
        configuration: PostgreSQLStorageBackend.Configuration
    ) throws -> (PostgreSQLStorageBackend, applicationName: String) {
        let name = "limit_" + label + "_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        var configuration = configuration
        configuration.schema = PostgreSQLTestServer.schema(for: DiskBackend.postgresql.storePath(in: directory))
        return (try PostgreSQLStorageBackend(url: url(applicationName: name), configuration: configuration), name)
    }

    /// The server's count of the connections with `applicationName`.
    static func serverCount(_ applicationName: String, on raw: RawConnection) throws -> Int {
        Int(
            try raw.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(applicationName)'"
            ).first ?? ""
        ) ?? -1
    }

    @Test func twoHundredThreadsOnAPoolOfSixteenNeverOpenASeventeenthConnection() throws {
        try TemporaryDirectory.with("postgres-limit") { directory in
            let (backend, name) = try Self.backend(
                "many",
                in: directory,
                configuration: .init(poolSize: 4, maximumConnections: 16, connectionTimeout: .seconds(60))
            )
            defer { backend.close() }
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            let done = Locked(false)
            let highest = Locked(0)
            // Samples the server's count while the threads run.
            let sampler = Thread {
                guard let raw = try? RawConnection(try PostgreSQLTestServer.url()) else { return }
                while !done.withLock({ $0 }) {
                    let count = (try? Self.serverCount(name, on: raw)) ?? 0
                    highest.withLock { $0 = max($0, count) }
                    usleep(1_000)
                }
            }
            sampler.start()
            let failures = Locked<[String]>([])
            let group = DispatchGroup()
            for _ in 0..<200 {
                group.enter()
                let thread = Thread {
                    defer { group.leave() }
                    for _ in 0..<3 {
                        do {
                            // A read holds its connection for the whole closure.
                            try backend.read { _ in _ = usleep(10_000) }
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
            group.wait()
            // One more sample after the last transaction, then the sampler stops.
            highest.withLock { $0 = max($0, (try? Self.serverCount(name, on: raw)) ?? 0) }
            done.withLock { $0 = true }
            #expect(failures.withLock { $0 }.isEmpty)
            let counts = backend.primaryConnectionCounts
            #expect(counts.peak == 16, "the store's own count of connections open at once")
            #expect(highest.withLock { $0 } <= 16, "the server's count of the store's connections")
            #expect(highest.withLock { $0 } > 1)
            // The surplus ones were closed at check-in: only the idle ones the pool keeps remain.
            #expect(counts.open <= 4)
        }
    }

    @Test func aTransactionAtTheLimitFailsWithBusyNamingIt() throws {
        try TemporaryDirectory.with("postgres-limit") { directory in
            let (backend, _) = try Self.backend(
                "busy",
                in: directory,
                configuration: .init(maximumConnections: 1, connectionTimeout: .milliseconds(200))
            )
            defer { backend.close() }
            let clock = ContinuousClock()
            var waited = Duration.zero
            let error = #expect(throws: StorageError.self) {
                try backend.read { _ in
                    // A nested read needs a second connection: the limit is one.
                    let start = clock.now
                    defer { waited = clock.now - start }
                    try backend.read { _ in }
                }
            }
            #expect(error?.code == .busy)
            #expect(error?.message.contains("maximumConnections") == true)
            #expect(error?.message.contains("all 1 connections") == true)
            #expect(error?.message.contains("200 ms") == true)
            #expect(waited >= .milliseconds(190))
            #expect(waited < .seconds(5))
            // The connection came back: the next transaction gets it.
            try backend.read { _ in }
            #expect(backend.primaryConnectionCounts.peak == 1)
        }
    }

    @Test func aWaitingTransactionGetsTheConnectionThatComesBack() throws {
        try TemporaryDirectory.with("postgres-limit") { directory in
            let (backend, _) = try Self.backend(
                "handover",
                in: directory,
                configuration: .init(maximumConnections: 1, connectionTimeout: .seconds(30))
            )
            defer { backend.close() }
            let holding = DispatchSemaphore(value: 0)
            let holder = Thread {
                try? backend.read { _ in
                    holding.signal()
                    usleep(300_000)
                }
            }
            holder.start()
            holding.wait()
            let start = ContinuousClock.now
            try backend.read { _ in }
            #expect(ContinuousClock.now - start >= .milliseconds(200))
            #expect(backend.primaryConnectionCounts.peak == 1)
        }
    }

    @Test func theWritePoolSharesThePrimarysLimit() throws {
        try TemporaryDirectory.with("postgres-limit") { directory in
            let (backend, _) = try Self.backend(
                "shared",
                in: directory,
                configuration: .init(maximumConnections: 1, connectionTimeout: .milliseconds(100))
            )
            defer { backend.close() }
            // A write transaction and a read inside it: two pools, one server, one connection.
            let error = #expect(throws: StorageError.self) {
                try backend.write { _ in try backend.read { _ in } }
            }
            #expect(error?.code == .busy)
            // An idle connection of one pool makes room for the other's.
            try backend.read { _ in }
            try backend.write { _ in }
            try backend.read { _ in }
            #expect(backend.primaryConnectionCounts.peak == 1)
        }
    }

    @Test func anInvalidLimitIsMisuse() throws {
        let error = #expect(throws: StorageError.self) {
            _ = try PostgreSQLStorageBackend(
                url: try PostgreSQLTestServer.url(),
                configuration: .init(maximumConnections: 0)
            )
        }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("maximumConnections") == true)
    }

    @Test func closeWaitsForTheListenerToStop() throws {
        try withStore("limit-listener") { store, path in
            let backend = try #require(store.backend as? PostgreSQLStorageBackend)
            backend.observeExternalCommits { _ in }
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            #expect(try PostgreSQLLazyListenerTests.listenerRows(raw, path: path) == 1)
            backend.close()
            // The listener removes its row as it stops: close() returned after that.
            #expect(try PostgreSQLLazyListenerTests.listenerRows(raw, path: path) == 0)
        }
    }
}
