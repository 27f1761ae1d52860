import Foundation
import LMDBBackend
import SQLiteBackend
import Storage

/// ObjectStore on LMDB beside a hand-written loop over LMDB's C API (`RawLMDB`) on the same
/// data, in the same run; its look-ups also beside ObjectStore on SQLite's.
extension RawLMDB: RawBaseline {
    static let backend = "lmdb"
    static let goals: [Operation: Double] = [
        .insert: 0.5, .fetchAll: 0.5, .lookup: 0.7, .inList: 0.5, .lookupVsSQLite: 2,
    ]
    static let baselines: [Operation: String] = [
        .insert: "raw mdb_put loop, fixed binary layout",
        .fetchAll: "raw cursor scan, fixed layout",
        .lookup: "mdb_get in a read transaction each",
        .inList: "sorted unique ids, mdb_get each in one read transaction",
        .lookupVsSQLite: "ObjectStore on SQLite, fetch(_:id:)",
        .filter: "raw cursor scan testing age in place",
        .forEach: "raw cursor scan",
        .ingestJSON: "JSONSerialization + raw mdb_put loop",
        .ingestNDJSON: "lines split, JSONSerialization per line + raw mdb_put loop",
        .singleCommits: "one write transaction per mdb_put",
    ]
    static let suffixes = ["", "-lock"]

    static func fileName(_ role: String) -> String { role + ".lmdb" }

    static func openStore(path: String) throws -> ObjectStore { try ObjectStore(backend: .lmdb(path: path)) }

    static func open(path: String, forJSON: Bool) throws -> RawLMDB { try RawLMDB(path: path) }

    func insertAll(_ people: [Person]) throws { try insert(people) }
    func commitEach(_ people: ArraySlice<Person>) throws { try insertEachCommitted(people) }
    func readAll() throws -> [Person] { try fetchAll() }
    func readIn(_ ids: [Int64]) throws -> [Person] { try fetchIn(ids) }
    func readFiltered() throws -> [Person] { try fetchFiltered() }
    func streamAll(_ body: (Person) throws -> Void) throws { try stream(body) }

    /// After `lookup`: LMDB's look-ups beside SQLite's, both through ObjectStore, run alternately
    /// on a SQLite store of the same people (so both see the same load).
    static func measureExtras(
        after operation: Operation,
        _ filled: Stores<RawLMDB>,
        _ harness: inout Harness
    ) throws {
        guard operation == .lookup else { return }
        let benchmarks = filled.benchmarks
        let context = benchmarks.context
        let path = context.path("compare.sqlite")
        defer { context.remove(path, suffixes: RawSQLite.suffixes) }
        let sqlite = try RawSQLite.openStore(path: path)
        try sqlite.save(contentsOf: context.people)
        let ids = context.ids
        try benchmarks.measureCounts(&harness, .lookupVsSQLite, rows: ids.count, expected: ids.count) {
            try benchmarks.lookUp(ids, in: filled.store)
        } baseline: {
            try benchmarks.lookUp(ids, in: sqlite)
        }
    }
}
