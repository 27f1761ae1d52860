import Foundation
import Storage
import Testing

/// Live results (`observe`, issue 34) on every backend: implemented once, above the backend
/// protocol, over the change streams and, for commits made elsewhere, the engine's reports or
/// its commit counter.
///
/// Nothing here asserts a time: a check waits (up to a generous limit, for a loaded machine)
/// for the results it expects, and proves that nothing else was delivered by committing a last
/// change and finding the deliveries before it exactly as expected.
struct LiveResultsChecks {
    struct Sale: Codable, Equatable, Sendable {
        var id: Int64
        var amount: Int
    }

    struct Other: Codable, Sendable {
        var id: Int64
    }

    struct Refused: Error {}

    /// The longest wait for a delivery: far beyond what it takes, so that a slow machine does
    /// not fail the check, while a delivery that never comes still fails it. Three minutes: under
    /// ThreadSanitizer, in the whole suite on two cores, two clean-clone runs saw the consuming
    /// task wait over a minute for a thread of the cooperative pool.
    static let patience: Duration = .seconds(180)

    /// Waits until `condition` holds, for at most `patience`.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + patience
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    /// Everything a consuming task received from a live sequence, and how the sequence ended.
    final class Deliveries<Results: Sendable>: Sendable {
        private let state = Locked<(values: [Results], ended: Bool, error: String?)>(([], false, nil))
        var values: [Results] { state.withLock { $0.values } }
        var last: Results? { state.withLock { $0.values.last } }
        var ended: Bool { state.withLock { $0.ended } }
        var error: String? { state.withLock { $0.error } }

        func append(_ results: Results) { state.withLock { $0.values.append(results) } }
        func end(_ error: (any Error)?) {
            state.withLock {
                $0.ended = true
                $0.error = error.map { "\($0)" }
            }
        }
    }

    /// Consumes `results` in a task of its own, recording each delivery; `pause`, when given, is
    /// awaited after the first delivery (a consumer busy with it).
    static func consume<Results>(
        _ results: LiveResults<Results>,
        pause: Gate? = nil
    ) -> (Task<Void, Never>, Deliveries<Results>) {
        let deliveries = Deliveries<Results>()
        let task = Task {
            do {
                for try await value in results {
                    deliveries.append(value)
                    if let pause, deliveries.values.count == 1 { try await pause.arrival() }
                }
                deliveries.end(nil)
            } catch {
                deliveries.end(error)
            }
        }
        return (task, deliveries)
    }

    static func sales(_ ids: [Int64]) -> [Sale] { ids.map { Sale(id: $0, amount: Int($0) * 10) } }

