import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Commits record their changes (a row of `storage$changes`, a lock, a `NOTIFY`) only while some
/// store listens: the count in `storage$observed` says whether one does, and listeners change it
/// under a lock that orders them against the writers, so no listener misses a commit made after
/// its `changes(of:)` returned.
@Suite struct PostgreSQLChangeRecordingTests {
    struct Item: Codable, Equatable {
        var id: Int64
        var text: String
    }

    /// The quoted schema of the store at `path`.
    static func schema(_ path: String) -> String { "\"\(PostgreSQLTestServer.schema(for: path))\"" }

    /// How many change rows were ever recorded in the store at `path`: the newest row's id (ids
    /// count from 1, and a pruning, which a listener runs every few seconds, always keeps the
    /// newest row), 0 when none was.
    static func changeRowsRecorded(_ raw: RawConnection, _ path: String) throws -> Int {
        Int(try raw.execute("SELECT coalesce(max(id), 0) FROM \(schema(path)).\"storage$changes\"").first ?? "") ?? -1
    }

    /// The listener count writers read.
    static func listenerCount(_ raw: RawConnection, _ path: String) throws -> String {
        try raw.execute("SELECT pg_sequence_last_value('\(schema(path)).\"storage$observed\"'::regclass)").first ?? ""
    }

    /// The observer lock key of the store at `path` (as the backend makes it: FNV-1a of
    /// `observe:` and the schema).
    static func observeLockKey(_ path: String) -> Int64 {
        advisoryLockKey("observe", schema: PostgreSQLTestServer.schema(for: path))
    }

    /// Opens another store on `path` with a small pool.
    static func open(_ path: String, observing: Bool = true) throws -> ObjectStore {
        var configuration = PostgreSQLStorageBackend.Configuration(poolSize: 2)
        configuration.observesOtherProcesses = observing
        return try PostgreSQLTestServer.openStore(path: path, configuration: configuration)
    }

    /// Waits for `count` keys from `changes`, for at most `seconds`; returns those received.
    static func collect(
        _ changes: AsyncStream<CollectionChange>,
        count: Int,
        seconds: Int = 20
    ) async -> [StorageValue] {
        let received = Locked<[StorageValue]>([])
        let reader = Task {
            for await change in changes {
                let total = received.withLock { keys in
                    keys += change.upserted
                    return keys.count
                }
                if total >= count { break }
            }
        }
        let deadline = ContinuousClock.now + .seconds(seconds)
        while received.withLock({ $0.count }) < count && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        reader.cancel()
        return received.withLock { $0 }
    }

    /// With no store listening, single saves and transactions leave no change row and the count
    /// is 0; while a store listens, each commit is recorded and delivered; once its listener has
    /// stopped (`close()`), commits record nothing again.
    @Test func commitsRecordTheirChangesOnlyWhileAStoreListens() async throws {
        try await withStoreAsync("record-only-observed") { writer, path in
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            for id in 0..<10 { try await writer.save(Item(id: Int64(id), text: "unobserved \(id)")) }
            try await writer.transaction { tx in
                try tx.save(Item(id: 100, text: "a"))
                try tx.save(Item(id: 101, text: "b"))
                _ = try tx.delete(Item.self, id: 0)
            }
            #expect(try Self.changeRowsRecorded(raw, path) == 0)
            #expect(try Self.listenerCount(raw, path) == "0")

            let observer = try Self.open(path)
            let changes = observer.changes(of: Item.self)
            #expect(try Self.listenerCount(raw, path) == "1")
            for id in 10..<15 { try await writer.save(Item(id: Int64(id), text: "observed \(id)")) }
            try await writer.transaction { tx in
                try tx.save(Item(id: 102, text: "c"))
                try tx.save(Item(id: 103, text: "d"))
            }
            #expect(try Self.changeRowsRecorded(raw, path) == 6)
            let received = await Self.collect(changes, count: 7)
            #expect(received == (10..<15).map { .integer(Int64($0)) } + [.integer(102), .integer(103)])

            try await observer.close()
            // The listener's thread stops within half a second, and then no longer counts.
            #expect(try PostgreSQLObservationTests.eventually { try Self.listenerCount(raw, path) == "0" })
            for id in 15..<20 { try await writer.save(Item(id: Int64(id), text: "closed \(id)")) }
            _ = try await writer.transaction { tx in try tx.save(Item(id: 104, text: "e")) }
            #expect(try Self.changeRowsRecorded(raw, path) == 6)
        }
    }

