import FileArchiveBackend
import Foundation
import Storage

/// ObjectStore on the file archive backend beside Foundation's coders with one atomic write per
/// file (`RawFiles`) on the same data, in the same run.
struct ArchiveBenchmarks {
    let context: BenchmarkContext

    static let backend = "archive"
    static let goals: [Operation: Double] = [.insert: 5, .fetchAll: 2]

    func run(_ harness: inout Harness) throws {
        let people = context.people
        progress("archive: \(people.count) records")
        let oursPath = context.path("ours-archive")
        let rawFolder = context.directory.appendingPathComponent("raw-json")
        defer {
            context.remove(oursPath)
            context.remove(rawFolder.path)
        }

        if context.runs(.insert) {
            var store: ObjectStore?
            var raw: RawFiles?
            let (ours, baseline) = try harness.measurePair(
                setUpOurs: {
                    store = nil
                    context.remove(oursPath)
                    store = try ObjectStore(backend: .fileArchive(directory: oursPath))
                },
                ours: { try store!.save(contentsOf: people) },
                setUpBaseline: {
                    context.remove(rawFolder.path)
                    raw = try RawFiles(folder: rawFolder)
                },
                baseline: { try raw!.insert(people) }
            )
            record(&harness, .insert, rows: people.count, ours, "JSONEncoder + atomic write per file", baseline)
        } else if context.needsFilledStore {
            try ObjectStore(backend: .fileArchive(directory: oursPath)).save(contentsOf: people)
            try RawFiles(folder: rawFolder).insert(people)
        }

        if context.needsFilledStore {
            let store = try ObjectStore(backend: .fileArchive(directory: oursPath))
            let raw = try RawFiles(folder: rawFolder)
            try measureReads(&harness, store, raw, oursPath)
        }
        if context.runs(.ingestJSON) { try measureIngestion(&harness) }
        if context.runs(.singleCommits) { try measureSingleCommits(&harness) }
    }

    private func measureReads(_ harness: inout Harness, _ store: ObjectStore, _ raw: RawFiles, _ path: String) throws {
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
            record(&harness, .fetchAll, rows: people.count, ours, "read + JSONDecoder per file", baseline)
            // The store keeps its records in memory once open; opening reads every file.
            let (open, rawAgain) = try harness.measurePair(
                ours: { found = try ObjectStore(backend: .fileArchive(directory: path)).fetchAll(Person.self).count },
                baseline: { foundRaw = try raw.fetchAll().count }
            )
            check(found == people.count, "open + fetchAll returned \(found) records")
            record(&harness, .openAndFetchAll, rows: people.count, open, "read + JSONDecoder per file", rawAgain)
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
            record(&harness, .lookup, rows: ids.count, ours, "read + JSONDecoder of one file", baseline)
        }
        if context.runs(.filter) {
            let expected = context.expectedFilterCount
            let (ours, baseline) = try harness.measurePair(
                warmUp: true,
                ours: { found = try store.fetchAll(Person.self, where: SQLiteBenchmarks.filter).count },
                baseline: { foundRaw = try raw.fetchAll(where: \.isInFilter).count }
            )
            check(found == expected, "the filter returned \(found) records, not \(expected)")
            check(foundRaw == expected, "the raw filter returned \(foundRaw) records, not \(expected)")
            record(&harness, .filter, rows: people.count, ours, "read + JSONDecoder per file, then test", baseline)
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
                "read + JSONDecoder per file",
                measured.baseline,
                memoryGrowth: (measured.oursGrowth, measured.baselineGrowth)
            )
        }
    }

    private func measureIngestion(_ harness: inout Harness) throws {
        let json = context.json
        let oursPath = context.path("ingest-ours-archive")
        let rawFolder = context.directory.appendingPathComponent("ingest-raw-json")
        defer {
            context.remove(oursPath)
            context.remove(rawFolder.path)
        }
        var store: ObjectStore?
        var raw: RawFiles?
        var stored = 0
        var storedRaw = 0
        let (ours, baseline) = try harness.measurePair(
            setUpOurs: {
                store = nil
                context.remove(oursPath)
                store = try ObjectStore(backend: .fileArchive(directory: oursPath))
            },
            ours: { stored = try store!.insert(jsonArray: json, into: "Person").count },
            setUpBaseline: {
                context.remove(rawFolder.path)
                raw = try RawFiles(folder: rawFolder)
            },
            baseline: { storedRaw = try raw!.ingest(json: json) }
        )
        check(stored == context.people.count, "insert(jsonArray:into:) stored \(stored) records")
        check(storedRaw == context.people.count, "the raw ingestion stored \(storedRaw) records")
        record(
            &harness,
            .ingestJSON,
            rows: context.people.count,
            ours,
            "JSONSerialization + atomic write per file",
            baseline
        )
    }

    private func measureSingleCommits(_ harness: inout Harness) throws {
        let people = Person.make(BenchmarkContext.singleCommitCount + 1)
        let oursPath = context.path("single-ours-archive")
        let rawFolder = context.directory.appendingPathComponent("single-raw-json")
        defer {
            context.remove(oursPath)
            context.remove(rawFolder.path)
        }
        var store: ObjectStore?
        var raw: RawFiles?
        let (ours, baseline) = try harness.measurePair(
            setUpOurs: {
                store = nil
                context.remove(oursPath)
                store = try ObjectStore(backend: .fileArchive(directory: oursPath))
                try store!.save(people[0])
            },
            ours: { for person in people.dropFirst() { try store!.save(person) } },
            setUpBaseline: {
                context.remove(rawFolder.path)
                raw = try RawFiles(folder: rawFolder)
                try raw!.insert(people.prefix(1))
            },
            baseline: { try raw!.insert(people.dropFirst()) }
        )
        record(
            &harness,
            .singleCommits,
            rows: people.count - 1,
            ours,
            "JSONEncoder + atomic write per file",
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
