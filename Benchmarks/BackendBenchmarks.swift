import Foundation
import SQLiteBackend
import Storage

/// A backend's hand-written baseline (`RawSQLite`, `RawLMDB`, `RawFiles`): the raw loops each
/// ObjectStore figure is measured against, and what tells the backends' tables apart.
protocol RawBaseline {
    /// The backend's name in the tables and the JSON output.
    static var backend: String { get }
    /// The ratio (ours / baseline) each operation is expected to reach.
    static var goals: [Operation: Double] { get }
    /// What each operation's baseline does, as the tables name it.
    static var baselines: [Operation: String] { get }
    /// The files beside a store's path that belong to it (`[""]` for a store that is a folder).
    static var suffixes: [String] { get }
    /// The most `forEach` may grow the resident set, where the backend has such a goal.
    static var streamMemoryGoal: Int? { get }

    /// The scratch file or folder for `role` ("ours", "raw", "ingest-ours", ...).
    static func fileName(_ role: String) -> String
    static func openStore(path: String) throws -> ObjectStore
    /// Opens (creating) a raw store; `forJSON`: the one `ingest(json:)` fills.
    static func open(path: String, forJSON: Bool) throws -> Self

    /// `insert`: all the people in one transaction.
    func insertAll(_ people: [Person]) throws
    /// `singleCommits`: each person in a transaction of its own.
    func commitEach(_ people: ArraySlice<Person>) throws
    func readAll() throws -> [Person]
    /// Looks each id up; returns how many were found.
    func lookUp(_ ids: [Int64]) throws -> Int
    /// The people whose id is one of `ids` (which may repeat), each once, by id.
    func readIn(_ ids: [Int64]) throws -> [Person]
    /// The people `age BETWEEN 30 AND 39`.
    func readFiltered() throws -> [Person]
    func streamAll(_ body: (Person) throws -> Void) throws
    /// Parses a JSON array and stores its objects; returns how many.
    func ingest(json: Data) throws -> Int
    /// Splits CSV text (no quoted fields) and stores its records; returns how many, or nil for
    /// a backend without this baseline.
    func ingest(csv: Data) throws -> Int?
    /// Splits NDJSON text into lines, parses each with `JSONSerialization` and stores its
    /// object, calling `sample` every 4,096 lines; returns how many, or nil for a backend
    /// without this baseline.
    func ingest(jsonLines: Data, sample: () -> Void) throws -> Int?

    /// Removes the store at `path` (files beside it with `suffixes`; a server's schema).
    static func remove(_ path: String, in context: BenchmarkContext)

    /// Rows only this backend's table has, measured right after `operation`.
    static func measureExtras(after operation: Operation, _ filled: Stores<Self>, _ harness: inout Harness) throws
}

extension RawBaseline {
    static var suffixes: [String] { [""] }
    static var streamMemoryGoal: Int? { nil }
    func ingest(csv: Data) throws -> Int? { nil }
    func ingest(jsonLines: Data, sample: () -> Void) throws -> Int? { nil }

    static func remove(_ path: String, in context: BenchmarkContext) {
        context.remove(path, suffixes: suffixes)
    }

    static func measureExtras(after operation: Operation, _ filled: Stores<Self>, _ harness: inout Harness) throws {
        // None by default.
    }
}

/// The filled stores the reads run on, ours and the baseline's.
struct Stores<Raw: RawBaseline> {
    let benchmarks: BackendBenchmarks<Raw>
    let store: ObjectStore
    let raw: Raw
}

extension Person {
    /// The query `filter` runs through the predicate API: `age BETWEEN 30 AND 39`.
    static let filter = Column("age") >= 30 && Column("age") <= 39
}

/// ObjectStore on one backend beside its raw baseline on the same data, in the same run: every
/// operation runs the same way for every backend.
struct BackendBenchmarks<Raw: RawBaseline> {
    let context: BenchmarkContext

    func path(_ role: String) -> String { context.path(Raw.fileName(role)) }

    func remove(_ path: String) { Raw.remove(path, in: context) }

