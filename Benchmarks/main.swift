import Foundation

// swift run -c release Benchmarks [--count N] [--backends sqlite,lmdb,archive,postgresql] [--json PATH]
//                                 [--operations insert,fetchAll,...] [--repetitions N] [--archive-count N]
//                                 [--scale 10000,100000,1000000 [--plot PATH] [--in-process]]
let usage = """
    usage: Benchmarks [--count N] [--backends sqlite,lmdb,archive,postgresql] [--json PATH]
                      [--operations \(Operation.selectable.map(\.rawValue).joined(separator: ","))] [--repetitions N]
      --count N         records per backend (default 100,000)
      --backends LIST   which backends to measure (default sqlite, lmdb and archive; postgresql
                        needs STORAGE_POSTGRES_URL, which scripts/postgres.sh start DIR prints)
      --json PATH       also write the results as JSON
      --operations LIST which operations to run (default all)
      --repetitions N   timed runs per figure; the median is kept (default 3)
      --archive-count N records for the file archive (default: the count, at most 2,000; every
                        record is a file, and the baseline fsyncs each one)
      --copy            also copy SQLite → LMDB and LMDB → SQLite, verified (CopyBenchmarks.swift)
      --update          also update a tenth of the records, sqlite and lmdb (UpdateBenchmarks.swift)
      --observe         also single saves with one observe() consumer vs none (ObserveBenchmarks.swift)
      --aggregates      instead: a sum per city over --count sales on sqlite, lmdb and postgresql
                        (those of --backends), beside the engine's own (AggregateBenchmarks.swift)
      --relations       instead: eager loading of --count books (10,000 if not given) with their
                        authors on each of --backends, and a cascade delete of as many on sqlite
                        beside ON DELETE CASCADE (RelationBenchmarks.swift)
      --search          instead: full-text indexing of --count titles (1,000,000 if not given) and
                        two-word top-20 queries on sqlite and lmdb (those of --backends), beside
                        raw FTS5, with the index's size (SearchBenchmarks.swift)
      --cli-import      instead: the release `storage import` (built beside this program:
                        swift build -c release --product storage) of --rows people as CSV, NDJSON
                        and a JSON array, as a child process, into new stores of each of --backends
                        (sqlite, lmdb), beside the sqlite3 shell importing the same file: rows/s
                        and each child's peak resident set (Benchmarks/CLIImportBenchmarks.swift)
      --rows N          with --cli-import: rows per file (default 1,000,000)
      --formats LIST    with --cli-import: csv,ndjson,json (default all three)
      --storage PATH    with --cli-import: the storage executable (default: beside this one)
      --scale LIST      instead: insert, fetchAll, lookup and filter (those chosen) at each number
                        of records, on fresh stores, sqlite, lmdb and archive (archive: up to 2M,
                        with open + fetchAll); prints rows/s and ratio per size and the growth of
                        the per-record cost (Benchmarks/Scaling.swift)
      --clients LIST    instead (with --backends postgresql): look-ups, single commits and
                        read-modify-writes of 16 shared counters by that many client processes at
                        once, each with its own store, beside raw libpq (ClientBenchmarks.swift)
      --seconds S       with --clients: how long each figure runs (default 2)
      --pooler-url URL  with --clients: the same again through this transaction pooler
                        (PgBouncer: scripts/pgbouncer.sh start DIR prints its URL)
      --plot PATH       with --scale or --clients: also write an SVG chart of the figures
      --in-process      with --scale: run every backend and size in this process (by default
                        each runs in a process of its own, from a fresh heap)
      --indexed         Person gets an index on age and a unique index on email (sqlite only;
                        the raw baseline creates the same indexes)
      --raw-sqlite-pragmas LIST  pragmas the raw SQLite baseline also runs at open, e.g.
                        "cache_size=-65536,wal_autocheckpoint=10000" (to measure a setting)
      --sqlite-synchronous full  ours opened with synchronous: .full, the baseline with FULL
    Example, forEach over a million SQLite rows: --count 1000000 --backends sqlite --operations forEach
    """

if CommandLine.arguments.dropFirst().first == "--clients-child" {
    try runClientChild(Array(CommandLine.arguments.dropFirst(2)))
}

var count = 100_000
var repetitions = 3
var backends = ["sqlite", "lmdb", "archive"]
var operations = Set(Operation.selectable)
var jsonPath: String?
var archiveCount: Int?
var measuresCopy = false
var measuresUpdate = false
var measuresObserve = false
var measuresAggregates = false
var measuresRelations = false
var measuresSearch = false
var scaleSizes: [Int]?
var measuresCLIImport = false
var cliImportRows = 1_000_000
var cliImportFormats = CLIImportBenchmarks.formats
var storageExecutable: String?
var plotPath: String?
var clientCounts: [Int]?
var clientSeconds = 2.0
var poolerURL: String?

func fail(_ message: String) -> Never {
    progress("error: \(message)\n\(usage)")
    exit(2)
}

