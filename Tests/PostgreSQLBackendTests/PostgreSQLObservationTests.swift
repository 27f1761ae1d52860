import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Changes committed by other `ObjectStore`s (other processes, other machines) on one store
/// reach change streams and settings caches, through LISTEN/NOTIFY.
@Suite struct PostgreSQLObservationTests {
    struct Item: Codable, Equatable {
        var id: Int64
        var text: String
    }

    final class SharedSettings: Settings, @unchecked Sendable {
        @Setting var theme = "light"
    }

    /// Waits until `condition` holds, for at most ten seconds.
    static func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            usleep(10_000)
        }
        return try condition()
    }

    /// A transaction of 100,000 keys committed by another store arrives whole, as one change
    /// with each key once; then a delete and an upsert arrive in commit order.
    @Test func anotherStoresCommitsArriveWholeAndInOrder() async throws {
        try await withStoreAsync("observe") { writer, path in
            let observer = try PostgreSQLTestServer.openStore(path: path)
            let changes = observer.changes(of: Item.self)
            let count = 100_000
            try await writer.save(contentsOf: (0..<count).map { Item(id: Int64($0), text: "item \($0)") })
            _ = try await writer.delete(Item.self, id: 5)
            try await writer.transaction { tx in
                try tx.save(Item(id: 5, text: "back"))
                try tx.save(Item(id: 6, text: "changed"))
            }
            var received: [CollectionChange] = []
            for await change in changes {
                received.append(change)
                if received.count == 3 { break }
            }
            #expect(received[0].upserted.count == count)
            #expect(Set(received[0].upserted).count == count)
            #expect(received[0].deleted.isEmpty)
            #expect(received[1] == CollectionChange(collection: "Item", upserted: [], deleted: [.integer(5)]))
            #expect(
                received[2] == CollectionChange(collection: "Item", upserted: [.integer(5), .integer(6)], deleted: [])
            )
        }
    }

    /// Integer keys of every sign and size reach another store exactly as they were written (the
    /// change record writes their digits itself).
    @Test func integerKeysOfEverySizeArriveExactly() async throws {
        try await withStoreAsync("observe-keys") { writer, path in
            let observer = try PostgreSQLTestServer.openStore(path: path)
            let changes = observer.changes(of: Item.self)
            let keys: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, 1_234_567_890, .max, .min, .min + 1, .max - 1]
            try await writer.save(contentsOf: keys.map { Item(id: $0, text: "key \($0)") })
            var received: CollectionChange?
            for await change in changes {
                received = change
                break
            }
            #expect(received == CollectionChange(collection: "Item", upserted: keys.map { .integer($0) }, deleted: []))
        }
    }

    /// A setting changed through another store is seen by a store that had cached it.
    @Test func aSettingChangedElsewhereIsSeen() throws {
        try withStore("settings") { first, path in
            let mine = try SharedSettings(store: first)
            #expect(mine.theme == "light")  // now cached
            let other = try SharedSettings(store: try PostgreSQLTestServer.openStore(path: path))
            other.theme = "dark"
            #expect(Self.eventually { mine.theme == "dark" })
        }
    }

    /// The number of rows in the store's change table at `path`.
    static func changeRows(_ raw: RawConnection, path: String) throws -> Int {
        let table = "\"\(PostgreSQLTestServer.schema(for: path))\".\"storage$changes\""
        return Int(try raw.execute("SELECT count(*) FROM \(table)").first ?? "") ?? -1
    }

    /// A thousand transactions committed by another store: the observer receives each of them,
    /// once and in commit order, while the change table is pruned down to its newest row.
    @Test func theChangeTableIsPrunedOnceEveryListenerHasReadIt() async throws {
        let configuration = PostgreSQLStorageBackend.Configuration(changeRetention: .milliseconds(200))
        let directory = try TemporaryDirectory("postgres-prune")
        defer { directory.remove() }
        let path = DiskBackend.postgresql.storePath(in: directory.url)
        var quiet = configuration
        quiet.observesOtherProcesses = false
        let writer = try PostgreSQLTestServer.openStore(path: path, configuration: quiet)
        let observer = try PostgreSQLTestServer.openStore(path: path, configuration: configuration)
        let changes = observer.changes(of: Item.self)
        let commits = 1_000
        for id in 0..<commits { try await writer.save(Item(id: Int64(id), text: "item \(id)")) }
        var received: [StorageValue] = []
        for await change in changes {
            #expect(change.upserted.count == 1 && change.deleted.isEmpty, "\(change)")
            received += change.upserted
            if received.count == commits { break }
        }
        #expect(received == (0..<commits).map { .integer(Int64($0)) })
        let raw = try RawConnection(try PostgreSQLTestServer.url())
        let pruned = try Self.eventually { try Self.changeRows(raw, path: path) <= 1 }
        let left = try Self.changeRows(raw, path: path)
        #expect(pruned, "\(left) rows left")
        // Observation goes on after the pruning.
        try await writer.save(Item(id: -1, text: "after"))
        for await change in changes {
            #expect(change.upserted == [.integer(-1)])
            break
        }
    }

    /// The writers prune the change table themselves. A listener in another process (simulated
    /// by its row and the count it keeps) that reported recently keeps every row it has not read;
    /// once silent for longer than the retention, with no connection holding its lock, it counts
    /// as gone: its row is deleted, the count drops to 0 and commits record nothing more.
    @Test func writersPruneTheChangeTableButKeepWhatALiveListenerHasNotRead() throws {
        var configuration = PostgreSQLStorageBackend.Configuration(changeRetention: .seconds(30))
        configuration.observesOtherProcesses = false
        try withStore("prune-writers", configuration: configuration) { store, path in
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            let schema = "\"\(PostgreSQLTestServer.schema(for: path))\""
            let changes = "\(schema).\"storage$changes\""
            try raw.execute("INSERT INTO \(schema).\"storage$listeners\" VALUES ('elsewhere', 0, now())")
            try raw.execute("SELECT setval('\(schema).\"storage$observed\"'::regclass, 1)")
            // Pruned at the 256th and the 512th commit, down to what the listener has read: nothing.
            for id in 0..<600 { try store.save(Item(id: Int64(id), text: "item \(id)")) }
            #expect(try Self.changeRows(raw, path: path) == 600)

            let position = try raw.execute("SELECT max(id) FROM \(changes)")[0]
            try raw.execute(
                "UPDATE \(schema).\"storage$listeners\" SET last_seen = \(position), seen_at = now()"
            )
            // Pruned at the 768th commit, down to the listener's position.
            for id in 600..<900 { try store.save(Item(id: Int64(id), text: "item \(id)")) }
            #expect(try raw.execute("SELECT count(*) FROM \(changes) WHERE id <= \(position)") == ["0"])
            #expect(try raw.execute("SELECT count(*) FROM \(changes) WHERE id > \(position)") == ["300"])

            try raw.execute("UPDATE \(schema).\"storage$listeners\" SET seen_at = now() - interval '1 hour'")
            // Pruned at the 1,024th commit: the listener is gone, the table down to its newest row.
            for id in 900..<1_200 { try store.save(Item(id: Int64(id), text: "item \(id)")) }
            #expect(try Self.changeRows(raw, path: path) == 1)
            #expect(try raw.execute("SELECT count(*) FROM \(schema).\"storage$listeners\"") == ["0"])
            #expect(
                try raw.execute("SELECT pg_sequence_last_value('\(schema).\"storage$observed\"'::regclass)") == ["0"]
            )
        }
    }
}

/// `withStore` for async tests.
func withStoreAsync(_ label: String, _ body: (ObjectStore, String) async throws -> Void) async throws {
    let directory = try TemporaryDirectory("postgres-\(label)")
    defer { directory.remove() }
    let path = DiskBackend.postgresql.storePath(in: directory.url)
    try await body(try PostgreSQLTestServer.openStore(path: path), path)
}
