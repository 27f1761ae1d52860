// The child process of the crash tests: commits numbered batches of records to a store and prints
// "ack N" after each commit returns, until it is killed. See `CrashHarness` and `CrashWorkload`.
//
// Usage: StorageCrashWriter --backend sqlite|lmdb|archive --path PATH [--batch-size N] [--batches N]
//
// More workloads for the reliability tests (docs/RELIABILITY.md, sections 5 and 10):
//   --workload counter --writer N --count K   K transactions, each incrementing one shared
//       counter and inserting a tick, printing "ack N I" after each commit and "busy I: ..." before
//       running again a transaction that failed with .busy (several writer
//       processes on one store);
//   --workload retries --writer N --count K   the counter workload counting its closure runs and
//       the retry events it is given, printing "runs R retries T conflicts C streamed S dropped D"
//       at the end (RetryCountWorkload);
//   --workload cycles --cycles N [--write-every M]   opens and closes the store N times, reading
//       one record each time and writing one every M cycles, and prints the process's open file
//       descriptors and resident memory ("fds ... rss ...") after a warm-up and at the end;
//   --workload fork [--busy]   a store used in a child made by fork() (see ForkWorkload);
//   --workload claim --writer N --name NAME --start-at SECONDS   saves a record with a unique
//       name at the given time (seconds since 1970) and prints "won" or "lost CODE" (ClaimWorkload).
//   --workload setting --value V   sets `CrossProcessSettings.greeting` to V and prints "ack 1"
//       after the commit (the cross-process settings test).
//   --workload bulkload --batches N --first-batch K   (LMDB only) commits N batches of K, 2K, 4K...
//       records from a 64 KiB map, printing "ack B" after each (BulkLoadWorkload).
//   --workload csv --csv FILE   ingests a CSV, NDJSON or JSON file (by its extension) and prints
//                               the memory it took (see CSVWorkload).
//   --workload stream --count N   saves N records and streams them back, printing how far the
//       resident set grew while streaming (see StreamWorkload).
//   --workload migrate [--start-at SECONDS]   runs MigrationWorkload's migrator on a seeded store,
//       printing "begin NAME" as each migration starts and "ran NAMES" at the end (the kill -9 and
//       concurrent-migration tests, MigrationProcessTests).
//   --workload search [--batches N]   transactions of 200 new, 50 overwritten and 10 deleted
//                                    records with a full-text index, printing "ack N" after each
//   --workload deep [--depths 1000,5000,10000]   counts with predicates nested that deep, on the
//       main thread, printing each answer (see DeepPredicateWorkload).
//   --workload failover --url URL --schema S (--writer N --stop-file FILE | --observer)
//       (PostgreSQL) a writer or the observer of the failover test, on the store at URL
//       (see FailoverWorkload).
import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
}

/// Writes a line to stdout at once (no buffering), so an acknowledgement is out before the next
/// commit begins.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func openStore(backend name: String, path: String) throws -> ObjectStore {
    guard let backend = DiskBackend(rawValue: name) else { throw UsageError(description: "unknown backend \(name)") }
    return try backend.openStore(path: path)
}

