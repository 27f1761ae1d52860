import Foundation

// swift run -c release Benchmarks [--count N] [--repetitions N] [--archive]
var count = 100_000
var repetitions = 3
var runsArchive = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--count": count = arguments.popFirst().flatMap(Int.init) ?? count
    case "--repetitions": repetitions = arguments.popFirst().flatMap(Int.init) ?? repetitions
    case "--archive": runsArchive = true
    default:
        progress("usage: Benchmarks [--count N] [--repetitions N] [--archive]")
        exit(2)
    }
}

#if DEBUG
progress("warning: this is a debug build; its figures mean nothing. Use: swift run -c release Benchmarks")
#endif

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storage-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

var harness = Harness(count: count, repetitions: max(repetitions, 1))
let people = Person.make(count)
if runsArchive {
    // The archive coder and the file archive backend only, so the default run stays as it was.
    try ArchiveBenchmarks(directory: directory, people: people).run(&harness)
} else {
    try SQLiteBenchmarks(directory: directory, people: people).run(&harness)
    try LMDBBenchmarks(directory: directory, people: people).run(&harness)
}
print("\(count) records, median of \(harness.repetitions) runs; ratio = ours / baseline")
harness.printTable()
