// The work whose instruction and allocation counts `scripts/count-check.py` holds to thresholds
// under callgrind (docs/BENCHMARKS.md, "Counts held in CI"): saves and key look-ups through
// `ObjectStore`, the counted batch of each in a function of its own, so that callgrind can dump
// the counts of that function alone (`--dump-before`), after a warm-up batch.
//
// Usage: StorageCounts --backend sqlite|lmdb --path PATH [--count N]
import Foundation
import LMDBBackend
import SQLiteBackend
import Storage

/// A record of ten properties, as the benchmarks' `Person`.
struct CountedRecord: Codable, StorableModel {
    var id: Int64
    var name: String
    var email: String?
    var age: Int
    var score: Double
    var active: Bool
    var city: String
    var visits: Int
    var joined: Date
    var note: String?
}

func record(_ id: Int) -> CountedRecord {
    CountedRecord(
        id: Int64(id),
        name: "name \(id)",
        email: id % 3 == 0 ? nil : "user\(id)@example.org",
        age: 18 + id % 60,
        score: Double(id) / 7,
        active: id % 2 == 0,
        city: ["Oslo", "Lyon", "Kyoto"][id % 3],
        visits: id * 3,
        joined: Date(timeIntervalSince1970: 1_700_000_000 + Double(id)),
        note: nil
    )
}

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

nonisolated(unsafe) var countedStore: ObjectStore?
nonisolated(unsafe) var countedRecords: [CountedRecord] = []

/// One save of each record (made before, so only the saves are counted).
func saveEach() {
    for value in countedRecords { _ = try! countedStore!.save(value) }
}

/// One key look-up of each record.
func fetchEach() {
    for value in countedRecords { precondition(try! countedStore!.fetch(CountedRecord.self, id: value.id) != nil) }
}

/// The counted saves: callgrind dumps its counts as this begins (`--dump-before='*12countedSaves*'`)
/// and again as `countedEnd` begins, so the dump between holds this function alone.
@inline(never)
func countedSaves() { saveEach() }

/// The counted look-ups (`--dump-before='*14countedFetches*'`).
@inline(never)
func countedFetches() { fetchEach() }

/// Called after each counted batch, to end its dump (`--dump-before='*10countedEnd*'`).
@inline(never)
func countedEnd() { precondition(countedStore != nil) }

guard let backend = option("--backend"), let path = option("--path") else {
    FileHandle.standardError.write(Data("usage: StorageCounts --backend sqlite|lmdb --path PATH [--count N]\n".utf8))
    exit(2)
}
let count = option("--count").flatMap(Int.init) ?? 200
switch backend {
case "sqlite": countedStore = try ObjectStore(backend: .sqlite(path: path))
case "lmdb": countedStore = try ObjectStore(backend: .lmdb(path: path))
default:
    FileHandle.standardError.write(Data("unknown backend \(backend)\n".utf8))
    exit(2)
}
// Warm: the collection made, the plans cached, the statements prepared, the readers pooled.
countedRecords = (0..<count).map { record($0 + 1_000_000) }
saveEach()
fetchEach()
countedRecords = (0..<count).map(record)
countedSaves()
countedEnd()
countedFetches()
countedEnd()
print("done \(count)")
