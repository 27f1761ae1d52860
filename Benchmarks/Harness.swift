import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The operations every backend is measured on, named as in the JSON output.
enum Operation: String, CaseIterable {
    case insert, fetchAll, lookup, filter, forEach, ingestJSON, singleCommits
    /// `fetchAll` with `Column("id").in(ids)`: the 10,000 random look-up ids as one IN list.
    case inList = "in"
    /// `insert(csv:into:)` of the people as CSV (SQLite's table only: its raw baseline is a
    /// hand-written split and insert loop).
    case ingestCSV
    /// `insert(jsonLines:into:)` of the people as NDJSON `Data` (SQLite and LMDB: their raw
    /// baselines split the lines and parse each with `JSONSerialization`), with the growth of
    /// the resident set while it runs.
    case ingestNDJSON
    /// ObjectStore on LMDB beside ObjectStore on SQLite for the same look-ups (LMDB's table only).
    case lookupVsSQLite
    /// Opening a file archive store (which reads every file) and `fetchAll` (archive's table only).
    case openAndFetchAll
    /// The `lookup` ids through `await store.fetch` from 8 concurrent tasks, beside the
    /// synchronous `fetch` on one thread (every backend; comes with `lookup`).
    case lookupAsync
    /// `ObjectStore.copy(to:)` between SQLite and LMDB, verified (`--copy`; CopyBenchmarks.swift).
    case copy
    /// 1, 2, 4 and 8 threads of random `fetch(_:id:)`, alone and beside a bulk-inserting thread
    /// (sqlite and lmdb; Benchmarks/ConcurrentLookups.swift).
    case concurrentLookups
    /// `update(_:set:where:)` of a tenth of the records, beside the engine's own `UPDATE … WHERE`
    /// or a raw read-modify-put loop (`--update`; UpdateBenchmarks.swift).
    case update
    /// Single saves with one `observe` consumer beside the same saves with none (`--observe`;
    /// ObserveBenchmarks.swift).
    case observe
    /// `aggregate(_:_:groupBy:)`, a sum per city, beside the engine's own (`--aggregates`;
    /// Benchmarks/AggregateBenchmarks.swift).
    case aggregate
    /// `fetchAll(_:including:via:)` of books with their authors, beside two `fetchAll` joined by
    /// hand (`--relations`; Benchmarks/RelationBenchmarks.swift).
    case eagerLoad
    /// A delete cascading to an author's books, beside SQLite's `ON DELETE CASCADE` (`--relations`).
    case cascadeDelete

    /// The baseline and goal of the operations measured alike on every backend.
    static let sharedBaselines: [Operation: String] = [
        .lookupAsync: "ObjectStore fetch(_:id:), synchronous, one thread"
    ]
    static let sharedGoals: [Operation: Double] = [.lookupAsync: 0.5]

    /// The operations `--operations` can name; the two above come with `lookup` and `fetchAll`.
    static let selectable: [Operation] = [
        .insert, .fetchAll, .lookup, .inList, .filter, .forEach, .ingestJSON, .ingestCSV, .ingestNDJSON,
        .singleCommits,
        .concurrentLookups,
    ]
}

/// What a ratio is expected to reach (ours / baseline at least `minimum`).
struct Goal {
    var minimum: Double

    func describe(_ ratio: Double) -> String {
        String(format: "≥ %.1f ", minimum) + (ratio >= minimum ? "met" : "NOT MET")
    }
}

/// Shared timing: runs a case and its baseline alternately several times (reads after one
/// untimed warm-up) and keeps the medians, and prints each figure beside its baseline.
struct Harness {
    var count: Int
    var repetitions: Int
    var results: [Result] = []

