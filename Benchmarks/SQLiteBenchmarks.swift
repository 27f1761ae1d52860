import Foundation
import SQLiteBackend
import Storage

/// ObjectStore on SQLite beside a hand-written loop over SQLite's C API (`RawSQLite`) on the
/// same data, in the same run.
struct SQLiteBenchmarks {
    let context: BenchmarkContext

    static let backend = "sqlite"
    static let goals: [Operation: Double] = [
        .insert: 0.7, .fetchAll: 0.5, .lookup: 0.8, .filter: 0.5, .ingestJSON: 0.5,
    ]
    static let suffixes = ["", "-wal", "-shm"]

    /// The query `filter` runs through the predicate API: `age BETWEEN 30 AND 39`.
    static let filter = Column("age") >= 30 && Column("age") <= 39

    func run(_ harness: inout Harness) throws {
        let people = context.people
        progress("sqlite: \(people.count) records")
        let oursPath = context.path("ours.sqlite")
        let rawPath = context.path("raw.sqlite")
        defer {
            context.remove(oursPath, suffixes: Self.suffixes)
            context.remove(rawPath, suffixes: Self.suffixes)
        }

        if context.runs(.insert) {
            var store: ObjectStore?
            var raw: RawSQLite?
            let (ours, baseline) = try harness.measurePair(
                setUpOurs: {
                    store = nil
                    context.remove(oursPath, suffixes: Self.suffixes)
                    store = try ObjectStore(backend: .sqlite(path: oursPath))
                },
                ours: { try store!.save(contentsOf: people) },
                setUpBaseline: {
                    raw = nil
                    context.remove(rawPath, suffixes: Self.suffixes)
                    raw = try RawSQLite(path: rawPath)
                },
                baseline: { try raw!.insert(people) }
            )
            record(&harness, .insert, rows: people.count, ours, "raw C API loop, one prepared statement", baseline)
        } else if context.needsFilledStore {
            try ObjectStore(backend: .sqlite(path: oursPath)).save(contentsOf: people)
            try RawSQLite(path: rawPath).insert(people)
        }

        if context.needsFilledStore {
            let store = try ObjectStore(backend: .sqlite(path: oursPath))
            let raw = try RawSQLite(path: rawPath)
            try measureReads(&harness, store, raw)
        }
        if context.runs(.ingestJSON) { try measureIngestion(&harness) }
        if context.runs(.singleCommits) { try measureSingleCommits(&harness) }
    }

    private func measureReads(_ harness: inout Harness, _ store: ObjectStore, _ raw: RawSQLite) throws {
        let people = context.people
        var found = 0
        var foundRaw = 0
        if context.runs(.fetchAll) {
            let (ours, baseline) = try harness.measurePair(
                warmUp: true,
                ours: { found = try store.fetchAll(Person.self).count },
                baseline: { foundRaw = try raw.fetchAll().count }
            )
            check(found == people.count, "fetchAll returned \(found) records")
            check(foundRaw == people.count, "the raw loop returned \(foundRaw) records")
            record(&harness, .fetchAll, rows: people.count, ours, "raw step loop, columns by index", baseline)
        }
        if context.runs(.lookup) {
            let ids = context.ids
            let (ours, baseline) = try harness.measurePair(
                warmUp: true,
                ours: {
                    found = 0
                    for id in ids where try store.fetch(Person.self, id: id)?.id == id { found += 1 }
                },
                baseline: { foundRaw = try raw.lookUp(ids) }
            )
            check(found == ids.count, "fetch(_:id:) found \(found) records")
            check(foundRaw == ids.count, "the raw look-ups found \(foundRaw) records")
            record(&harness, .lookup, rows: ids.count, ours, "one prepared SELECT … WHERE id = ?", baseline)
        }
        if context.runs(.filter) {
            let expected = context.expectedFilterCount
            let (ours, baseline) = try harness.measurePair(
                warmUp: true,
                ours: { found = try store.fetchAll(Person.self, where: Self.filter).count },
                baseline: { foundRaw = try raw.fetchAll("WHERE age BETWEEN 30 AND 39 ORDER BY id").count }
            )
            check(found == expected, "the filter returned \(found) records, not \(expected)")
            check(foundRaw == expected, "the raw filter returned \(foundRaw) records, not \(expected)")
            record(&harness, .filter, rows: people.count, ours, "raw SQL, WHERE age BETWEEN 30 AND 39", baseline)
        }
        if context.runs(.forEach) {
            let measured = try measureStreamPair(
                harness,
                ours: { sampler in
                    found = 0
                    var ages = 0
                    try store.forEach(Person.self) { person in
                        found += 1
                        ages &+= person.age
                        if found & 4095 == 0 { sampler.sample() }
                    }
                    consume(ages)
                },
                baseline: { sampler in
                    foundRaw = 0
                    var ages = 0
                    try raw.stream { person in
                        foundRaw += 1
                        ages &+= person.age
                        if foundRaw & 4095 == 0 { sampler.sample() }
                    }
                    consume(ages)
                }
            )
            check(found == people.count, "forEach streamed \(found) records")
            check(foundRaw == people.count, "the raw stream returned \(foundRaw) records")
            record(
                &harness,
                .forEach,
                rows: people.count,
                measured.ours,
                "raw step loop",
                measured.baseline,
                memoryGrowth: (measured.oursGrowth, measured.baselineGrowth)
            )
        }
    }

