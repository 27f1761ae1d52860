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
}

/// `withStore` for async tests.
func withStoreAsync(_ label: String, _ body: (ObjectStore, String) async throws -> Void) async throws {
    let directory = try TemporaryDirectory("postgres-\(label)")
    defer { directory.remove() }
    let path = DiskBackend.postgresql.storePath(in: directory.url)
    try await body(try PostgreSQLTestServer.openStore(path: path), path)
}
