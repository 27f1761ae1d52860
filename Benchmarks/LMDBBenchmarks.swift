import Foundation
import LMDBBackend
import SQLiteBackend
import Storage

/// ObjectStore on LMDB beside a hand-written loop over LMDB's C API (`RawLMDB`) on the same
/// data, in the same run; its look-ups also beside ObjectStore on SQLite's.
struct LMDBBenchmarks {
    let context: BenchmarkContext

    static let backend = "lmdb"
    static let goals: [Operation: Double] = [.insert: 0.5, .fetchAll: 0.5, .lookup: 0.7, .lookupVsSQLite: 2]
    static let suffixes = ["", "-lock"]

    func run(_ harness: inout Harness) throws {
        let people = context.people
        progress("lmdb: \(people.count) records")
        let oursPath = context.path("ours.lmdb")
        let rawPath = context.path("raw.lmdb")
        defer {
            context.remove(oursPath, suffixes: Self.suffixes)
            context.remove(rawPath, suffixes: Self.suffixes)
        }

        if context.runs(.insert) {
            var store: ObjectStore?
            var raw: RawLMDB?
            let (ours, baseline) = try harness.measurePair(
                setUpOurs: {
                    store = nil
                    context.remove(oursPath, suffixes: Self.suffixes)
                    store = try ObjectStore(backend: .lmdb(path: oursPath))
                },
                ours: { try store!.save(contentsOf: people) },
                setUpBaseline: {
                    raw = nil
                    context.remove(rawPath, suffixes: Self.suffixes)
                    raw = try RawLMDB(path: rawPath)
                },
                baseline: { try raw!.insert(people) }
            )
            store = nil
            raw = nil
            record(&harness, .insert, rows: people.count, ours, "raw mdb_put loop, fixed binary layout", baseline)
        } else if context.needsFilledStore {
            try ObjectStore(backend: .lmdb(path: oursPath)).save(contentsOf: people)
            try RawLMDB(path: rawPath).insert(people)
        }

        if context.needsFilledStore {
            let store = try ObjectStore(backend: .lmdb(path: oursPath))
            let raw = try RawLMDB(path: rawPath)
            try measureReads(&harness, store, raw)
        }
        if context.runs(.ingestJSON) { try measureIngestion(&harness) }
        if context.runs(.singleCommits) { try measureSingleCommits(&harness) }
    }

    private func measureReads(_ harness: inout Harness, _ store: ObjectStore, _ raw: RawLMDB) throws {
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
            record(&harness, .fetchAll, rows: people.count, ours, "raw cursor scan, fixed layout", baseline)
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
            record(&harness, .lookup, rows: ids.count, ours, "mdb_get in a read transaction each", baseline)
            try compareWithSQLite(&harness, store)
        }
        if context.runs(.filter) {
            let expected = context.expectedFilterCount
            let (ours, baseline) = try harness.measurePair(
                warmUp: true,
                ours: { found = try store.fetchAll(Person.self, where: SQLiteBenchmarks.filter).count },
                baseline: { foundRaw = try raw.fetchFiltered().count }
            )
            check(found == expected, "the filter returned \(found) records, not \(expected)")
            check(foundRaw == expected, "the raw filter returned \(foundRaw) records, not \(expected)")
            record(&harness, .filter, rows: people.count, ours, "raw cursor scan testing age in place", baseline)
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
                "raw cursor scan",
                measured.baseline,
                memoryGrowth: (measured.oursGrowth, measured.baselineGrowth)
            )
        }
    }

    /// LMDB's look-ups beside SQLite's, both through ObjectStore, run alternately on a SQLite
    /// store of the same people (so both see the same load).
    private func compareWithSQLite(_ harness: inout Harness, _ store: ObjectStore) throws {
        let path = context.path("compare.sqlite")
        defer { context.remove(path, suffixes: SQLiteBenchmarks.suffixes) }
        let sqlite = try ObjectStore(backend: .sqlite(path: path))
        try sqlite.save(contentsOf: context.people)
        let ids = context.ids
        var found = 0
        var foundSQLite = 0
        let (ours, baseline) = try harness.measurePair(
            warmUp: true,
            ours: {
                found = 0
                for id in ids where try store.fetch(Person.self, id: id)?.id == id { found += 1 }
            },
            baseline: {
                foundSQLite = 0
                for id in ids where try sqlite.fetch(Person.self, id: id)?.id == id { foundSQLite += 1 }
            }
        )
        check(found == ids.count, "fetch(_:id:) found \(found) records")
        check(foundSQLite == ids.count, "fetch(_:id:) on SQLite found \(foundSQLite) records")
        record(&harness, .lookupVsSQLite, rows: ids.count, ours, "ObjectStore on SQLite, fetch(_:id:)", baseline)
    }

    private func measureIngestion(_ harness: inout Harness) throws {
        let json = context.json
        let oursPath = context.path("ingest-ours.lmdb")
        let rawPath = context.path("ingest-raw.lmdb")
        defer {
            context.remove(oursPath, suffixes: Self.suffixes)
            context.remove(rawPath, suffixes: Self.suffixes)
        }
        var store: ObjectStore?
        var raw: RawLMDB?
        var stored = 0
        var storedRaw = 0
        let (ours, baseline) = try harness.measurePair(
            setUpOurs: {
                store = nil
                context.remove(oursPath, suffixes: Self.suffixes)
                store = try ObjectStore(backend: .lmdb(path: oursPath))
            },
            ours: { stored = try store!.insert(jsonArray: json, into: "Person").count },
            setUpBaseline: {
                raw = nil
                context.remove(rawPath, suffixes: Self.suffixes)
                raw = try RawLMDB(path: rawPath)
            },
            baseline: { storedRaw = try raw!.ingest(json: json) }
        )
        store = nil
        raw = nil
        check(stored == context.people.count, "insert(jsonArray:into:) stored \(stored) records")
        check(storedRaw == context.people.count, "the raw ingestion stored \(storedRaw) records")
        record(
            &harness,
            .ingestJSON,
            rows: context.people.count,
            ours,
            "JSONSerialization + raw mdb_put loop",
            baseline
        )
    }

    private func measureSingleCommits(_ harness: inout Harness) throws {
        let people = Person.make(BenchmarkContext.singleCommitCount + 1)
        let oursPath = context.path("single-ours.lmdb")
        let rawPath = context.path("single-raw.lmdb")
        defer {
            context.remove(oursPath, suffixes: Self.suffixes)
            context.remove(rawPath, suffixes: Self.suffixes)
        }
        var store: ObjectStore?
        var raw: RawLMDB?
        let (ours, baseline) = try harness.measurePair(
            setUpOurs: {
                store = nil
                context.remove(oursPath, suffixes: Self.suffixes)
                store = try ObjectStore(backend: .lmdb(path: oursPath))
                try store!.save(people[0])
            },
            ours: { for person in people.dropFirst() { try store!.save(person) } },
            setUpBaseline: {
                raw = nil
                context.remove(rawPath, suffixes: Self.suffixes)
                raw = try RawLMDB(path: rawPath)
                try raw!.insertEachCommitted(people.prefix(1))
            },
            baseline: { try raw!.insertEachCommitted(people.dropFirst()) }
        )
        store = nil
        raw = nil
        record(
            &harness,
            .singleCommits,
            rows: people.count - 1,
            ours,
            "one write transaction per mdb_put",
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
        harness.record(
            backend: Self.backend,
            operation: operation,
            rows: rows,
            ours: ours,
            baseline: baseline,
            baselineTime: baselineTime,
            goal: Self.goals[operation],
            memoryGrowth: memoryGrowth
        )
    }
}
