import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// While no store listened at the last write, a transaction longer than one save sends a check
/// of the listener count before its `COMMIT` instead of its change record (its keys are neither
/// encoded nor sent); when a store listens by then, the check rolls the transaction back and it
/// runs again with its change record, so the listener misses nothing.
@Suite struct PostgreSQLUnobservedCommitTests {
    struct Item: Codable, Equatable {
        var id: Int64
        var text: String
    }

    /// A bulk save and a two-record transaction with no store listening send nothing to the
    /// change table: no statement names it.
    @Test func commitsWithNoListenerSendNoChangeRecord() throws {
        try withStore("unobserved-statements") { _, path in
            let (store, statements) = try PostgreSQLSearchRegistryTests.openCounting(path)
            defer { try? store.close() }
            try store.save(Item(id: -1, text: "warm up"))
            statements.withLock { $0.removeAll() }
            try store.save(contentsOf: (0..<2_000).map { Item(id: Int64($0), text: "bulk \($0)") })
            try store.transaction { tx in
                try tx.save(Item(id: 5_000, text: "a"))
                _ = try tx.delete(Item.self, id: 1)
            }
            let sent = statements.withLock { $0 }
            #expect(!sent.isEmpty)
            #expect(!sent.contains { $0.contains("storage$changes") }, "\(sent)")
            #expect(try store.count(Item.self) == 2_001)
        }
    }

    /// The writer's last commit saw no listener; then a store starts observing. The writer's next
    /// two-record transaction and its next bulk save reach the observer, each recorded once.
    @Test func aListenerThatAppearedSinceTheLastWriteGetsTheNextTransaction() async throws {
        try await withStoreAsync("unobserved-then-observed") { writer, path in
            try await writer.transaction { tx in
                try tx.save(Item(id: 1, text: "a"))
                try tx.save(Item(id: 2, text: "b"))
            }
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            #expect(try PostgreSQLChangeRecordingTests.changeRowsRecorded(raw, path) == 0)
            let observer = try PostgreSQLChangeRecordingTests.open(path)
            defer { try? observer.close() }
            let changes = observer.changes(of: Item.self)
            let runs = Locked(0)
            try await writer.transaction { tx in
                runs.withLock { $0 += 1 }
                try tx.save(Item(id: 3, text: "c"))
                try tx.save(Item(id: 4, text: "d"))
            }
            try await writer.save(contentsOf: (10..<1_010).map { Item(id: Int64($0), text: "bulk") })
            let received = await PostgreSQLChangeRecordingTests.collect(changes, count: 1_002)
            #expect(received == [.integer(3), .integer(4)] + (10..<1_010).map { .integer(Int64($0)) })
            #expect(try PostgreSQLChangeRecordingTests.changeRowsRecorded(raw, path) == 2)
            // Run once with the check, which found the listener, and once with its record.
            #expect(runs.withLock { $0 } == 2)
        }
    }
}
