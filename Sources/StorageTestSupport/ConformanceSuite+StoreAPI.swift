import Foundation
import Storage
import Testing

/// The server-side API of issue 13 on every backend: async calls on the store's own threads,
/// read transactions, streams, paging, collections, closing and error matching.
struct StoreAPIChecks {
    struct Item: Codable, Equatable, Sendable {
        var id: Int64
        var group: String?
        var rank: Int
    }

    struct Tagged: Codable, Sendable, StorableModel {
        static let indexes: [IndexDefinition] = [.init(["tag"], unique: true)]
        var id: Int64
        var tag: String
    }

    static func items(_ range: ClosedRange<Int64>) -> [Item] {
        range.map { Item(id: $0, group: $0 % 3 == 0 ? nil : "g\($0 % 3)", rank: Int($0 % 4)) }
    }

    /// Runs `body` on a thread of its own (not the cooperative pool's) and waits for it.
    static func onThread(_ body: @escaping @Sendable () -> Void) -> Thread {
        let thread = Thread(block: body)
        thread.start()
        return thread
    }

    // MARK: Async calls

    func aThousandTasksWaitingOnABusyWriterDoNotStarveOtherTasks(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("api-async")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        let holding = Gate()
        let release = Gate()
        let heldToTheEnd = Locked(false)
        // A synchronous transaction holds the writer on a thread of its own until released, or
        // for 120 s: the time the rest of the test has to run while the writer is held (with the
        // saves blocking the cooperative pool, it cannot, and the writer gives up first). Long,
        // because other tests running beside this one may hold the pool's threads for a while.
        _ = Self.onThread {
            _ = try? store.transaction { tx in
                try tx.save(Item(id: 0, group: nil, rank: 0))
                holding.open()
                if !release.wait(seconds: 120) { heldToTheEnd.withLock { $0 = true } }
            }
        }
        try await holding.arrival()
        let writers = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for id in 1...1_000 {
                    group.addTask { try await store.save(Item(id: Int64(id), group: "w", rank: 1)) }
                }
                try await group.waitForAll()
            }
        }
        // Let the thousand tasks start and block (on the store's threads, if all is well).
        try await Task.sleep(for: .milliseconds(200))
        let unrelated = await Task.detached { (1...1_000).reduce(0, +) }.value
        release.open()
        try await writers.value
        #expect(unrelated == 500_500)
        #expect(heldToTheEnd.withLock { $0 } == false, "an unrelated task could not run behind the blocked saves")
        #expect(try await store.count(Item.self) == 1_001)
    }

    func aCancelledCallIsSkippedAndABegunTransactionRunsToItsEnd(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("api-cancel")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)

        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await store.save(contentsOf: Self.items(1...10))
        }
        await #expect(throws: CancellationError.self) { _ = try await cancelledFirst.value }
        #expect(try await store.count(Item.self) == 0)

        let begun = Gate()
        let transaction = Task {
            try await store.transaction { tx in
                begun.open()
                Thread.sleep(forTimeInterval: 0.2)
                return try tx.save(contentsOf: Self.items(1...50)).count
            }
        }
        try await begun.arrival()
        transaction.cancel()
        #expect(try await transaction.value == 50)
        #expect(try await store.count(Item.self) == 50)
    }

    // MARK: Read transactions

    func aReadTransactionSeesOneSnapshotWithoutWaitingForTheWriter(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("api-read")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        try await store.save(contentsOf: Self.items(1...10))
        let holding = Gate()
        let release = Gate()
        let heldToTheEnd = Locked(false)
        // The writer is held until the read is done, or for 20 s if the read waits for it.
        let writer = Self.onThread {
            _ = try? store.transaction { tx in
                try tx.save(contentsOf: Self.items(11...20))
                holding.open()
                if !release.wait(seconds: 120) { heldToTheEnd.withLock { $0 = true } }
            }
        }
        try await holding.arrival()
        let (count, all, groups) = try await store.read { tx in
            (
                try tx.count(Item.self),
                try tx.fetchAll(Item.self, orderBy: [.descending("id")], limit: 3, offset: 1).map(\.id),
                try tx.fetchDictionaries(from: "Item", where: Column("id") == 3).count
            )
        }
        release.open()
        while !writer.isFinished { try await Task.sleep(for: .milliseconds(5)) }
        #expect(count == 10)
        #expect(all == [9, 8, 7])
        #expect(groups == 1)
        #expect(heldToTheEnd.withLock { $0 } == false, "the read waited for the writer")
        #expect(try await store.read { tx in try tx.count(Item.self) } == 20)
    }

    // MARK: Streams

    func aStreamReadsEveryMatchingRecordOnceInOrderAcrossBatches(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("api-stream")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        try await store.save(contentsOf: Self.items(1...40))
        let expected = try await store.fetchAll(
            Item.self,
            where: Column("id") > 2,
            orderBy: [.descending("group"), .ascending("rank")]
        )
        var streamed: [Item] = []
        // Batches of 3 cut through runs of equal sort values and of NULL groups.
        for try await item in store.stream(
            Item.self,
            where: Column("id") > 2,
            orderBy: [.descending("group"), .ascending("rank")],
            batchSize: 3
        ) {
            streamed.append(item)
        }
        #expect(streamed == expected)
        #expect(streamed.count == 38)

        var ascending: [Int64] = []
        for try await item in store.stream(Item.self, orderBy: [.ascending("group")], batchSize: 7) {
            ascending.append(item.id)
        }
        #expect(ascending == (try await store.fetchAll(Item.self, orderBy: [.ascending("group")])).map(\.id))
    }

    func aStreamConsumerMayWriteAndCancellingEndsTheStream(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("api-stream-write")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        try await store.save(contentsOf: Self.items(1...20))
        var seen: [Int64] = []
        // Deleting and adding records while streaming neither deadlocks nor repeats a record.
        for try await item in store.stream(Item.self, batchSize: 4) {
            seen.append(item.id)
            if item.id == 4 {  // the end of the first batch
                try await store.delete(Item.self, id: 6)
                try await store.save(Item(id: 100, group: "late", rank: 0))
            }
        }
        #expect(seen == Array(1...5) + Array(7...20) + [100])

        let consumer = Task {
            var count = 0
            for try await _ in store.stream(Item.self, batchSize: 2) {
                count += 1
                if count == 3 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return count
        }
        // The batch in hand is finished (4 values), then the cancelled task's stream ends.
        #expect(try await consumer.value == 4)
    }

    // MARK: Paging

    func offsetsPageThroughFetchAllAndFetchDictionaries(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("api-paging")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        try await store.save(contentsOf: Self.items(1...25))
        #expect(try await store.fetchAll(Item.self, limit: 10, offset: 20).map(\.id) == Array(21...25))
        #expect(try await store.fetchAll(Item.self, offset: 22).map(\.id) == [23, 24, 25])
        #expect(try await store.fetchAll(Item.self, offset: 30).isEmpty)
        let byRank = try await store.fetchAll(Item.self, orderBy: [.descending("rank")], limit: 3, offset: 2)
        #expect(byRank.map(\.id) == [11, 15, 19])
        let rows = try await store.fetchDictionaries(from: "Item", where: Column("rank") == 1, limit: 2, offset: 1)
        #expect(rows.map { $0["id"] } == [.integer(5), .integer(9)])
        #expect(throws: StorageError.self) { _ = try store.fetchAll(Item.self, offset: -1) }
    }

    // MARK: Collections

    func collectionsAreListedDescribedAndDroppedAsAWhole(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("api-collections")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        try await store.save(contentsOf: Self.items(1...5))
        try await store.save(contentsOf: [Tagged(id: 1, tag: "a"), Tagged(id: 2, tag: "b")])
        try StoreSettings(store: store).visits += 1
        try await store.transaction { tx in _ = try tx.save(Item(id: 6, group: nil, rank: 0)) }
        #expect(try await store.collectionNames() == ["Item", "Tagged"])  // `_settings` is internal
        let tagged = try #require(try await store.schema(of: "tagged"))
        #expect(tagged.primaryKey == "id" && tagged.indexes == [IndexDefinition(["tag"], unique: true)])
        #expect(try await store.schema(of: "Nothing") == nil)

        // All or nothing: a drop in a transaction that throws leaves everything.
        #expect(throws: StorageError.self) {
            try store.transaction { tx in
                #expect(try tx.drop(collection: "Tagged"))
                #expect(try tx.collectionNames() == ["Item"])
                throw StorageError(.misuse, "rolled back")
            }
        }
        #expect(try await store.count(Tagged.self) == 2)

        var changes = store.changes(of: Item.self).makeAsyncIterator()
        #expect(try await store.drop(collection: "item"))
        #expect(Set(await changes.next()?.deleted ?? []) == Set((1...6).map { StorageValue.integer($0) }))
        #expect(try await store.collectionNames() == ["Tagged"])
        #expect(try await store.drop(collection: "item") == false)
        #expect(try await store.count(Item.self) == 0)

        // The unique index went with the collection: records created again without it may repeat.
        try await store.drop(collection: "Tagged")
        try await store.insert(
            jsonArray: Data(#"[{"id": 1, "tag": "x"}, {"id": 2, "tag": "x"}]"#.utf8),
            into: "Tagged"
        )
        #expect(try await store.schema(of: "Tagged")?.indexes == [])
        #expect(try await store.fetchDictionaries(from: "Tagged").count == 2)
        await #expect(throws: StorageError.self) { try await store.drop(collection: "_settings") }

        // A collection created and dropped in one transaction leaves nothing.
        try await store.drop(collection: "Tagged")
        try await store.transaction { tx in
            try tx.save(contentsOf: [Tagged(id: 5, tag: "t")])
            #expect(try tx.drop(collection: "Tagged"))
        }
        #expect(try await store.schema(of: "Tagged") == nil)
        #expect(try await store.collectionNames() == [])

        // And the collection comes back, empty, at the next save.
        try await store.save(Item(id: 9, group: "g", rank: 2))
        #expect(try await store.fetchAll(Item.self).map(\.id) == [9])
    }

    // MARK: Closing

    func closeWaitsForTheCallsInFlight(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("api-close-wait")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        let begun = Gate()
        let writer = Self.onThread {
            _ = try? store.transaction { tx in
                begun.open()
                Thread.sleep(forTimeInterval: 0.3)
                try tx.save(contentsOf: Self.items(1...30))
            }
        }
        try await begun.arrival()
        try await store.close()
        #expect(writer.isFinished || writer.isExecuting)  // the writer's closure has returned
        let reopened = try fixture.openStore(in: directory.url)
        #expect(try await reopened.count(Item.self) == 30)
        try await reopened.close()
    }
}

