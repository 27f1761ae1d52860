import Dispatch
import Foundation
import Storage

/// A small record of the stream workload.
struct StreamedItem: Codable, Sendable {
    var id: Int64
    var group: String
    var rank: Int
}

/// Saves `count` records, then reads them back through `ObjectStore.stream` and reports how far
/// the resident set grew while streaming: in a process of its own, so that no other test running
/// at the same time moves the figure (the test that a long stream stays in bounded memory).
///
/// Prints `stream records=N grown=KIB`: the records the stream delivered, and the largest growth
/// of the resident set (sampled every 10,000 records) over its size before the stream began.
enum StreamWorkload {
    static func run(on store: ObjectStore, count: Int, report: (String) -> Void) throws {
        for start in stride(from: 1, through: count, by: 50_000) {
            let end = min(start + 49_999, count)
            try store.save(contentsOf: (start...end).map { StreamedItem(id: Int64($0), group: "a", rank: $0 % 7) })
        }
        // The stream is asynchronous; this thread waits while a task reads it on the pool.
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        Task {
            do {
                let before = CycleWorkload.residentKiB()
                var peak = before
                var records = 0
                for try await _ in store.stream(StreamedItem.self) {
                    records += 1
                    if records % 10_000 == 0 { peak = max(peak, CycleWorkload.residentKiB()) }
                }
                outcome.set("stream records=\(records) grown=\(peak - before)")
            } catch {
                outcome.set("error \(error)")
            }
            done.signal()
        }
        done.wait()
        report(outcome.get())
    }

    /// The line the task leaves for the waiting thread.
    final class Outcome: @unchecked Sendable {
        // @unchecked Sendable: `line` is written before the semaphore is signalled and read
        // after it is waited for, under `lock` both times.
        private let lock = NSLock()
        private var line = ""
        func set(_ text: String) { lock.withLock { line = text } }
        func get() -> String { lock.withLock { line } }
    }
}