func list(_ text: String?) -> [String] {
    (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
}

var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--count":
        guard let value = arguments.popFirst().flatMap(Int.init), value > 0 else { fail("--count needs a number") }
        count = value
    case "--repetitions":
        guard let value = arguments.popFirst().flatMap(Int.init), value > 0 else {
            fail("--repetitions needs a number")
        }
        repetitions = value
    case "--backends":
        backends = list(arguments.popFirst())
        for backend in backends where !["sqlite", "lmdb", "archive", "postgresql"].contains(backend) {
            fail("unknown backend '\(backend)'")
        }
    case "--operations":
        operations = []
        for name in list(arguments.popFirst()) {
            guard let operation = Operation(rawValue: name), Operation.selectable.contains(operation) else {
                fail("unknown operation '\(name)'")
            }
            operations.insert(operation)
        }
    case "--archive-count":
        guard let value = arguments.popFirst().flatMap(Int.init), value > 0 else {
            fail("--archive-count needs a number")
        }
        archiveCount = value
    case "--scale":
        let sizes = list(arguments.popFirst()).map { Int($0.replacingOccurrences(of: "_", with: "")) }
        guard !sizes.isEmpty, sizes.allSatisfy({ ($0 ?? 0) > 0 }) else { fail("--scale needs numbers") }
        scaleSizes = sizes.compactMap { $0 }.sorted()
    case "--clients":
        let counts = list(arguments.popFirst()).map { Int($0) }
        guard !counts.isEmpty, counts.allSatisfy({ ($0 ?? 0) > 0 }) else { fail("--clients needs numbers") }
        clientCounts = counts.compactMap { $0 }.sorted()
    case "--seconds":
        guard let value = arguments.popFirst().flatMap(Double.init), value > 0 else { fail("--seconds needs a number") }
        clientSeconds = value
    case "--pooler-url":
        guard let url = arguments.popFirst() else { fail("--pooler-url needs a URL") }
        poolerURL = url
    case "--cli-import":
        measuresCLIImport = true
    case "--rows":
        guard let value = arguments.popFirst().flatMap({ Int($0.replacingOccurrences(of: "_", with: "")) }), value > 0
        else { fail("--rows needs a number") }
        cliImportRows = value
    case "--formats":
        cliImportFormats = list(arguments.popFirst())
        for format in cliImportFormats where !CLIImportBenchmarks.formats.contains(format) {
            fail("unknown format '\(format)': use csv, ndjson or json")
        }
    case "--storage":
        guard let path = arguments.popFirst() else { fail("--storage needs a path") }
        storageExecutable = path
    case "--in-process":
        scalesInProcess = true
    case "--plot":
        guard let path = arguments.popFirst() else { fail("--plot needs a path") }
        plotPath = path
    case "--indexed":
        benchmarkIndexes = true
    case "--raw-sqlite-pragmas":
        rawSQLitePragmas = list(arguments.popFirst())
        guard !rawSQLitePragmas.isEmpty else { fail("--raw-sqlite-pragmas needs name=value,...") }
    case "--sqlite-synchronous":
        switch arguments.popFirst() {
        case "full": sqliteSynchronousFull = true
        case "normal": sqliteSynchronousFull = false
        default: fail("--sqlite-synchronous is normal or full")
        }
    case "--json":
        guard let path = arguments.popFirst() else { fail("--json needs a path") }
        jsonPath = path
    case "--copy":
        measuresCopy = true
    case "--update":
        measuresUpdate = true
    case "--observe":
        measuresObserve = true
    case "--aggregates":
        measuresAggregates = true
    case "--relations":
        measuresRelations = true
    case "--search":
        measuresSearch = true
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        fail("unknown option '\(argument)'")
    }
}

if benchmarkIndexes, backends != ["sqlite"] {
    fail("--indexed measures sqlite only (the other raw baselines keep no indexes): add --backends sqlite")
}

#if DEBUG
progress("warning: this is a debug build; its figures mean nothing. Use: swift run -c release Benchmarks")
#endif

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storage-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

if let clientCounts {
    guard backends == ["postgresql"] else { fail("--clients measures postgresql only: add --backends postgresql") }
    try runClientBenchmarks(
        clients: clientCounts,
        seconds: clientSeconds,
        poolerURL: poolerURL,
        jsonPath: jsonPath,
        plotPath: plotPath
    )
    try? FileManager.default.removeItem(at: directory)  // exit skips the defer above
    exit(0)
}

if let scaleSizes {
    try runScaling(
        sizes: scaleSizes,
        backends: backends,
        operations: operations,
        repetitions: repetitions,
        directory: directory,
        jsonPath: jsonPath,
        plotPath: plotPath
    )
    try? FileManager.default.removeItem(at: directory)  // exit skips the defer above
    exit(0)
}