private final class StoreSettings: Settings {
    @Setting var visits = 0
}

extension ConformanceSuite {
    static let storeAPIAsyncChecks: [ConformanceCheck] = [
        asyncCheck("a thousand tasks waiting on a busy writer do not starve other tasks") { fixture, _ in
            try await StoreAPIChecks().aThousandTasksWaitingOnABusyWriterDoNotStarveOtherTasks(fixture)
        },
        asyncCheck("a cancelled call is skipped and a begun transaction runs to its end") { fixture, _ in
            try await StoreAPIChecks().aCancelledCallIsSkippedAndABegunTransactionRunsToItsEnd(fixture)
        },
        asyncCheck("a read transaction sees one snapshot without waiting for the writer") { fixture, _ in
            try await StoreAPIChecks().aReadTransactionSeesOneSnapshotWithoutWaitingForTheWriter(fixture)
        },
        asyncCheck("a stream reads every matching record once in order across batches") { fixture, _ in
            try await StoreAPIChecks().aStreamReadsEveryMatchingRecordOnceInOrderAcrossBatches(fixture)
        },
        asyncCheck("a stream consumer may write and cancelling ends the stream") { fixture, _ in
            try await StoreAPIChecks().aStreamConsumerMayWriteAndCancellingEndsTheStream(fixture)
        },
        asyncCheck("offsets page through fetch all and fetch dictionaries") { fixture, _ in
            try await StoreAPIChecks().offsetsPageThroughFetchAllAndFetchDictionaries(fixture)
        },
        asyncCheck("collections are listed described and dropped as a whole") { fixture, _ in
            try await StoreAPIChecks().collectionsAreListedDescribedAndDroppedAsAWhole(fixture)
        },
        asyncCheck("close waits for the calls in flight") { fixture, _ in
            try await StoreAPIChecks().closeWaitsForTheCallsInFlight(fixture)
        },
    ]
}
