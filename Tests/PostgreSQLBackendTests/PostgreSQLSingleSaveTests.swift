import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// A transaction of one saved record runs as one statement on its own (the upsert and the change
/// record in one data-modifying `WITH`, no `BEGIN` and no `COMMIT`), and the change feed stays
/// exact and in commit order.
@Suite struct PostgreSQLSingleSaveTests {
    struct Member: Codable, Equatable, StorableModel {
        static let indexes: [IndexDefinition] = [.init(["email"], unique: true)]
        var id: Int64
        var email: String
        var rank: Int
    }

    /// The advisory lock key that orders the change rows of the store in `schema` (as the backend
    /// makes it: FNV-1a of `changes:` and the schema).
    static func changeLockKey(schema: String) -> Int64 { advisoryLockKey("changes", schema: schema) }

    /// While another session holds the change lock, a single save waits for it in one statement
    /// holding both the upsert and the change record, which has already upserted the record (its
    /// row is locked): a save never waits for a row while holding the change lock, and its
    /// change row gets its id only once the lock is its own, so ids follow commit order. Once the
    /// lock is released the save commits and another store sees it.
    @Test func aSingleSaveIsOneStatementThatTakesTheChangeLockAfterItsUpsert() async throws {
        try await withStoreAsync("single-save") { store, path in
            let observer = try PostgreSQLTestServer.openStore(path: path)
            let changes = observer.changes(of: Member.self)
            try await store.save(Member(id: 1, email: "one@example.org", rank: 1))
            let schema = PostgreSQLTestServer.schema(for: path)
            let holder = try RawConnection(try PostgreSQLTestServer.url())
            try holder.execute("BEGIN")
            try holder.execute("SELECT pg_advisory_xact_lock(\(Self.changeLockKey(schema: schema)))")
            let failure = Locked<String?>(nil)
            let done = DispatchSemaphore(value: 0)
            let saving = Thread {
                do {
                    try store.save(Member(id: 1, email: "changed@example.org", rank: 2))
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
                done.signal()
            }
            saving.start()
            let watcher = try RawConnection(try PostgreSQLTestServer.url())
            let key = Self.changeLockKey(schema: schema)
            #expect(try PostgreSQLObservationTests.eventually { try advisoryLockWaiters(key, on: watcher).count == 1 })
            let statement = try advisoryLockWaiters(key, on: watcher).first ?? ""
            #expect(statement.hasPrefix("WITH w AS (INSERT INTO \"\(schema)\".\"member\""), "\(statement)")
            #expect(statement.contains("\"storage$changes\""), "\(statement)")
            // The upsert has run: the record's row is locked by the waiting save.
            #expect(throws: StorageError.self) {
                try watcher.execute("SELECT id FROM \"\(schema)\".\"member\" WHERE id = 1 FOR UPDATE NOWAIT")
            }
            try holder.execute("COMMIT")
            done.wait()
            #expect(failure.withLock { $0 } == nil)
            var received: [CollectionChange] = []
            for await change in changes {
                received.append(change)
                if received.count == 2 { break }
            }
            #expect(received.map(\.upserted) == [[.integer(1)], [.integer(1)]])
            #expect(try await store.fetch(Member.self, id: 1)?.rank == 2)
        }
    }

