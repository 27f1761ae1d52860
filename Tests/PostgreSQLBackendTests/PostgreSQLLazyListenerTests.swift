import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// A PostgreSQL store starts its change listener (its `LISTEN` connection and thread) only when
/// it is first observed: a change stream, a settings read that may be cached, a settings
/// subscription. A store that only writes and reads opens none.
@Suite struct PostgreSQLLazyListenerTests {
    struct Item: Codable, Equatable {
        var id: Int64
        var text: String
    }

    final class LazySettings: Settings, @unchecked Sendable {
        @Setting var theme = "light"
    }

    /// The listeners the server knows for the store at `path` (its `storage$listeners` rows): a
    /// started listener registers there before `observeExternalCommits` returns, and removes its
    /// row when it stops.
    static func listenerRows(_ raw: RawConnection, path: String) throws -> Int {
        let table = "\"\(PostgreSQLTestServer.schema(for: path))\".\"storage$listeners\""
        return Int(try raw.execute("SELECT count(*) FROM \(table)").first ?? "") ?? -1
    }

    /// How many listeners the store's backend has started.
    static func startedListeners(_ store: ObjectStore) -> Int {
        (store.backend as? PostgreSQLStorageBackend)?.startedListenerCount ?? -1
    }

    /// Opens the store for `path` with the tests' defaults and `configure` applied.
    static func open(
        _ path: String,
        _ configure: (inout PostgreSQLStorageBackend.Configuration) -> Void = { _ in }
    ) throws -> ObjectStore {
        var configuration = PostgreSQLStorageBackend.Configuration(poolSize: 2)
        configure(&configuration)
        return try PostgreSQLTestServer.openStore(path: path, configuration: configuration)
    }

    /// Runs `body` with a fresh store path and a raw connection to the tests' server.
    static func withPath<R>(_ label: String, _ body: (String, RawConnection) async throws -> R) async throws -> R {
        let directory = try TemporaryDirectory("postgres-\(label)")
        defer { directory.remove() }
        let raw = try RawConnection(try PostgreSQLTestServer.url())
        return try await body(DiskBackend.postgresql.storePath(in: directory.url), raw)
    }

    /// A store that saves, fetches and counts but is never observed starts no listener: the server
    /// has no listener row for it and the backend started none, also after it closed; a change
    /// stream asked for after `close()` starts none either.
    @Test func aStoreThatIsNeverObservedOpensNoListener() async throws {
        try await Self.withPath("lazy-none") { path, raw in
            let store = try Self.open(path)
            for id in 0..<20 { try await store.save(Item(id: Int64(id), text: "item \(id)")) }
            #expect(try await store.fetch(Item.self, id: 3) == Item(id: 3, text: "item 3"))
            #expect(try await store.count(Item.self) == 20)
            _ = try await store.transaction { tx in try tx.save(Item(id: 100, text: "in a transaction")) }
            #expect(try Self.listenerRows(raw, path: path) == 0)
            #expect(Self.startedListeners(store) == 0)
            #expect(!store.isObservingCommitsElsewhere)
            try await store.close()
            _ = store.changes(of: Item.self)
            #expect(Self.startedListeners(store) == 0)
            #expect(try Self.listenerRows(raw, path: path) == 0)
        }
    }