    func run(_ harness: inout Harness) throws {
        let people = context.people
        progress("\(Raw.backend): \(people.count) records")
        let oursPath = path("ours")
        let rawPath = path("raw")
        defer {
            remove(oursPath)
            remove(rawPath)
        }

        if context.runs(.insert) {
            let (ours, baseline) = try measureWrites(
                harness,
                into: "",
                ours: { try $0.save(contentsOf: people) },
                baseline: { try $0.insertAll(people) }
            )
            record(&harness, .insert, rows: people.count, ours, baseline)
        } else if context.needsFilledStore {
            try Raw.openStore(path: oursPath).save(contentsOf: people)
            try Raw.open(path: rawPath, forJSON: false).insertAll(people)
        }

        if context.needsFilledStore {
            let store = try Raw.openStore(path: oursPath)
            let raw = try Raw.open(path: rawPath, forJSON: false)
            try measureReads(Stores(benchmarks: self, store: store, raw: raw), &harness)
        }
        if context.runs(.ingestJSON) { try measureIngestion(&harness) }
        if context.runs(.ingestCSV), Raw.baselines[.ingestCSV] != nil { try measureCSVIngestion(&harness) }
        if context.runs(.ingestNDJSON), Raw.baselines[.ingestNDJSON] != nil { try measureNDJSONIngestion(&harness) }
        if context.runs(.singleCommits) { try measureSingleCommits(&harness) }
    }

    private func measureReads(_ filled: Stores<Raw>, _ harness: inout Harness) throws {
        let (people, store, raw) = (context.people, filled.store, filled.raw)
        if context.runs(.fetchAll) {
            try measureCounts(&harness, .fetchAll, rows: people.count, expected: people.count) {
                try store.fetchAll(Person.self).count
            } baseline: {
                try raw.readAll().count
            }
            try Raw.measureExtras(after: .fetchAll, filled, &harness)
        }
        if context.runs(.lookup) {
            let ids = context.ids
            try measureCounts(&harness, .lookup, rows: ids.count, expected: ids.count) {
                try lookUp(ids, in: store)
            } baseline: {
                try raw.lookUp(ids)
            }
            try Raw.measureExtras(after: .lookup, filled, &harness)
            try measureCounts(&harness, .lookupAsync, rows: ids.count, expected: ids.count) {
                try lookUpAsync(ids, in: store)
            } baseline: {
                try lookUp(ids, in: store)
            }
        }
        if context.runs(.inList) {
            let ids = context.ids
            let distinct = Set(ids).count
            try measureCounts(&harness, .inList, rows: distinct, expected: distinct) {
                try store.fetchAll(Person.self, where: Column("id").in(ids)).count
            } baseline: {
                try raw.readIn(ids).count
            }
        }
        if context.runs(.filter) {
            try measureCounts(&harness, .filter, rows: people.count, expected: context.expectedFilterCount) {
                try store.fetchAll(Person.self, where: Person.filter).count
            } baseline: {
                try raw.readFiltered().count
            }
        }
        if context.runs(.forEach) {
            var found = 0
            var foundRaw = 0
            let measured = try measureStreamPair(
                harness,
                ours: { sampler in found = try stream(&sampler) { try store.forEach(Person.self, $0) } },
                baseline: { sampler in foundRaw = try stream(&sampler) { try raw.streamAll($0) } }
            )
            check(found == people.count, "forEach streamed \(found) records")
            check(foundRaw == people.count, "the raw stream returned \(foundRaw) records")
            record(
                &harness,
                .forEach,
                rows: people.count,
                measured.ours,
                measured.baseline,
                memoryGrowth: (measured.oursGrowth, measured.baselineGrowth)
            )
        }
    }

    /// Times a read and its baseline, each returning how many records it found (both run once
    /// untimed first), stops the run unless both found `expected`, and records the figure.
    func measureCounts(
        _ harness: inout Harness,
        _ operation: Operation,
        rows: Int,
        expected: Int,
        ours: () throws -> Int,
        baseline: () throws -> Int
    ) throws {
        var found = 0
        var foundRaw = 0
        let (oursTime, baselineTime) = try harness.measurePair(
            warmUp: true,
            ours: { found = try ours() },
            baseline: { foundRaw = try baseline() }
        )
        let name = operation.rawValue
        check(found == expected, "\(name) found \(found) records, not \(expected)")
        check(foundRaw == expected, "\(name): the baseline found \(foundRaw) records, not \(expected)")
        record(&harness, operation, rows: rows, oursTime, baselineTime)
    }