do {
    guard let backend = option("--backend"), let path = option("--path") else {
        throw UsageError(description: "usage: StorageCrashWriter --backend NAME --path PATH")
    }
    switch option("--workload") {
    case "counter":
        guard let writer = option("--writer").flatMap(Int64.init), let count = option("--count").flatMap(Int.init)
        else { throw UsageError(description: "usage: --workload counter --writer N --count K") }
        let store = try openStore(backend: backend, path: path)
        try CounterWorkload.run(on: store, writer: writer, count: count, report: say) { index in
            say("ack \(writer) \(index)")
        }
        exit(0)
    case "retries":
        guard let writer = option("--writer").flatMap(Int64.init), let count = option("--count").flatMap(Int.init),
            let disk = DiskBackend(rawValue: backend)
        else { throw UsageError(description: "usage: --workload retries --writer N --count K") }
        try RetryCountWorkload.run(
            writer: writer,
            count: count,
            open: { events in try disk.openStore(path: path, events: events) },
            report: say
        )
        exit(0)
    case "cycles":
        guard let cycles = option("--cycles").flatMap(Int.init), cycles > 0 else {
            throw UsageError(description: "usage: --workload cycles --cycles N [--write-every M]")
        }
        try CycleWorkload.run(
            cycles: cycles,
            writeEvery: option("--write-every").flatMap(Int.init) ?? 10,
            open: { try openStore(backend: backend, path: path) },
            report: say
        )
        exit(0)
    case "fork":
        try ForkWorkload.run(
            busy: CommandLine.arguments.contains("--busy"),
            open: { try openStore(backend: backend, path: path) },
            report: say
        )
        exit(0)
    case "claim":
        guard let writer = option("--writer").flatMap(Int64.init), let name = option("--name"),
            let startAt = option("--start-at").flatMap(Double.init)
        else { throw UsageError(description: "usage: --workload claim --writer N --name NAME --start-at SECONDS") }
        let store = try openStore(backend: backend, path: path)
        try ClaimWorkload.run(
            on: store,
            writer: writer,
            name: name,
            startAt: Date(timeIntervalSince1970: startAt),
            report: say
        )
        exit(0)
    case "setting":
        guard let value = option("--value") else {
            throw UsageError(description: "usage: --workload setting --value V")
        }
        let store = try openStore(backend: backend, path: path)
        let settings = try CrossProcessSettings(store: store)
        try settings.$greeting.set(value)
        try store.close()
        say("ack 1")
        exit(0)
    case "bulkload":
        guard let batches = option("--batches").flatMap(Int.init), let first = option("--first-batch").flatMap(Int.init)
        else { throw UsageError(description: "usage: --workload bulkload --batches N --first-batch K") }
        try BulkLoadWorkload.run(path: path, batches: batches, firstBatch: first, report: say)
        exit(0)
    case "csv":
        guard let file = option("--csv") else { throw UsageError(description: "usage: --workload csv --csv FILE") }
        try CSVWorkload.run(
            file: URL(fileURLWithPath: file),
            open: { try openStore(backend: backend, path: path) },
            report: say
        )
        exit(0)
    case "stream":
        guard let count = option("--count").flatMap(Int.init), count > 0 else {
            throw UsageError(description: "usage: --workload stream --count N")
        }
        try StreamWorkload.run(on: try openStore(backend: backend, path: path), count: count, report: say)
        exit(0)
    case "search":
        let store = try openStore(backend: backend, path: path)
        try SearchCrashWorkload.run(on: store, batches: option("--batches").flatMap(Int.init), report: say)
        try store.close()
        exit(0)
    case "deep":
        let depths = (option("--depths") ?? "1000,5000,10000").split(separator: ",").compactMap { Int($0) }
        try DeepPredicateWorkload.run(on: try openStore(backend: backend, path: path), depths: depths, report: say)
        exit(0)
    case "migrate":
        let store = try openStore(backend: backend, path: path)
        try MigrationWorkloadRunner.run(
            on: store,
            startAt: option("--start-at").flatMap(Double.init).map { Date(timeIntervalSince1970: $0) },
            report: say
        )
        exit(0)
    case "failover":
        guard let url = option("--url"), let schema = option("--schema") else {
            throw UsageError(description: "usage: --workload failover --url URL --schema S ...")
        }
        let store = try FailoverWorkload.open(url: url, schema: schema)
        if CommandLine.arguments.contains("--observer") {
            FailoverWorkload.observe(on: store, report: say)
        } else {
            guard let writer = option("--writer").flatMap(Int64.init), let stopFile = option("--stop-file") else {
                throw UsageError(description: "usage: --workload failover ... --writer N --stop-file FILE")
            }
            try FailoverWorkload.write(on: store, writer: writer, stopFile: stopFile, report: say)
        }
        try store.close()
        exit(0)
    case nil, "batches":
        break
    case let other?:
        throw UsageError(description: "unknown workload \(other)")
    }
    let store = try openStore(backend: backend, path: path)
    try CrashWorkload.run(
        on: store,
        batchSize: option("--batch-size").flatMap(Int.init) ?? 20,
        limit: option("--batches").flatMap(Int.init)
    ) { batch in
        say("ack \(batch)")
    }
} catch {
    say("error \(error)")
    exit(1)
}
