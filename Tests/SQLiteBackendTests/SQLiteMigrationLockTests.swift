import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

private struct Item: Codable, StorableModel {
    static let collectionName = "items"
    var id: Int64
    var name: String
}

/// `migrate` waits for a write lock held longer than the backend's wait (another process
/// migrating a large store, say): it begins the migration's transaction again instead of failing
/// with `.busy`, and the migration runs once, after the lock is released.
@Test(.dedicatedThreads) func migrateWaitsOutAWriteLockHeldPastTheBusyTimeout() throws {
    try TemporaryDirectory.with("sqlite-migration-lock") { directory in
        let path = directory.appendingPathComponent("store.sqlite").path
        let configuration = SQLiteStorageBackend.Configuration(busyTimeout: .milliseconds(100))
        let migrating = try ObjectStore(backend: .sqlite(path: path, configuration: configuration))
        let holder = try ObjectStore(backend: .sqlite(path: path, configuration: configuration))
        try holder.save(Item(id: 1, name: "a"))
        let holding = DispatchSemaphore(value: 0)
        let thread = Thread {
            try? holder.transaction { transaction in
                try transaction.save(Item(id: 2, name: "b"))
                holding.signal()
                Thread.sleep(forTimeInterval: 1.0)  // ten times the other store's wait
            }
        }
        thread.start()
        holding.wait()
        // A plain save gives up after the 100 ms wait while the lock is held.
        let refused = #expect(throws: StorageError.self) { try migrating.save(Item(id: 3, name: "c")) }
        #expect(refused?.code == .busy)
        var migrator = Migrator()
        migrator.register("1-rename") { m in try m.renameColumn("name", to: "label", in: "items") }
        #expect(try migrator.migrate(migrating) == ["1-rename"])
        #expect(
            try migrating.fetchDictionaries(from: "items", orderBy: [.ascending("id")]).map { $0["label"] } == [
                .text("a"), .text("b"),
            ]
        )
        #expect(try migrator.migrate(migrating) == [])
    }
}
