import Foundation
import Storage

// `concurrentLookups` (issue 17): 1, 2, 4 and 8 threads doing random `fetch(_:id:)` for a fixed
// time, then the same while one more thread bulk-inserts; beside raw code doing the same (its
// own connection per thread for SQLite, one shared environment for LMDB, which a process may
// open only once). Reported: look-ups per second of all the threads together, the ratio to raw,
// and how much the writer slowed the readers (throughput with the writer / without).

/// A baseline whose look-ups can run on several threads.
protocol ConcurrentBaseline: ScalableBaseline {
    /// A handle for one more thread on the store `shared` has open at `path`.
    static func reader(sharing shared: Self, path: String) throws -> Self
}

extension RawSQLite: ConcurrentBaseline {
    /// SQLite: a connection per thread, as ObjectStore's readers have.
    static func reader(sharing shared: RawSQLite, path: String) throws -> RawSQLite { try RawSQLite(path: path) }
}

extension RawLMDB: ConcurrentBaseline {
    /// LMDB: the one environment (opened with MDB_NOTLS), shared by the threads.
    static func reader(sharing shared: RawLMDB, path: String) throws -> RawLMDB { shared }
}

/// Hands a value that is used on other threads over to them (the baselines are plain classes
/// whose C handles allow it: SQLite connections one per thread, LMDB's NOTLS environment).
private final class Handed<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

struct ConcurrentLookups<Raw: ConcurrentBaseline> {
    let directory: URL
    let count: Int
    /// How long each configuration runs.
    static var duration: Duration { .seconds(1) }
    static var threadCounts: [Int] { [1, 2, 4, 8] }
    /// Records per write transaction of the bulk-inserting thread.
    static var writeBatch: Int { 1_000 }

    func run(_ harness: inout Harness) throws {
        progress("\(Raw.backend): concurrentLookups on \(Harness.format(Double(count))) records")
        let oursPath = directory.appendingPathComponent(Raw.fileName("concurrent-ours")).path
        let rawPath = directory.appendingPathComponent(Raw.fileName("concurrent-raw")).path
        defer {
            for path in [oursPath, rawPath] {
                for suffix in Raw.suffixes { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
        }
        let people = PeopleSequence(count: count)
        do {
            let store = try Raw.openStore(path: oursPath)
            try store.save(contentsOf: people)
            let raw = try Raw.open(path: rawPath, forJSON: false)
            try raw.insertAll(streaming: people)
            let ids = Person.randomIDs(100_000, upTo: count)
            let batch = Array(PeopleSequence(count: Self.writeBatch))
            var alone: [Int: (ours: Double, raw: Double)] = [:]
            for withWriter in [false, true] {
                for threads in Self.threadCounts {
                    let ours = try measure(threads: threads, ids: ids, batch: withWriter ? batch : nil) {
                        let handed = Handed(store)
                        return { chunk in
                            var found = 0
                            for id in chunk where try handed.value.fetch(Person.self, id: id)?.id == id { found += 1 }
                            return found
                        }
                    } write: { people in
                        try store.save(contentsOf: people)
                    }
                    let baseline = try measure(threads: threads, ids: ids, batch: withWriter ? batch : nil) {
                        let handed = Handed(try Raw.reader(sharing: raw, path: rawPath))
                        return { chunk in try handed.value.lookUp(Array(chunk)) }
                    } write: { people in
                        try raw.insertAll(people)
                    }
                    var name = "concurrentLookups \(threads) thread\(threads == 1 ? "" : "s")"
                    var baselineName = "raw look-ups, same threads"
                    var note: String?
                    if withWriter, let before = alone[threads] {
                        name += " + writer"
                        baselineName += " + raw writer"
                        note = String(
                            format: "readers at %.2f of alone, raw %.2f; writer %@ rows/s, raw %@",
                            ours.lookups / max(before.ours, 1e-9),
                            baseline.lookups / max(before.raw, 1e-9),
                            Harness.format(ours.written),
                            Harness.format(baseline.written)
                        )
                    } else {
                        alone[threads] = (ours.lookups, baseline.lookups)
                    }
                    let result = Harness.Result(
                        backend: Raw.backend,
                        operation: name,
                        rowsPerSecond: ours.lookups,
                        baseline: baselineName,
                        baselineRowsPerSecond: baseline.lookups,
                        ratio: ours.lookups / max(baseline.lookups, 1e-9),
                        note: note
                    )
                    harness.results.append(result)
                    progress(
                        "  \(name): \(Harness.format(ours.lookups)) look-ups/s vs \(Harness.format(baseline.lookups)),"
                            + " ratio \(String(format: "%.2f", result.ratio))"
                    )
                }
            }
        }
    }

    /// Runs `threads` reader threads (each with the look-up closure `makeReader` makes on the
    /// calling thread) for `duration`, and with `batch` one more thread that writes copies of
    /// the batch under new ids meanwhile. Returns look-ups and rows written per second.
    private func measure(
        threads: Int,
        ids: [Int64],
        batch: [Person]?,
        makeReader: () throws -> (ArraySlice<Int64>) throws -> Int,
        write: @escaping ([Person]) throws -> Void
    ) throws -> (lookups: Double, written: Double) {
        let readers = try (0..<threads).map { _ in Handed(try makeReader()) }
        let stop = Locked(false)
        let totals = Locked((lookups: 0, written: 0, failure: String?.none))
        let group = DispatchGroup()
        let clock = ContinuousClock()
        let start = clock.now
        var spawned: [Thread] = []
        for (index, reader) in readers.enumerated() {
            group.enter()
            spawned.append(
                Thread {
                    defer { group.leave() }
                    var done = 0
                    var position = (index * 7_919) % ids.count
                    do {
                        while !stop.withLock({ $0 }) {
                            let end = min(position + 100, ids.count)
                            let chunk = ids[position..<end]
                            let found = try reader.value(chunk)
                            guard found == chunk.count else { throw Failure("found \(found) of \(chunk.count)") }
                            done += chunk.count
                            position = end == ids.count ? 0 : end
                        }
                    } catch {
                        totals.withLock { $0.failure = "reader: \(error)" }
                    }
                    totals.withLock { $0.lookups += done }
                }
            )
        }
        if let batch {
            let handedBatch = Handed(batch)
            let handedWrite = Handed(write)
            let firstID = Int64(count) + 1 + Int64(threads) * 10_000_000
            group.enter()
            spawned.append(
                Thread {
                    defer { group.leave() }
                    var written = 0
                    var next = firstID
                    do {
                        while !stop.withLock({ $0 }) {
                            var people = handedBatch.value
                            for index in people.indices {
                                people[index].id = next
                                next += 1
                            }
                            try handedWrite.value(people)
                            written += people.count
                        }
                    } catch {
                        totals.withLock { $0.failure = "writer: \(error)" }
                    }
                    totals.withLock { $0.written += written }
                }
            )
        }
        for thread in spawned { thread.start() }
        Thread.sleep(forTimeInterval: Harness.seconds(Self.duration))
        stop.withLock { $0 = true }
        group.wait()
        let elapsed = Harness.seconds(clock.now - start)
        let result = totals.withLock { $0 }
        if let failure = result.failure { check(false, "concurrentLookups: \(failure)") }
        return (Double(result.lookups) / elapsed, Double(result.written) / elapsed)
    }
}

private struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
