import Foundation
import Storage

/// What a live observer (`ObjectStore.observe`, issue 34) costs a writer: single saves, each in a
/// transaction of its own, with one observer of a query whose results every save changes, beside
/// the same saves with no observer, alternately on one store in the same run (`--observe`).
/// Goal: ratio ≥ 0.9, the observer adding at most 10 % to a save's time.
struct ObserveBenchmarks<Raw: RawBaseline> {
    /// Saves per timed run.
    static var saves: Int { 2_000 }
    static var goal: Double { 0.9 }

    let context: BenchmarkContext

    func run(_ harness: inout Harness) throws {
        progress("\(Raw.backend): observe")
        let path = context.path(Raw.fileName("observe"))
        Raw.remove(path, in: context)
        defer { Raw.remove(path, in: context) }
        let store = try Raw.openStore(path: path)
        defer { try? store.close() }
        try store.save(contentsOf: context.people)
        // The observed query: people 1 to 19 (a screen's worth), which every save replaces one of,
        // each time with a new age, so that each commit changes the results.
        let watched = Array(context.people.prefix(19))
        var round = 0
        func saves() throws {
            round += 1
            for index in 0..<Self.saves {
                var person = watched[index % watched.count]
                person.age = round * Self.saves + index
                try store.save(person)
            }
        }
        let observer = BenchmarkObserver(store: store)
        var deliveries: [Int] = []
        let (ours, baseline) = try harness.measurePair(
            warmUp: true,
            setUpOurs: { observer.start() },
            ours: saves,
            setUpBaseline: { deliveries.append(observer.stop()) },
            baseline: saves
        )
        deliveries.append(observer.stop())
        harness.record(
            backend: Raw.backend,
            operation: .observe,
            rows: Self.saves,
            ours: ours,
            baseline: "the same single saves, on the same store, with no observer",
            baselineTime: baseline,
            goal: Self.goal
        )
        let runs = deliveries.filter { $0 > 0 }
        harness.results[harness.results.count - 1].note =
            "the observer received \(runs.sorted()[runs.count / 2]) results (median of the runs) for \(Self.saves)"
            + " saves: commits that came while it re-read are coalesced"
    }
}

/// One consumer of `observe` on a detached task: `start()` returns once it has its first
/// results, `stop()` once it has ended.
final class BenchmarkObserver: Sendable {
    let store: ObjectStore
    private let state = Locked<(task: Task<Void, Never>?, deliveries: Int)>((nil, 0))

    init(store: ObjectStore) {
        self.store = store
    }

    func start() {
        let started = DispatchSemaphore(value: 0)
        let (store, state) = (store, state)
        let task = Task.detached {
            var isFirst = true
            do {
                let results = store.observe(Person.self, where: Column("id") < 20, orderBy: [.ascending("id")])
                for try await _ in results {
                    state.withLock { $0.deliveries += 1 }
                    if isFirst {
                        isFirst = false
                        started.signal()
                    }
                }
            } catch {
                progress("observe: \(error)")
            }
            if isFirst { started.signal() }
        }
        started.wait()
        state.withLock { $0.task = task }
    }

    /// Ends the consumer.
    /// - Returns: how many results it received after its first.
    @discardableResult
    func stop() -> Int {
        let (task, deliveries) = state.withLock { state in
            defer { state = (nil, 0) }
            return state
        }
        guard let task else { return 0 }
        task.cancel()
        let ended = DispatchSemaphore(value: 0)
        Task.detached {
            await task.value
            ended.signal()
        }
        ended.wait()
        return deliveries - 1
    }
}
