import Foundation
import Storage

/// The counter workload (`CounterWorkload`'s read-modify-write of one shared counter) with its
/// retries counted: each transaction's closure counts its runs, the reporter's handler counts the
/// `retry` and `conflict` events it is given, and a stream of `ObjectStore.events` counts the
/// retries it delivers. Prints `runs R retries T conflicts C streamed S dropped D busy B` at the
/// end. A call of `transaction` runs its closure once plus once per retry, so
/// `T == R - count - B` and `S == T` when no event is lost, where `B` counts the calls that failed
/// with `.busy` (their retries used up: a loaded machine) and were made again, as an app would.
enum RetryCountWorkload {
    static func run(
        writer: Int64,
        count: Int,
        open: (StoreEventReporter) throws -> ObjectStore,
        report: (String) -> Void
    ) throws {
        let counts = Locked((retries: 0, conflicts: 0))
        let events = StoreEventReporter { event in
            if event.kind == .retry { counts.withLock { $0.retries += 1 } }
            if event.kind == .conflict { counts.withLock { $0.conflicts += 1 } }
        }
        let store = try open(events)
        let stream = store.events(bufferingNewest: 1_000_000)
        let streamed = Locked(0)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            for await event in stream where event.kind == .retry { streamed.withLock { $0 += 1 } }
            done.signal()
        }
        var runs = 0
        var busy = 0
        for index in 0..<count {
            while true {
                do {
                    try store.transaction { tx in
                        runs += 1
                        let value = (try tx.fetch(LoadCounter.self, id: 1)?.value ?? 0) + 1
                        try tx.save(LoadCounter(id: 1, value: value))
                        try tx.save(LoadTick(id: writer * 1_000_000 + Int64(index), writer: writer, value: value))
                    }
                    break
                } catch let error as StorageError where error.code == .busy {
                    // Its retries used up: called again, as an app would; counted apart.
                    busy += 1
                }
            }
        }
        // Closing ends the stream once it delivered what it holds.
        try store.close()
        done.wait()
        let (retries, conflicts) = counts.withLock { $0 }
        report(
            "runs \(runs) retries \(retries) conflicts \(conflicts) streamed \(streamed.withLock { $0 })"
                + " dropped \(stream.droppedCount) busy \(busy)"
        )
    }
}