    struct Result: Encodable {
        var backend: String
        var operation: String
        var rowsPerSecond: Double
        var baseline: String
        var baselineRowsPerSecond: Double
        var ratio: Double
        var goal: Double?
        /// For `forEach`: the largest growth of the resident set while streaming, in bytes.
        var memoryGrowthBytes: Int?
        var baselineMemoryGrowthBytes: Int?
        /// For `forEach`: the most the resident set may grow, in bytes.
        var memoryGoalBytes: Int?
        /// What the table prints below the figures (`concurrentLookups` beside a writer: the
        /// readers' rate against their rate alone, and the writer's).
        var note: String?
    }

    /// How long one figure may keep repeating: once its runs took this long, no more are started.
    static let timeBudget = Duration.seconds(4)

    /// The median durations of our case and its baseline, run alternately (ours, baseline,
    /// ours, ...) so that both see the same load on a shared machine; `setUp`s run untimed
    /// before each run. With `warmUp`, each runs once untimed first. The time budget stops the
    /// repeating only after `atLeast` pairs.
    func measurePair(
        warmUp: Bool = false,
        atLeast: Int = 1,
        setUpOurs: () throws -> Void = {},
        ours: () throws -> Void,
        setUpBaseline: () throws -> Void = {},
        baseline: () throws -> Void
    ) rethrows -> (ours: Duration, baseline: Duration) {
        if warmUp {
            try setUpOurs()
            try ours()
            try setUpBaseline()
            try baseline()
        }
        let clock = ContinuousClock()
        var oursTimes: [Duration] = []
        var baselineTimes: [Duration] = []
        for _ in 0..<repetitions {
            try setUpOurs()
            oursTimes.append(try clock.measure(ours))
            try setUpBaseline()
            baselineTimes.append(try clock.measure(baseline))
            // A slow pair (fsync-bound file writes) stops repeating after its time budget.
            if oursTimes.count >= atLeast, (oursTimes + baselineTimes).reduce(.zero, +) > Self.timeBudget * 2 {
                break
            }
        }
        return (Self.median(oursTimes), Self.median(baselineTimes))
    }

