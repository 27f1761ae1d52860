import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// A down server, a crash of the server in the middle of commits, a statement timeout.
@Suite(.dedicatedThreads) struct PostgreSQLFaultTests {
    struct Entry: Codable, Equatable {
        var id: Int64
        var text: String
    }

    /// Nothing listens on the port: the open fails at once with `.unavailable`, naming the host
    /// and port, and never showing the password of the URL.
    @Test func aServerThatIsDownFailsTheOpenNamingHostAndPortButNotThePassword() throws {
        let port = try freePort()
        let started = ContinuousClock.now
        let error = expectStorageError(.unavailable) {
            _ = try PostgreSQLStorageBackend(
                url: "postgresql://app:s3cret-Passw0rd@127.0.0.1:\(port)/app",
                configuration: .init(connectTimeout: .seconds(2))
            )
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(error?.message.contains("127.0.0.1:\(port)") == true, "\(String(describing: error))")
        #expect(error.map { "\($0)" }?.contains("s3cret-Passw0rd") == false)
        #expect(error.map { $0.localizedDescription }?.contains("s3cret-Passw0rd") == false)
    }

    /// A server that accepts the TCP connection but never answers: the open gives up after the
    /// connect timeout with `.unavailable`, instead of hanging.
    @Test func aServerThatNeverAnswersFailsTheOpenWithinTheConnectTimeout() throws {
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
        let port = UInt16(bigEndian: address.sin_port)
        let started = ContinuousClock.now
        let error = expectStorageError(.unavailable) {
            _ = try PostgreSQLStorageBackend(
                url: "host=127.0.0.1 port=\(port) user=app password=hidden-word dbname=app",
                configuration: .init(connectTimeout: .seconds(2))
            )
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .seconds(1) && elapsed < .seconds(8), "\(elapsed)")
        #expect(error?.message.contains("127.0.0.1:\(port)") == true, "\(String(describing: error))")
        #expect(error.map { "\($0)" }?.contains("hidden-word") == false)
    }

    /// A statement that waits longer than the statement timeout (here for a lock another
    /// connection holds) fails with `.timedOut`, and its transaction leaves nothing.
    @Test func aStatementTimeoutIsATypedErrorAndRollsBack() throws {
        try withStore("timeout", configuration: .init(poolSize: 1, statementTimeout: .milliseconds(300))) {
            store,
            path in
            try store.save(Entry(id: 1, text: "before"))
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            let table = "\"\(PostgreSQLTestServer.schema(for: path))\".\"entry\""
            try raw.execute("BEGIN; LOCK TABLE \(table) IN ACCESS EXCLUSIVE MODE")
            let error = expectStorageError(.timedOut) {
                try store.transaction { tx in
                    try tx.save(Entry(id: 2, text: "during"))
                    _ = try tx.fetch(Entry.self, id: 1)
                }
            }
            #expect(error?.collection == "Entry" || error?.collection == "entry", "\(String(describing: error))")
            try raw.execute("ROLLBACK")
            #expect(try store.fetchAll(Entry.self) == [Entry(id: 1, text: "before")])
        }
    }

    /// The server ends the store's idle pooled connection (`pg_terminate_backend`), once after a
    /// read, whose commit's answer the connection has not read yet, and once after a write: the
    /// next read and the next write run on a new connection without an error, since their
    /// transaction never began on the server.
    @Test func aPooledConnectionTheServerEndedIsReplacedWithoutAnError() throws {
        try TemporaryDirectory.with("postgres-terminated") { directory in
            let cluster = directory.appendingPathComponent("cluster").path
            let url = try PostgreSQLTestServer.run(["start", cluster]).trimmingCharacters(in: .whitespacesAndNewlines)
            defer {
                _ = try? PostgreSQLTestServer.run(["stop", cluster])
            }
            let store = try ObjectStore(
                backend: .postgreSQL(url: url, configuration: .init(poolSize: 1, observesOtherProcesses: false))
            )
            let raw = try RawConnection(url)
            let terminate =
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'swift-storage'"
            // Writes run on a pool of primary connections of their own, reads on the main one
            // (see docs/POSTGRESQL.md): each of the two pools keeps one idle connection.
            try store.save(Entry(id: 1, text: "one"))
            #expect(try store.fetch(Entry.self, id: 1) == Entry(id: 1, text: "one"))
            #expect(try raw.execute(terminate) == ["2"])
            usleep(100_000)
            #expect(try store.fetch(Entry.self, id: 1) == Entry(id: 1, text: "one"))
            try store.save(Entry(id: 2, text: "two"))
            #expect(try raw.execute(terminate) == ["2"])
            usleep(100_000)
            try store.save(Entry(id: 3, text: "three"))
            #expect(try store.fetchAll(Entry.self).map(\.id).sorted() == [1, 2, 3])
        }
    }

    /// The server crashes (`pg_ctl stop -m immediate`) three times while three threads commit
    /// one record after another. Every commit acknowledged before a crash is there after the
    /// restart, every call that fails meanwhile fails with `.connectionLost` or `.unavailable`
    /// (a statement whose send failed as the server died included: libpq reports that one without
    /// a broken status), and the same store works again once the server is back, without being
    /// reopened.
    @Test func aServerCrashLosesNoAcknowledgedCommitAndTheStoreReconnects() throws {
        try TemporaryDirectory.with("postgres-crash") { directory in
            let cluster = directory.appendingPathComponent("cluster").path
            let url = try PostgreSQLTestServer.run(["start", cluster]).trimmingCharacters(in: .whitespacesAndNewlines)
            defer {
                _ = try? PostgreSQLTestServer.run(["stop", cluster])
            }
            let store = try ObjectStore(
                backend: .postgreSQL(url: url, configuration: .init(connectTimeout: .seconds(2)))
            )
            try store.save(Entry(id: 0, text: "seed"))
            let acknowledged = Locked<[Int64]>([])
            let failures = Locked<[StorageError.Code]>([])
            let others = Locked<[String]>([])
            let stop = Locked(false)
            let writers = 3
            let done = DispatchGroup()
            for writer in 0..<writers {
                done.enter()
                let thread = Thread {
                    var next = Int64(writer) * 1_000_000 + 1
                    while !stop.withLock({ $0 }) {
                        do {
                            try store.save(Entry(id: next, text: "entry \(next)"))
                            acknowledged.withLock { $0.append(next) }
                        } catch let error as StorageError {
                            failures.withLock { $0.append(error.code) }
                            if error.code != .connectionLost && error.code != .unavailable {
                                others.withLock { $0.append(error.description) }
                            }
                            usleep(20_000)
                        } catch {
                            others.withLock { $0.append("not a StorageError: \(error)") }
                        }
                        next += 1
                    }
                    done.leave()
                }
                thread.start()
            }
            for _ in 1...3 {
                let start = acknowledged.withLock { $0.count }
                while acknowledged.withLock({ $0.count }) < start + 50 { usleep(5_000) }
                let failed = failures.withLock { $0.count }
                try PostgreSQLTestServer.run(["crash", cluster])
                while failures.withLock({ $0.count }) < failed + 3 { usleep(5_000) }
                try PostgreSQLTestServer.run(["restart", cluster])
                let before = acknowledged.withLock { $0.count }
                let deadline = ContinuousClock.now + .seconds(30)
                while acknowledged.withLock({ $0.count }) < before + 20 && ContinuousClock.now < deadline {
                    usleep(5_000)
                }
                #expect(acknowledged.withLock { $0.count } >= before + 20, "the store did not reconnect")
            }
            stop.withLock { $0 = true }
            done.wait()

            // Every call in flight failed with a connection code, and with nothing else.
            #expect(!failures.withLock { $0 }.isEmpty)
            #expect(others.withLock { $0 }.isEmpty, "\(others.withLock { $0 })")
            let ids = Set(try store.fetchAll(Entry.self).map(\.id))
            let missing = acknowledged.withLock { $0 }.filter { !ids.contains($0) }
            #expect(missing.isEmpty, "acknowledged but lost: \(missing)")
        }
    }

    /// After `close()`, calls throw `.closed`, through the store and on the backend itself, as
    /// on every backend (the backend's own calls threw `.misuse`).
    @Test func callsAfterCloseThrowClosed() throws {
        try TemporaryDirectory.with("postgres-closed") { directory in
            let schema = PostgreSQLTestServer.schema(for: directory.path)
            let backend = try PostgreSQLStorageBackend(
                url: try PostgreSQLTestServer.url(),
                configuration: .init(schema: schema, observesOtherProcesses: false)
            )
            let store = ObjectStore(backend: backend)
            try store.save(Entry(id: 1, text: "before"))
            try store.close()
            expectStorageError(.closed) { _ = try store.fetchAll(Entry.self) }
            expectStorageError(.closed) { _ = try backend.read { try $0.schema(of: "Entry") } }
            expectStorageError(.closed) { _ = try backend.write { try $0.schema(of: "Entry") } }
        }
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then released).
func freePort() throws -> UInt16 {
    let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(probe) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    try withUnsafeMutablePointer(to: &address) { pointer in
        try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            guard bind(probe, socketAddress, length) == 0, getsockname(probe, socketAddress, &length) == 0 else {
                throw StorageError(.io, "cannot find a free port")
            }
        }
    }
    return UInt16(bigEndian: address.sin_port)
}