    func theFirstValueThenOneAfterEachCommitThatChangesTheResults(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("live")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        try await store.save(contentsOf: Self.sales([1, 2, 3]))
        let (task, deliveries) = Self.consume(
            store.observe(Sale.self, where: Column("amount") >= 20, orderBy: [.ascending("id")])
        )
        defer { task.cancel() }
        #expect(await Self.eventually { deliveries.values.count == 1 })
        #expect(deliveries.values == [Self.sales([2, 3])])

        try await store.save(Sale(id: 4, amount: 40))
        #expect(await Self.eventually { deliveries.last == Self.sales([2, 3, 4]) })
        // Another collection, and a change that leaves the results as they were: no delivery.
        try await store.save(Other(id: 1))
        try await store.save(Sale(id: 1, amount: 5))
        try await store.save(Sale(id: 3, amount: 31))
        #expect(
            await Self.eventually {
                deliveries.last == [Sale(id: 2, amount: 20), Sale(id: 3, amount: 31)] + Self.sales([4])
            }
        )
        try await store.delete(Sale.self, id: 2)
        #expect(await Self.eventually { deliveries.last == [Sale(id: 3, amount: 31)] + Self.sales([4]) })
        #expect(
            deliveries.values == [
                Self.sales([2, 3]), Self.sales([2, 3, 4]),
                [Sale(id: 2, amount: 20), Sale(id: 3, amount: 31)] + Self.sales([4]),
                [Sale(id: 3, amount: 31)] + Self.sales([4]),
            ]
        )
        #expect(deliveries.error == nil)
    }

    func aRolledBackTransactionDeliversNothing(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("live-rollback")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        try await store.save(Sale(id: 1, amount: 10))
        let (task, deliveries) = Self.consume(store.observe(Sale.self, orderBy: [.ascending("id")]))
        defer { task.cancel() }
        #expect(await Self.eventually { deliveries.values.count == 1 })
        #expect(throws: Refused.self) {
            try store.transaction { tx in
                try tx.save(contentsOf: Self.sales([2, 3]))
                try tx.delete(Sale.self, id: 1)
                throw Refused()
            }
        }
        // A commit after the rollback: what comes before its delivery was delivered for the
        // rollback, and must be nothing.
        try await store.save(Sale(id: 9, amount: 90))
        #expect(await Self.eventually { deliveries.last == Self.sales([1, 9]) })
        #expect(deliveries.values == [Self.sales([1]), Self.sales([1, 9])])
    }

    func aCommitOfAnotherStoreOnTheSameFilesIsDelivered(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("live-other-store")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        try await store.save(Sale(id: 1, amount: 10))
        let (task, deliveries) = Self.consume(store.observe(Sale.self, orderBy: [.ascending("id")]))
        defer { task.cancel() }
        #expect(await Self.eventually { deliveries.values.count == 1 })

        let other = try fixture.openStore(in: directory.url)
        try await other.save(Sale(id: 2, amount: 20))
        #expect(await Self.eventually { deliveries.last == Self.sales([1, 2]) })
        try await other.transaction { tx in
            try tx.save(Sale(id: 3, amount: 30))
            try tx.delete(Sale.self, id: 1)
        }
        #expect(await Self.eventually { deliveries.last == Self.sales([2, 3]) })
        try await other.close()
        #expect(deliveries.values == [Self.sales([1]), Self.sales([1, 2]), Self.sales([2, 3])])
        #expect(deliveries.error == nil)
    }

    func aBurstOfCommitsIsCoalescedIntoTheLatestResults(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("live-burst")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        let busy = Gate()
        let (task, deliveries) = Self.consume(store.observe(Sale.self, orderBy: [.ascending("id")]), pause: busy)
        defer { task.cancel() }
        #expect(await Self.eventually { deliveries.values.count == 1 })
        // 200 commits while the consumer is busy with the first results: it then gets the latest
        // results once, none of the 199 states in between.
        for id in 1...200 { try await store.save(Sale(id: Int64(id), amount: id)) }
        busy.open()
        let all = (1...200).map { Sale(id: Int64($0), amount: $0) }
        #expect(await Self.eventually { deliveries.last == all })
        // A last commit, so that any delivery still due for the burst would come before its own.
        try await store.save(Sale(id: 201, amount: 201))
        #expect(await Self.eventually { deliveries.last?.count == 201 })
        #expect(deliveries.values.map(\.count) == [0, 200, 201])
    }

    func cancellingTheConsumingTaskEndsTheSequence(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("live-cancel")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        let (task, deliveries) = Self.consume(store.observe(Sale.self))
        #expect(await Self.eventually { deliveries.values.count == 1 })
        #expect(store.changeSubscriberCount == 1)
        task.cancel()
        #expect(await Self.eventually { deliveries.ended })
        #expect(deliveries.error == nil)
        // The subscription is gone with the iterator, and later commits go nowhere.
        #expect(await Self.eventually { store.changeSubscriberCount == 0 })
        try await store.save(Sale(id: 1, amount: 1))
        #expect(deliveries.values == [[]])
    }

    func closingTheStoreEndsTheSequence(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("live-close")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        try await store.save(Sale(id: 1, amount: 10))
        let (task, deliveries) = Self.consume(store.observe(Sale.self))
        defer { task.cancel() }
        #expect(await Self.eventually { deliveries.values.count == 1 })
        try await store.close()
        #expect(await Self.eventually { deliveries.ended })
        #expect(deliveries.error == nil)
        #expect(deliveries.values == [Self.sales([1])])

        // Observing a closed store ends at once, with nothing delivered.
        let (late, lateDeliveries) = Self.consume(store.observe(Sale.self))
        defer { late.cancel() }
        #expect(await Self.eventually { lateDeliveries.ended })
        #expect(lateDeliveries.values.isEmpty && lateDeliveries.error == nil)
    }

    func dictionariesAreObservedAndBadQueriesThrow(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("live-untyped")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        try await store.insert(jsonArray: Data(#"[{"id": "a", "n": 1}, {"id": "b", "n": 5}]"#.utf8), into: "events")
        let (task, deliveries) = Self.consume(store.observe(in: "EVENTS", where: Column("n") > 2))
        defer { task.cancel() }
        #expect(await Self.eventually { deliveries.values.count == 1 })
        #expect(deliveries.values.first == [["id": .text("b"), "n": .integer(5)]])
        try await store.insert(jsonArray: Data(#"[{"id": "c", "n": 9}]"#.utf8), into: "events")
        #expect(await Self.eventually { deliveries.last?.count == 2 })
        #expect(deliveries.last?.last == ["id": .text("c"), "n": .integer(9)])

        var invalid = store.observe(in: "bad name!").makeAsyncIterator()
        await expectStorageErrorAsync(.invalidIdentifier) { _ = try await invalid.next() }
        var unknown = store.observe(in: "events", where: Column("missing") == 1).makeAsyncIterator()
        await expectStorageErrorAsync(.unknownColumn) { _ = try await unknown.next() }
        #expect(try await unknown.next() == nil)  // ended by its error
    }
}

/// Expects `body` to throw a `StorageError` with `code`.
private func expectStorageErrorAsync(
    _ code: StorageError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected StorageError \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as StorageError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected StorageError \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

extension ConformanceSuite {
    static let liveResultsAsyncChecks: [ConformanceCheck] = [
        asyncCheck("live results: the first value, then one after each commit that changes the results") { fixture, _ in
            try await LiveResultsChecks().theFirstValueThenOneAfterEachCommitThatChangesTheResults(fixture)
        },
        asyncCheck("live results: a rolled back transaction delivers nothing") { fixture, _ in
            try await LiveResultsChecks().aRolledBackTransactionDeliversNothing(fixture)
        },
        asyncCheck("live results: a commit of another store on the same files is delivered") { fixture, _ in
            try await LiveResultsChecks().aCommitOfAnotherStoreOnTheSameFilesIsDelivered(fixture)
        },
        asyncCheck("live results: a burst of commits is coalesced into the latest results") { fixture, _ in
            try await LiveResultsChecks().aBurstOfCommitsIsCoalescedIntoTheLatestResults(fixture)
        },
        asyncCheck("live results: cancelling the consuming task ends the sequence") { fixture, _ in
            try await LiveResultsChecks().cancellingTheConsumingTaskEndsTheSequence(fixture)
        },
        asyncCheck("live results: closing the store ends the sequence") { fixture, _ in
            try await LiveResultsChecks().closingTheStoreEndsTheSequence(fixture)
        },
        asyncCheck("live results: dictionaries are observed and bad queries throw") { fixture, _ in
            try await LiveResultsChecks().dictionariesAreObservedAndBadQueriesThrow(fixture)
        },
    ]
}