    static func median(_ durations: [Duration]) -> Duration {
        durations.sorted()[durations.count / 2]
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func rate(_ rows: Int, _ duration: Duration) -> Double {
        Double(rows) / max(seconds(duration), 1e-9)
    }

    mutating func record(
        backend: String,
        operation: Operation,
        rows: Int,
        ours: Duration,
        baseline: String,
        baselineTime: Duration,
        goal: Double? = nil,
        memoryGrowth: (ours: Int, baseline: Int)? = nil,
        memoryGoal: Int? = nil
    ) {
        record(
            backend: backend,
            operation: operation,
            rowsPerSecond: Self.rate(rows, ours),
            baseline: baseline,
            baselineRowsPerSecond: Self.rate(rows, baselineTime),
            goal: goal,
            memoryGrowth: memoryGrowth,
            memoryGoal: memoryGoal
        )
    }

    mutating func record(
        backend: String,
        operation: Operation,
        rowsPerSecond: Double,
        baseline: String,
        baselineRowsPerSecond: Double,
        goal: Double? = nil,
        memoryGrowth: (ours: Int, baseline: Int)? = nil,
        memoryGoal: Int? = nil
    ) {
        let result = Result(
            backend: backend,
            operation: operation.rawValue,
            rowsPerSecond: rowsPerSecond,
            baseline: baseline,
            baselineRowsPerSecond: baselineRowsPerSecond,
            ratio: rowsPerSecond / max(baselineRowsPerSecond, 1e-9),
            goal: goal,
            memoryGrowthBytes: memoryGrowth?.ours,
            baselineMemoryGrowthBytes: memoryGrowth?.baseline,
            memoryGoalBytes: memoryGoal
        )
        results.append(result)
        var line =
            "  \(operation.rawValue): \(Self.format(result.rowsPerSecond)) rows/s vs"
            + " \(Self.format(result.baselineRowsPerSecond)), ratio \(String(format: "%.2f", result.ratio))"
        if let memoryGrowth { line += ", memory +\(Self.megabytes(memoryGrowth.ours))" }
        progress(line)
    }

    /// The widest line the tables print (a terminal of 100 columns shows them unwrapped).
    static let lineWidth = 100

    /// One table per backend, at most `lineWidth` columns wide: the figures, then each
    /// operation's baseline and the notes (the memory growth of `forEach`, the readers and the
    /// writer of `concurrentLookups` beside a writer).
    func printTables() {
        var backends: [String] = []
        for result in results where !backends.contains(result.backend) { backends.append(result.backend) }
        for backend in backends {
            let mine = results.filter { $0.backend == backend }
            print("\n\(backend)")
            let header = ["operation", "rows/s", "baseline rows/s", "ratio", "goal"]
            var rows = [header]
            for result in mine {
                var goal = result.goal.map { Goal(minimum: $0).describe(result.ratio) } ?? ""
                if let limit = result.memoryGoalBytes, let growth = result.memoryGrowthBytes {
                    goal = "≤ \(limit / 1_048_576) MB " + (growth <= limit ? "met" : "NOT MET")
                }
                rows.append([
                    result.operation, Self.format(result.rowsPerSecond), Self.format(result.baselineRowsPerSecond),
                    String(format: "%.2f", result.ratio), goal,
                ])
            }
            let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
            for (index, row) in rows.enumerated() {
                let line = row.indices.map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                print(line.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
                if index == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
            }
            var baselines: [(String, String)] = []
            for result in mine {
                let operation = result.operation.split(separator: " ").first.map(String.init) ?? result.operation
                if !baselines.contains(where: { $0 == (operation, result.baseline) }) {
                    baselines.append((operation, result.baseline))
                }
            }
            print("baselines:")
            for (operation, baseline) in baselines { print(Self.wrap("\(operation): \(baseline)", indent: "  ")) }
            var notes = mine.compactMap { result in result.note.map { "\(result.operation): \($0)" } }
            for result in mine {
                if let ours = result.memoryGrowthBytes, let theirs = result.baselineMemoryGrowthBytes {
                    notes.append(
                        "\(result.operation): the resident set grew by \(Self.megabytes(ours)) while streaming,"
                            + " the baseline's by \(Self.megabytes(theirs))"
                    )
                }
            }
            if !notes.isEmpty {
                print("notes:")
                for note in notes { print(Self.wrap(note, indent: "  ")) }
            }
        }
    }

    /// `text` broken at spaces into lines of at most `lineWidth` columns, each starting with
    /// `indent` (continuation lines with two more spaces).
    static func wrap(_ text: String, indent: String) -> String {
        var lines: [String] = []
        var line = indent
        for word in text.split(separator: " ") {
            let lead = lines.isEmpty ? indent : indent + "  "
            if line.count > lead.count, line.count + 1 + word.count > lineWidth {
                lines.append(line)
                line = indent + "  " + word
            } else {
                line += (line.count > lead.count ? " " : "") + word
            }
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }

    /// Writes `{"count": N, "results": [...]}`.
    func writeJSON(to path: String) throws {
        struct Report: Encodable {
            var count: Int
            var results: [Result]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(Report(count: count, results: results)).write(to: URL(fileURLWithPath: path))
    }

    static func format(_ rate: Double) -> String {
        let rounded = Int(rate.rounded())
        var digits = Array(String(rounded))
        var index = digits.count - 3
        while index > 0 {
            digits.insert(",", at: index)
            index -= 3
        }
        return String(digits)
    }

    static func megabytes(_ bytes: Int) -> String {
        String(format: "%.1f MB", Double(bytes) / 1_048_576)
    }
}

/// Follows the resident set size while a stream runs: `sample()` every few thousand rows, then
/// `growth` is the largest rise above the resident size at the start.
struct MemorySampler {
    private let start: Int
    private(set) var peak: Int

    init() {
        start = Self.residentBytes()
        peak = start
    }

    mutating func sample() {
        peak = max(peak, Self.residentBytes())
    }

    var growth: Int { max(0, peak - start) }

    /// The resident set size of this process, from `/proc/self/statm` (0 where there is none).
    static func residentBytes() -> Int {
        #if os(Linux)
        let descriptor = open("/proc/self/statm", O_RDONLY)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        let fields = String(decoding: buffer[0..<count], as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return 0
        #endif
    }
}

/// The peak of the resident set over a stretch of work: the kernel's own high-water mark
/// (`VmHWM`), reset by writing 5 to `/proc/self/clear_refs`, so that nothing between samples is
/// missed; where it cannot be reset, the largest of the samples taken.
struct PeakResident {
    private var start = 0
    private var sampled = 0
    private var kernelPeak = false

    /// Starts a stretch: the peak from here on is measured against the resident set now.
    mutating func reset() {
        kernelPeak = Self.resetHighWaterMark()
        start = MemorySampler.residentBytes()
        sampled = start
    }

    mutating func sample() {
        sampled = max(sampled, MemorySampler.residentBytes())
    }

    /// The largest rise of the resident set above its size at `reset()`.
    var growth: Int {
        let peak = max(sampled, kernelPeak ? Self.highWaterMark() ?? 0 : 0, MemorySampler.residentBytes())
        return max(0, peak - start)
    }

    private static func resetHighWaterMark() -> Bool {
        #if os(Linux)
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
        #else
        return false
        #endif
    }

    /// `VmHWM` of `/proc/self/status`, in bytes.
    static func highWaterMark(path: String = "/proc/self/status") -> Int? {
        guard let status = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kilobytes = line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ").first
            return kilobytes.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }
}

/// Runs our stream and its baseline alternately, as `measurePair` does, and keeps each one's
/// median time and largest memory growth. Each body gets a sampler to call every few thousand rows.
func measureStreamPair(
    _ harness: Harness,
    ours: (inout MemorySampler) throws -> Void,
    baseline: (inout MemorySampler) throws -> Void
) throws -> (ours: Duration, baseline: Duration, oursGrowth: Int, baselineGrowth: Int) {
    var oursGrowth = 0
    var baselineGrowth = 0
    let (oursTime, baselineTime) = try harness.measurePair(
        warmUp: true,
        ours: {
            var sampler = MemorySampler()
            try ours(&sampler)
            sampler.sample()
            oursGrowth = max(oursGrowth, sampler.growth)
        },
        baseline: {
            var sampler = MemorySampler()
            try baseline(&sampler)
            sampler.sample()
            baselineGrowth = max(baselineGrowth, sampler.growth)
        }
    )
    return (oursTime, baselineTime, oursGrowth, baselineGrowth)
}

/// Progress goes to stderr, so stdout holds only the results.
func progress(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Keeps a value alive so the optimizer cannot drop the work that made it.
@inline(never)
func consume<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// What every backend's benchmarks share: the data, the look-up ids, the selected operations
/// and a scratch folder.
struct BenchmarkContext {
    let directory: URL
    let people: [Person]
    /// The 10,000 ids looked up one by one.
    let ids: [Int64]
    /// The people as a JSON array, made only when `ingestJSON` runs.
    let json: Data
    let operations: Set<Operation>
    /// How many records `singleCommits` saves, each in a transaction of its own.
    static let singleCommitCount = 1_000

    func runs(_ operation: Operation) -> Bool { operations.contains(operation) }

    /// Whether any read of the filled store runs.
    var needsFilledStore: Bool {
        !operations.isDisjoint(with: [.fetchAll, .lookup, .inList, .filter, .forEach, .lookupVsSQLite])
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Removes a file or folder and the files beside it with `suffixes`.
    func remove(_ path: String, suffixes: [String] = [""]) {
        for suffix in suffixes { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// `people` in the filter (`age BETWEEN 30 AND 39`).
    var expectedFilterCount: Int { people.count { $0.isInFilter } }
}