    /// The first change stream starts the listener before it returns: a commit another store
    /// makes right after arrives, in order and once; one made before the stream does not.
    @Test func aCommitRightAfterTheFirstSubscriptionIsDelivered() async throws {
        try await Self.withPath("lazy-first") { path, raw in
            let writer = try Self.open(path) { $0.observesOtherProcesses = false }
            let observer = try Self.open(path)
            try await writer.save(Item(id: 1, text: "before the stream"))
            #expect(try Self.listenerRows(raw, path: path) == 0)
            let changes = observer.changes(of: Item.self)
            #expect(try Self.listenerRows(raw, path: path) == 1)
            try await writer.save(Item(id: 2, text: "right after"))
            _ = try await writer.transaction { tx in
                try tx.save(Item(id: 3, text: "three"))
                try tx.save(Item(id: 4, text: "four"))
            }
            _ = try await writer.delete(Item.self, id: 2)
            var received: [CollectionChange] = []
            for await change in changes {
                received.append(change)
                if received.count == 3 { break }
            }
            #expect(
                received == [
                    CollectionChange(collection: "Item", upserted: [.integer(2)], deleted: []),
                    CollectionChange(collection: "Item", upserted: [.integer(3), .integer(4)], deleted: []),
                    CollectionChange(collection: "Item", upserted: [], deleted: [.integer(2)]),
                ]
            )
            // Nothing was delivered twice: the next change is the next commit.
            try await writer.save(Item(id: 5, text: "five"))
            for await change in changes {
                #expect(change == CollectionChange(collection: "Item", upserted: [.integer(5)], deleted: []))
                break
            }
            #expect(Self.startedListeners(observer) == 1)
        }
    }

    /// Eight threads subscribing at once to a store never observed before start one listener, and
    /// each of their streams gets the commit made after all of them returned.
    @Test func concurrentFirstSubscribersStartOneListener() async throws {
        try await Self.withPath("lazy-race") { path, raw in
            let writer = try Self.open(path) { $0.observesOtherProcesses = false }
            let observer = try Self.open(path)
            let streams = Locked<[AsyncStream<CollectionChange>]>([])
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for _ in 0..<8 {
                group.enter()
                Thread {
                    start.wait()
                    let stream = observer.changes(of: Item.self)
                    streams.withLock { $0.append(stream) }
                    group.leave()
                }
                .start()
            }
            for _ in 0..<8 { start.signal() }
            group.wait()
            #expect(Self.startedListeners(observer) == 1)
            #expect(try Self.listenerRows(raw, path: path) == 1)
            try await writer.save(Item(id: 7, text: "seen by all"))
            for stream in streams.withLock({ $0 }) {
                for await change in stream {
                    #expect(change == CollectionChange(collection: "Item", upserted: [.integer(7)], deleted: []))
                    break
                }
            }
        }
    }

    /// The first settings read starts the listener before it caches the value, so a change made
    /// elsewhere after it is seen; a settings subscription on a store never observed starts it too.
    @Test func settingsReadsAndSubscriptionsStartTheListener() async throws {
        try await Self.withPath("lazy-settings") { path, raw in
            let reader = try Self.open(path)
            let other = try LazySettings(store: try Self.open(path) { $0.observesOtherProcesses = false })
            let mine = try LazySettings(store: reader)
            #expect(mine.theme == "light")  // cached, with the listener running
            #expect(Self.startedListeners(reader) == 1)
            other.theme = "dark"
            #expect(PostgreSQLObservationTests.eventually { mine.theme == "dark" })
            other.theme = "blue"
            #expect(PostgreSQLObservationTests.eventually { mine.theme == "blue" })

            let subscriberStore = try Self.open(path)
            let subscriber = try LazySettings(store: subscriberStore)
            let values = subscriber.$theme.changes
            #expect(Self.startedListeners(subscriberStore) == 1)
            other.theme = "green"
            for await value in values {
                #expect(value == "green")
                break
            }
            #expect(try Self.listenerRows(raw, path: path) == 2)
        }
    }

    /// A store that wrote 600 commits unobserved (the writers' own pruning kept the change table
    /// small, with no listener row) then starts observing: every later commit of another store is
    /// delivered, in order, while the table keeps being pruned; closing stops the listener, which
    /// removes its row.
    @Test func aLateListenerReadsEveryLaterCommitWhilePruningGoesOn() async throws {
        try await Self.withPath("lazy-prune") { path, raw in
            let retention = Duration.milliseconds(200)
            let store = try Self.open(path) { $0.changeRetention = retention }
            let writer = try Self.open(path) {
                $0.changeRetention = retention
                $0.observesOtherProcesses = false
            }
            for id in 0..<600 { try await store.save(Item(id: Int64(id), text: "item \(id)")) }
            #expect(try PostgreSQLObservationTests.changeRows(raw, path: path) < 256)
            #expect(try Self.listenerRows(raw, path: path) == 0)

            let changes = store.changes(of: Item.self)
            let commits = 600
            for id in 0..<commits { try await writer.save(Item(id: Int64(1_000 + id), text: "later \(id)")) }
            var received: [StorageValue] = []
            for await change in changes {
                received += change.upserted
                if received.count >= commits { break }
            }
            #expect(received == (0..<commits).map { .integer(Int64(1_000 + $0)) })
            let pruned = try PostgreSQLObservationTests.eventually {
                try PostgreSQLObservationTests.changeRows(raw, path: path) <= 1
            }
            #expect(pruned)

            try await store.close()
            #expect(try PostgreSQLObservationTests.eventually { try Self.listenerRows(raw, path: path) == 0 })
        }
    }
}
