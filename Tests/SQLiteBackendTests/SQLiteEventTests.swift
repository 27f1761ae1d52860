import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// The SQLite backend's store events: a lock held by another connection waited for
/// (`conflict`), and slow statements through SQLite's profile callback.
@Suite(.dedicatedThreads) struct SQLiteEventTests {
    struct Secret: Codable, Equatable {
        var id: Int64
        var password: String
    }

    /// With a zero threshold every statement is reported slow, with the text SQLite was given:
    /// values are bound (`?`), so a secret saved, fetched and filtered on appears in no event.
    @Test func slowStatementsWithAZeroThresholdShowNoValue() throws {
        try TemporaryDirectory.with("sqlite-events") { directory in
            let events = Locked<[StoreEvent]>([])
            let reporter = StoreEventReporter(slowStatementThreshold: .zero) { event in
                events.withLock { $0.append(event) }
            }
            let path = directory.appendingPathComponent("store.sqlite").path
            let store = try ObjectStore(backend: .sqlite(path: path, configuration: .init(events: reporter)))
            try store.save(Secret(id: 1, password: "hunter2-secret"))
            #expect(try store.fetch(Secret.self, id: 1)?.password == "hunter2-secret")
            #expect(try store.count(Secret.self, where: Column("password") == "hunter2-secret") == 1)
            let slow = events.withLock { $0 }.filter { $0.kind == .slowStatement }
            #expect(slow.count >= 3)
            for event in slow {
                let statement = try #require(event.statement)
                #expect(!event.description.contains("hunter2"), "\(statement)")
                #expect(event.backend == "SQLite")
                #expect(event.location == path)
            }
            #expect(slow.contains { $0.statement?.contains("?") == true }, "\(slow.map(\.description))")
        }
    }

    /// Without a threshold nothing is timed: no slow statement, however long statements take.
    @Test func noThresholdReportsNoSlowStatement() throws {
        try TemporaryDirectory.with("sqlite-events") { directory in
            let events = Locked<[StoreEvent]>([])
            let reporter = StoreEventReporter { event in events.withLock { $0.append(event) } }
            let path = directory.appendingPathComponent("store.sqlite").path
            let store = try ObjectStore(backend: .sqlite(path: path, configuration: .init(events: reporter)))
            try store.save(Secret(id: 1, password: "x"))
            _ = try store.fetchAll(Secret.self)
            #expect(events.withLock { $0 }.isEmpty)
        }
    }

    /// A write that finds the database locked by another connection reports a `conflict`
    /// (code `.busy`) when it starts waiting, then waits as the busy timeout says and commits
    /// once the lock is released.
    @Test func aWriteWaitingForAnotherConnectionsLockReportsAConflict() throws {
        try TemporaryDirectory.with("sqlite-events") { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            let holder = try ObjectStore(backend: .sqlite(path: path))
            try holder.save(Secret(id: 1, password: "x"))
            let conflicted = Gate()
            let events = Locked<[StoreEvent]>([])
            let reporter = StoreEventReporter { event in
                events.withLock { $0.append(event) }
                if event.kind == .conflict { conflicted.open() }
            }
            let waiter = try ObjectStore(
                backend: .sqlite(path: path, configuration: .init(busyTimeout: .seconds(30), events: reporter))
            )
            let holding = Gate()
            let held = Locked(false)
            let thread = Thread {
                try? holder.transaction { tx in
                    try tx.save(Secret(id: 2, password: "y"))
                    holding.open()
                    // Until the waiter reports its wait (at most 30 s, then the test fails below).
                    held.withLock { $0 = conflicted.wait(seconds: 30) }
                }
            }
            thread.start()
            #expect(holding.wait(seconds: 30))
            try waiter.save(Secret(id: 3, password: "z"))
            #expect(held.withLock { $0 })
            let conflicts = events.withLock { $0 }.filter { $0.kind == .conflict }
            #expect(conflicts.count >= 1)
            #expect(conflicts.first?.code == .busy)
            #expect(conflicts.first?.attempt == 1)
            #expect(conflicts.first?.location == path)
            #expect(try waiter.count(Secret.self) == 3)
        }
    }
}