if measuresCLIImport {
    guard let storage = storageExecutable ?? CLIImportBenchmarks.siblingExecutable("storage") else {
        fail("no storage executable beside this one: swift build -c release --product storage, or --storage PATH")
    }
    guard let sqlite3 = CLIImportBenchmarks.onPath("sqlite3") else {
        fail("no sqlite3 shell on PATH (scripts/setup.sh installs it)")
    }
    let targets = backends.filter { ["sqlite", "lmdb"].contains($0) }
    guard !targets.isEmpty else { fail("--cli-import imports into sqlite and lmdb: add --backends sqlite,lmdb") }
    var harness = Harness(count: cliImportRows, repetitions: 1)
    try CLIImportBenchmarks.run(
        &harness,
        rows: cliImportRows,
        backends: targets,
        formats: cliImportFormats,
        storage: storage,
        sqlite3: sqlite3,
        directory: directory
    )
    print("\(cliImportRows) rows per file, one run each; ratio = ours / baseline, higher is better.")
    harness.printTables()
    if let jsonPath { try harness.writeJSON(to: jsonPath) }
    try? FileManager.default.removeItem(at: directory)  // exit skips the defer above
    exit(0)
}

if measuresAggregates {
    var harness = Harness(count: count, repetitions: repetitions)
    try AggregateBenchmarks.run(&harness, count: count, backends: backends, directory: directory)
    print("\(count) sales, median of \(repetitions) runs; ratio = ours / baseline, higher is better.")
    harness.printTables()
    if let jsonPath { try harness.writeJSON(to: jsonPath) }
    try? FileManager.default.removeItem(at: directory)  // exit skips the defer above
    exit(0)
}

if measuresSearch {
    let titles = CommandLine.arguments.contains("--count") ? count : 1_000_000
    try SearchBenchmarks.run(count: titles, repetitions: repetitions, backends: backends, directory: directory)
    try? FileManager.default.removeItem(at: directory)  // exit skips the defer above
    exit(0)
}

if measuresRelations {
    let books = CommandLine.arguments.contains("--count") ? count : 10_000
    var harness = Harness(count: books, repetitions: repetitions)
    try RelationBenchmarks.run(&harness, books: books, backends: backends, directory: directory)
    print("\(books) books, median of \(repetitions) runs; ratio = ours / baseline, higher is better.")
    harness.printTables()
    if let jsonPath { try harness.writeJSON(to: jsonPath) }
    try? FileManager.default.removeItem(at: directory)  // exit skips the defer above
    exit(0)
}

let started = ContinuousClock.now
progress("making \(count) people")
let people = Person.make(count)
progress("resident set: \(Harness.megabytes(MemorySampler.residentBytes()))")
func makeContext(_ people: [Person], _ operations: Set<Operation>) throws -> BenchmarkContext {
    BenchmarkContext(
        directory: directory,
        people: people,
        ids: Person.randomIDs(10_000, upTo: people.count),
        json: operations.contains(.ingestJSON) ? try Person.jsonArray(people) : Data(),
        operations: operations
    )
}
var harness = Harness(count: count, repetitions: repetitions)
for backend in backends {
    switch backend {
    case "sqlite":
        try BackendBenchmarks<RawSQLite>(context: makeContext(people, operations)).run(&harness)
        if operations.contains(.concurrentLookups) {
            try ConcurrentLookups<RawSQLite>(directory: directory, count: count).run(&harness)
        }
    case "lmdb":
        try BackendBenchmarks<RawLMDB>(context: makeContext(people, operations)).run(&harness)
        if operations.contains(.concurrentLookups) {
            try ConcurrentLookups<RawLMDB>(directory: directory, count: count).run(&harness)
        }
    case "postgresql": try BackendBenchmarks<RawPostgreSQL>(context: makeContext(people, operations)).run(&harness)
    default:
        let records = min(count, archiveCount ?? min(count, 2_000))
        try BackendBenchmarks<RawFiles>(context: makeContext(Array(people.prefix(records)), operations)).run(&harness)
    }
}
if measuresCopy { try CopyBenchmarks.run(&harness, people: people, directory: directory) }
if measuresUpdate { try UpdateBenchmarks.run(&harness, people: people, directory: directory) }
if measuresObserve {
    // A table of up to 10,000 people (2,000 files for the archive) under the observed query.
    for backend in backends {
        let context = try makeContext(Array(people.prefix(backend == "archive" ? 2_000 : 10_000)), [])
        switch backend {
        case "sqlite": try ObserveBenchmarks<RawSQLite>(context: context).run(&harness)
        case "lmdb": try ObserveBenchmarks<RawLMDB>(context: context).run(&harness)
        case "postgresql": try ObserveBenchmarks<RawPostgreSQL>(context: context).run(&harness)
        default: try ObserveBenchmarks<RawFiles>(context: context).run(&harness)
        }
    }
}
let elapsed = Harness.seconds(ContinuousClock.now - started)
let archiveNote = backends.contains("archive") ? " (archive: \(min(count, archiveCount ?? 2_000)))" : ""
print("\(count) records\(archiveNote), median of \(repetitions) runs" + String(format: ", %.0f s in all.", elapsed))
print("ratio = ours / baseline, higher is better; the baseline is hand-written code on the engine's API.")
print(
    Harness.wrap(
        "goal: the ratio this package aims at. NOT MET is a finding, not a failure: the exit status"
            + " stays 0 on purpose, as figures on a shared machine move by tens of percent.",
        indent: ""
    )
)
harness.printTables()
if let jsonPath {
    try harness.writeJSON(to: jsonPath)
    progress("wrote \(jsonPath)")
}
