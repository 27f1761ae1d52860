import Storage

/// The one shared counter of the counter workload.
struct LoadCounter: Codable {
    /// Always 1.
    var id: Int64
    /// The number of increments committed, by every writer.
    var value: Int64
}

/// One increment of the counter workload: which writer made it, and the counter value it wrote.
struct LoadTick: Codable {
    /// `writer * 1_000_000 + index`.
    var id: Int64
    var writer: Int64
    var value: Int64
}

/// Several writer processes on one store: each commits `count` transactions that read the shared
/// counter, write it back incremented, and record the value written. When the store serializes
/// writers across processes, the counter ends at the number of acknowledged transactions and the
/// ticks hold every value from 1 to it exactly once.
///
/// A transaction that fails with `.busy` committed nothing (PostgreSQL: it lost to other writers
/// `retryLimit` times in a row; SQLite: the busy timeout passed), so it is run again, as an app
/// would, after reporting `busy I: message`. A writer whose transactions are slower than the
/// others' (a loaded machine, a sanitizer) can lose many times in a row under optimistic
/// concurrency; what the tests check is that no committed update is lost.
enum CounterWorkload {
    static func run(
        on store: ObjectStore,
        writer: Int64,
        count: Int,
        report: (String) -> Void = { _ in },
        acknowledge: (Int) -> Void
    ) throws {
        for index in 0..<count {
            while true {
                do {
                    try store.transaction { tx in
                        let value = (try tx.fetch(LoadCounter.self, id: 1)?.value ?? 0) + 1
                        try tx.save(LoadCounter(id: 1, value: value))
                        try tx.save(LoadTick(id: writer * 1_000_000 + Int64(index), writer: writer, value: value))
                    }
                    break
                } catch let error as StorageError where error.code == .busy {
                    report("busy \(index + 1): \(error.message)")
                }
            }
            acknowledge(index + 1)
        }
    }
}