    /// Three stores start observing while four threads commit new keys non-stop (single saves and
    /// two-record transactions). Every key committed is, for each observer, either in its first
    /// read after `changes(of:)` returned or in its stream: a commit that recorded nothing
    /// because it read the count before the observer registered committed before the observer's
    /// read.
    @Test func storesThatStartObservingWhileWritersCommitMissNothing() async throws {
        try await withStoreAsync("record-race") { setup, path in
            try await setup.save(Item(id: -1, text: "setup"))
            let writers = try (0..<4).map { _ in try Self.open(path, observing: false) }
            let stop = Locked(false)
            let written = Locked<Set<Int64>>([])
            let failures = Locked<[String]>([])
            let group = DispatchGroup()
            for (number, writer) in writers.enumerated() {
                group.enter()
                Thread {
                    var next = Int64(number) * 1_000_000
                    while !stop.withLock({ $0 }) {
                        do {
                            if next % 3 == 0 {
                                try writer.transaction { tx in
                                    try tx.save(Item(id: next, text: "t"))
                                    try tx.save(Item(id: next + 1, text: "t"))
                                }
                                written.withLock { $0.formUnion([next, next + 1]) }
                                next += 2
                            } else {
                                try writer.save(Item(id: next, text: "s"))
                                written.withLock { _ = $0.insert(next) }
                                next += 1
                            }
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                    group.leave()
                }.start()
            }
            var observers: [(store: ObjectStore, changes: AsyncStream<CollectionChange>, first: Set<Int64>)] = []
            for _ in 0..<3 {
                try await Task.sleep(for: .milliseconds(Int.random(in: 50...250)))
                let observer = try Self.open(path)
                let changes = observer.changes(of: Item.self)
                let first = Set(try await observer.fetchAll(Item.self).map(\.id))
                observers.append((observer, changes, first))
            }
            try await Task.sleep(for: .milliseconds(200))
            stop.withLock { $0 = true }
            group.wait()
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
            try await setup.save(Item(id: -2, text: "last"))
            let all = written.withLock { $0 }
            #expect(all.count > 100, "the writers committed only \(all.count) keys")
            for (number, observer) in observers.enumerated() {
                // Everything the stream may hold, up to the last save, which comes last.
                let streamed = Locked<Set<Int64>>([])
                let reader = Task {
                    for await change in observer.changes {
                        let keys = change.upserted.compactMap { key -> Int64? in
                            if case .integer(let id) = key { return id }
                            return nil
                        }
                        streamed.withLock { $0.formUnion(keys) }
                        if keys.contains(-2) { break }
                    }
                }
                let deadline = ContinuousClock.now + .seconds(30)
                while !streamed.withLock({ $0.contains(-2) }) && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                reader.cancel()
                let missed = all.subtracting(observer.first).subtracting(streamed.withLock { $0 })
                #expect(
                    missed.isEmpty,
                    "observer \(number) missed \(missed.count) keys, e.g. \(missed.sorted().prefix(5))"
                )
                try await observer.store.close()
            }
        }
    }

    /// A listener whose connection lives is never pruned as gone, however long it was silent:
    /// here its row is made an hour old, and a writer whose retention is 100 ms prunes (at its
    /// 256th recorded commit). The listener keeps its row and the count, and receives every
    /// commit made after that pruning.
    @Test func aConnectedListenerIsNotPrunedHoweverLongItWasSilent() async throws {
        try await withStoreAsync("record-live-listener") { _, path in
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            let observer = try Self.open(path)
            let changes = observer.changes(of: Item.self)
            var configuration = PostgreSQLStorageBackend.Configuration(poolSize: 2, changeRetention: .milliseconds(100))
            configuration.observesOtherProcesses = false
            let writer = try PostgreSQLTestServer.openStore(path: path, configuration: configuration)
            try raw.execute(
                "UPDATE \(Self.schema(path)).\"storage$listeners\" SET seen_at = now() - interval '1 hour'"
            )
            for id in 0..<300 { try await writer.save(Item(id: Int64(id), text: "item \(id)")) }
            #expect(try raw.execute("SELECT count(*) FROM \(Self.schema(path)).\"storage$listeners\"") == ["1"])
            #expect(try Self.listenerCount(raw, path) == "1")
            let received = await Self.collect(changes, count: 300)
            #expect(received == (0..<300).map { .integer(Int64($0)) })
        }
    }

    /// A store's first observation registers its listener under the observer lock: while a
    /// writer holds that lock shared (here a raw session, as a writer between its count read and
    /// its commit), `changes(of:)` does not return; once the writer committed, it does.
    @Test func aNewListenerWaitsForTheWritersThatReadTheCount() async throws {
        try await withStoreAsync("record-register-waits") { store, path in
            try await store.save(Item(id: 1, text: "one"))
            let writer = try RawConnection(try PostgreSQLTestServer.url())
            let watcher = try RawConnection(try PostgreSQLTestServer.url())
            try writer.execute("BEGIN")
            try writer.execute("SELECT pg_advisory_xact_lock_shared(\(Self.observeLockKey(path)))")
            let observer = try Self.open(path)
            let returned = Locked(false)
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = observer.changes(of: Item.self)
                returned.withLock { $0 = true }
                done.signal()
            }.start()
            #expect(
                try PostgreSQLObservationTests.eventually {
                    try !advisoryLockWaiters(Self.observeLockKey(path), on: watcher).isEmpty
                }
            )
            usleep(200_000)
            #expect(!returned.withLock { $0 })
            try writer.execute("COMMIT")
            done.wait()
            #expect(returned.withLock { $0 })
        }
    }

    /// A writer reads the count only once it holds the observer lock: a save made while a
    /// listener registers (here a raw session holding the lock, then adding a listener row and
    /// setting the count while the save waits) waits, and then records its change.
    @Test func aWriterReadsTheCountOnlyOnceItHoldsTheObserverLock() async throws {
        try await withStoreAsync("record-writer-waits") { store, path in
            try await store.save(Item(id: 1, text: "unrecorded"))
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            let registering = try RawConnection(try PostgreSQLTestServer.url())
            try registering.execute("BEGIN")
            try registering.execute("SELECT pg_advisory_xact_lock(\(Self.observeLockKey(path)))")
            let failure = Locked<String?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                do {
                    try store.save(Item(id: 2, text: "recorded"))
                    try store.transaction { tx in
                        try tx.save(Item(id: 3, text: "recorded"))
                        try tx.save(Item(id: 4, text: "recorded"))
                    }
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
                done.signal()
            }.start()
            #expect(
                try PostgreSQLObservationTests.eventually {
                    try !advisoryLockWaiters(Self.observeLockKey(path), on: raw).isEmpty
                }
            )
            // The count changes only now, while the save waits: a save that read it before taking
            // the lock would have read 0 and recorded nothing.
            try registering.execute(
                "INSERT INTO \(Self.schema(path)).\"storage$listeners\" VALUES ('elsewhere', 0, now())"
            )
            try registering.execute("SELECT setval('\(Self.schema(path)).\"storage$observed\"'::regclass, 1)")
            try registering.execute("COMMIT")
            done.wait()
            #expect(failure.withLock { $0 } == nil)
            #expect(
                try raw.execute("SELECT upserted FROM \(Self.schema(path)).\"storage$changes\" ORDER BY id")
                    == ["[\"i:2\"]", "[\"i:3\",\"i:4\"]"]
            )
        }
    }

    /// Keys saved in ascending order are recorded without hashing until one breaks the order;
    /// the change row still holds each key once, in first-touched order, a later delete winning.
    @Test func ascendingKeysThenRepeatsAreRecordedOnce() throws {
        try withStore("record-ascending") { store, path in
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            try raw.execute("INSERT INTO \(Self.schema(path)).\"storage$listeners\" VALUES ('elsewhere', 0, now())")
            try raw.execute("SELECT setval('\(Self.schema(path)).\"storage$observed\"'::regclass, 1)")
            try store.transaction { tx in
                try tx.save(contentsOf: (1...6).map { Item(id: Int64($0), text: "first") })
                try tx.save(contentsOf: [4, 8, 3].map { Item(id: Int64($0), text: "again") })
                _ = try tx.delete(Item.self, id: 2)
                try tx.save(Item(id: 7, text: "late"))
            }
            #expect(
                try raw.execute(
                    "SELECT upserted || ' ' || deleted FROM \(Self.schema(path)).\"storage$changes\" ORDER BY id"
                ) == ["[\"i:1\",\"i:3\",\"i:4\",\"i:5\",\"i:6\",\"i:8\",\"i:7\"] [\"i:2\"]"]
            )
            #expect(try store.count(Item.self) == 7)
        }
    }
}