    private func measureIngestion(_ harness: inout Harness) throws {
        let json = context.json
        let oursPath = context.path("ingest-ours.sqlite")
        let rawPath = context.path("ingest-raw.sqlite")
        defer {
            context.remove(oursPath, suffixes: Self.suffixes)
            context.remove(rawPath, suffixes: Self.suffixes)
        }
        var store: ObjectStore?
        var raw: RawSQLite?
        var stored = 0
        var storedRaw = 0
        let (ours, baseline) = try harness.measurePair(
            setUpOurs: {
                store = nil
                context.remove(oursPath, suffixes: Self.suffixes)
                store = try ObjectStore(backend: .sqlite(path: oursPath))
            },
            ours: { stored = try store!.insert(jsonArray: json, into: "Person").count },
            setUpBaseline: {
                raw = nil
                context.remove(rawPath, suffixes: Self.suffixes)
                raw = try RawSQLite(path: rawPath, avatarType: "TEXT")
            },
            baseline: { storedRaw = try raw!.ingest(json: json) }
        )
        check(stored == context.people.count, "insert(jsonArray:into:) stored \(stored) records")
        check(storedRaw == context.people.count, "the raw ingestion stored \(storedRaw) records")
        record(&harness, .ingestJSON, rows: context.people.count, ours, "JSONSerialization + raw insert loop", baseline)
    }

    private func measureSingleCommits(_ harness: inout Harness) throws {
        let people = Person.make(BenchmarkContext.singleCommitCount + 1)
        let oursPath = context.path("single-ours.sqlite")
        let rawPath = context.path("single-raw.sqlite")
        defer {
            context.remove(oursPath, suffixes: Self.suffixes)
            context.remove(rawPath, suffixes: Self.suffixes)
        }
        var store: ObjectStore?
        var raw: RawSQLite?
        // The table exists before the timing starts (its first save creates it).
        let (ours, baseline) = try harness.measurePair(
            setUpOurs: {
                store = nil
                context.remove(oursPath, suffixes: Self.suffixes)
                store = try ObjectStore(backend: .sqlite(path: oursPath))
                try store!.save(people[0])
            },
            ours: { for person in people.dropFirst() { try store!.save(person) } },
            setUpBaseline: {
                raw = nil
                context.remove(rawPath, suffixes: Self.suffixes)
                raw = try RawSQLite(path: rawPath)
                try raw!.insertEachCommitted(people.prefix(1))
            },
            baseline: { try raw!.insertEachCommitted(people.dropFirst()) }
        )
        record(
            &harness,
            .singleCommits,
            rows: people.count - 1,
            ours,
            "autocommit INSERT OR REPLACE per record",
            baseline
        )
    }

    private func record(
        _ harness: inout Harness,
        _ operation: Operation,
        rows: Int,
        _ ours: Duration,
        _ baseline: String,
        _ baselineTime: Duration,
        memoryGrowth: (ours: Int, baseline: Int)? = nil
    ) {
        // The streaming goal: forEach over (up to a million) rows grows memory by at most 64 MB.
        let memoryGoal = operation == .forEach ? 64 * 1_048_576 : nil
        harness.record(
            backend: Self.backend,
            operation: operation,
            rows: rows,
            ours: ours,
            baseline: baseline,
            baselineTime: baselineTime,
            goal: Self.goals[operation],
            memoryGrowth: memoryGrowth,
            memoryGoal: memoryGoal
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