    /// `fetch(_:id:)` of each id; returns how many were found.
    func lookUp(_ ids: [Int64], in store: ObjectStore) throws -> Int {
        var found = 0
        for id in ids where try store.fetch(Person.self, id: id)?.id == id { found += 1 }
        return found
    }

    /// `await fetch(_:id:)` of each id, the ids shared out among 8 concurrent tasks; returns how
    /// many were found. The benchmark's thread waits for the tasks (it is not one of the pool's).
    func lookUpAsync(_ ids: [Int64], in store: ObjectStore) throws -> Int {
        let done = DispatchSemaphore(value: 0)
        let found = Locked<Result<Int, any Error>>(.success(0))
        Task.detached {
            let result: Result<Int, any Error>
            do {
                result = .success(try await lookUpConcurrently(ids, in: store))
            } catch {
                result = .failure(error)
            }
            found.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try found.withLock { $0 }.get()
    }

    /// Runs a stream, summing the ages and sampling memory every 4,096 rows; returns the rows seen.
    private func stream(
        _ sampler: inout MemorySampler,
        _ forEach: ((Person) throws -> Void) throws -> Void
    ) throws -> Int {
        var found = 0
        var ages = 0
        try forEach { person in
            found += 1
            ages &+= person.age
            if found & 4095 == 0 { sampler.sample() }
        }
        consume(ages)
        return found
    }

    /// Times writes into a new store beside writes into a new raw store, both made (and set up)
    /// untimed before each run at the paths named `name` + "ours" and `name` + "raw", which go
    /// at the end unless `keep`.
    private func measureWrites(
        _ harness: Harness,
        into name: String,
        keep: Bool = true,
        forJSON: Bool = false,
        setUpOurs: (ObjectStore) throws -> Void = { _ in },
        ours: (ObjectStore) throws -> Void,
        setUpBaseline: (Raw) throws -> Void = { _ in },
        baseline: (Raw) throws -> Void
    ) throws -> (ours: Duration, baseline: Duration) {
        let oursPath = path(name + "ours")
        let rawPath = path(name + "raw")
        defer {
            if !keep {
                remove(oursPath)
                remove(rawPath)
            }
        }
        var store: ObjectStore?
        var raw: Raw?
        defer {
            store = nil
            raw = nil
        }
        return try harness.measurePair(
            setUpOurs: {
                store = nil
                remove(oursPath)
                store = try Raw.openStore(path: oursPath)
                try setUpOurs(store!)
            },
            ours: { try ours(store!) },
            setUpBaseline: {
                raw = nil
                remove(rawPath)
                raw = try Raw.open(path: rawPath, forJSON: forJSON)
                try setUpBaseline(raw!)
            },
            baseline: { try baseline(raw!) }
        )
    }

    private func measureIngestion(_ harness: inout Harness) throws {
        let json = context.json
        var stored = 0
        var storedRaw = 0
        let (ours, baseline) = try measureWrites(
            harness,
            into: "ingest-",
            keep: false,
            forJSON: true,
            ours: { stored = try $0.insert(jsonArray: json, into: "Person") },
            baseline: { storedRaw = try $0.ingest(json: json) }
        )
        check(stored == context.people.count, "insert(jsonArray:into:) stored \(stored) records")
        check(storedRaw == context.people.count, "the raw ingestion stored \(storedRaw) records")
        record(&harness, .ingestJSON, rows: context.people.count, ours, baseline)
    }

    private func measureCSVIngestion(_ harness: inout Harness) throws {
        let csv = Person.csv(context.people)
        var stored = 0
        var storedRaw: Int?
        let (ours, baseline) = try measureWrites(
            harness,
            into: "ingest-csv-",
            keep: false,
            forJSON: true,
            ours: { stored = try $0.insert(csv: csv, into: "Person") },
            baseline: { storedRaw = try $0.ingest(csv: csv) }
        )
        check(stored == context.people.count, "insert(csv:into:) stored \(stored) records")
        check(storedRaw == context.people.count, "the raw CSV ingestion stored \(storedRaw ?? -1) records")
        record(&harness, .ingestCSV, rows: context.people.count, ours, baseline)
    }

    /// `insert(jsonLines:into:)` of the people as NDJSON beside the raw line-by-line baseline,
    /// each with the largest growth of the resident set over its runs (the peak the kernel
    /// kept, `VmHWM`, reset before each run; the NDJSON text itself is made before).
    private func measureNDJSONIngestion(_ harness: inout Harness) throws {
        let lines = try Person.jsonLines(context.people)
        var stored = 0
        var storedRaw: Int?
        var oursGrowth = 0
        var baselineGrowth = 0
        var peak = PeakResident()
        let (ours, baseline) = try measureWrites(
            harness,
            into: "ingest-ndjson-",
            keep: false,
            forJSON: true,
            ours: {
                peak.reset()
                stored = try $0.insert(jsonLines: lines, into: "Person") { _ in peak.sample() }
                oursGrowth = max(oursGrowth, peak.growth)
            },
            baseline: {
                peak.reset()
                storedRaw = try $0.ingest(jsonLines: lines) { peak.sample() }
                baselineGrowth = max(baselineGrowth, peak.growth)
            }
        )
        check(stored == context.people.count, "insert(jsonLines:into:) stored \(stored) records")
        check(storedRaw == context.people.count, "the raw NDJSON ingestion stored \(storedRaw ?? -1) records")
        record(
            &harness,
            .ingestNDJSON,
            rows: context.people.count,
            ours,
            baseline,
            memoryGrowth: (oursGrowth, baselineGrowth)
        )
    }

    private func measureSingleCommits(_ harness: inout Harness) throws {
        let people = Person.make(BenchmarkContext.singleCommitCount + 1)
        // The table exists before the timing starts (its first save creates it).
        let (ours, baseline) = try measureWrites(
            harness,
            into: "single-",
            keep: false,
            setUpOurs: { try $0.save(people[0]) },
            ours: { store in for person in people.dropFirst() { try store.save(person) } },
            setUpBaseline: { try $0.commitEach(people.prefix(1)) },
            baseline: { try $0.commitEach(people.dropFirst()) }
        )
        record(&harness, .singleCommits, rows: people.count - 1, ours, baseline)
    }

    /// Records a figure for this backend, with the baseline named as `Raw.baselines` names it.
    func record(
        _ harness: inout Harness,
        _ operation: Operation,
        rows: Int,
        _ ours: Duration,
        _ baselineTime: Duration,
        memoryGrowth: (ours: Int, baseline: Int)? = nil
    ) {
        harness.record(
            backend: Raw.backend,
            operation: operation,
            rows: rows,
            ours: ours,
            baseline: Raw.baselines[operation] ?? Operation.sharedBaselines[operation, default: ""],
            baselineTime: baselineTime,
            goal: Raw.goals[operation] ?? Operation.sharedGoals[operation],
            memoryGrowth: memoryGrowth,
            memoryGoal: operation == .forEach ? Raw.streamMemoryGoal : nil
        )
    }
}

/// Stops the run when a benchmark read back the wrong data: a fast wrong answer is no result.
func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        progress("error: " + message())
        exit(1)
    }
}

/// The look-ups of `lookUpAsync`, from 8 concurrent tasks.
private func lookUpConcurrently(_ ids: [Int64], in store: ObjectStore) async throws -> Int {
    try await withThrowingTaskGroup(of: Int.self) { group in
        for task in 0..<8 {
            group.addTask {
                var found = 0
                for index in stride(from: task, to: ids.count, by: 8) {
                    if try await store.fetch(Person.self, id: ids[index])?.id == ids[index] { found += 1 }
                }
                return found
            }
        }
        return try await group.reduce(0, +)
    }
}