    /// The unobserved single save names the listener count's sequence as a constant (quoted as
    /// an `E'…'` literal): in a schema whose name holds a quote, backslashes (one before an `n`,
    /// a newline in a literal quoted naively), a double quote and a `$`, single saves work while
    /// nobody listens and, once another store listens, reach it.
    @Test func aSchemaNameWithQuotesAndBackslashesKeepsSingleSavesWorking() async throws {
        let schema = "o'brien\\\\\\n\"q$" + PostgreSQLTestServer.schema(for: "hostile-\(UUID().uuidString)").suffix(10)
        let raw = try RawConnection(try PostgreSQLTestServer.url())
        defer { _ = try? raw.execute("DROP SCHEMA IF EXISTS " + quoted(schema) + " CASCADE") }
        func open() throws -> ObjectStore {
            let configuration = PostgreSQLStorageBackend.Configuration(schema: schema, poolSize: 1)
            return try ObjectStore(
                backend: .postgreSQL(url: try PostgreSQLTestServer.url(), configuration: configuration)
            )
        }
        let store = try open()
        for id in 1...3 { try await store.save(Member(id: Int64(id), email: "\(id)@example.org", rank: id)) }
        #expect(
            try raw.execute("SELECT count(*) FROM " + quoted(schema) + ".\"storage$changes\"") == ["0"]
        )
        let observer = try open()
        let changes = observer.changes(of: Member.self)
        try await store.save(Member(id: 4, email: "4@example.org", rank: 4))
        for await change in changes {
            #expect(change.upserted == [.integer(4)])
            break
        }
        #expect(try await observer.fetchAll(Member.self).map(\.id) == [1, 2, 3, 4])
    }

    /// `name` as a quoted identifier.
    private func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// A single save that violates a unique index fails with `.constraintViolation` and leaves
    /// neither its record nor a change row; the saves around it are recorded once each, in order.
    @Test func aUniqueViolationOnTheSingleStatementPathLeavesNoChange() async throws {
        try await withStoreAsync("single-unique") { store, path in
            let observer = try PostgreSQLTestServer.openStore(path: path)
            let changes = observer.changes(of: Member.self)
            try await store.save(Member(id: 1, email: "one@example.org", rank: 1))
            try await store.save(Member(id: 2, email: "two@example.org", rank: 1))
            do {
                try await store.save(Member(id: 3, email: "one@example.org", rank: 1))
                Issue.record("a duplicate email was saved")
            } catch let error as StorageError {
                #expect(error.code == .constraintViolation, "\(error)")
            }
            try await store.save(Member(id: 4, email: "four@example.org", rank: 1))
            var received: [CollectionChange] = []
            for await change in changes {
                received.append(change)
                if received.count == 3 { break }
            }
            #expect(received.map(\.upserted) == [[.integer(1)], [.integer(2)], [.integer(4)]])
            #expect(try await store.fetch(Member.self, id: 3) == nil)
        }
    }

    /// Four stores save single records of the same few keys at once (serializable conflicts are
    /// run again): every save is recorded once, as a change of its one key, and another store
    /// receives each of them; each key ends with one writer's last value.
    @Test func concurrentSingleSavesAreEachRecordedOnce() async throws {
        try await withStoreAsync("single-concurrent") { first, path in
            let observer = try PostgreSQLTestServer.openStore(path: path)
            let changes = observer.changes(of: Member.self)
            try await first.save(Member(id: 0, email: "0-setup", rank: 0))
            var quiet = PostgreSQLStorageBackend.Configuration(poolSize: 2)
            quiet.observesOtherProcesses = false
            let writers = try (0..<4).map { _ in try PostgreSQLTestServer.openStore(path: path, configuration: quiet) }
            let perWriter = 40
            let failures = Locked<[String]>([])
            let group = DispatchGroup()
            for (number, writer) in writers.enumerated() {
                group.enter()
                Thread {
                    for round in 0..<perWriter {
                        let id = Int64(round % 5)
                        do {
                            try writer.save(Member(id: id, email: "\(id)-\(number)-\(round)", rank: round))
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                    group.leave()
                }.start()
            }
            group.wait()
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
            let total = writers.count * perWriter
            var received: [CollectionChange] = []
            for await change in changes {
                received.append(change)
                if received.count == total + 1 { break }
            }
            #expect(received.allSatisfy { $0.upserted.count == 1 && $0.deleted.isEmpty })
            let counts = Dictionary(grouping: received.dropFirst().flatMap(\.upserted), by: { $0 }).mapValues(\.count)
            #expect(counts == [.integer(0): 32, .integer(1): 32, .integer(2): 32, .integer(3): 32, .integer(4): 32])
            for id in Int64(0)..<5 {
                let rank = try await first.fetch(Member.self, id: id)?.rank ?? -1
                #expect(rank >= perWriter - 5, "key \(id) ends with rank \(rank)")
            }
        }
    }
}
