import FileArchiveBackend
import Foundation
import Storage

/// ObjectStore on the file archive backend beside Foundation's coders with one atomic write per
/// file (`RawFiles`) on the same data, in the same run.
extension RawFiles: RawBaseline {
    static let backend = "archive"
    static let goals: [Operation: Double] = [.insert: 5, .fetchAll: 2, .inList: 0.5]
    static let baselines: [Operation: String] = [
        .insert: "JSONEncoder + atomic write per file",
        .fetchAll: "read + JSONDecoder per file",
        .openAndFetchAll: "read + JSONDecoder per file",
        .lookup: "read + JSONDecoder of one file",
        .inList: "read + JSONDecoder of each listed file",
        .filter: "read + JSONDecoder per file, then test",
        .forEach: "read + JSONDecoder per file",
        .ingestJSON: "JSONSerialization + atomic write per file",
        .singleCommits: "JSONEncoder + atomic write per file",
    ]

    /// Our store is a folder "…-archive"; the baseline's a folder of JSON files "…-json".
    static func fileName(_ role: String) -> String { role + (role.hasSuffix("raw") ? "-json" : "-archive") }

    static func openStore(path: String) throws -> ObjectStore {
        try ObjectStore(backend: .fileArchive(directory: path))
    }

    static func open(path: String, forJSON: Bool) throws -> RawFiles {
        try RawFiles(folder: URL(fileURLWithPath: path))
    }

    func insertAll(_ people: [Person]) throws { try insert(people) }
    /// Every write is its own atomic file write already.
    func commitEach(_ people: ArraySlice<Person>) throws { try insert(people) }
    func readAll() throws -> [Person] { try fetchAll() }
    func readIn(_ ids: [Int64]) throws -> [Person] { try fetchIn(ids) }
    func readFiltered() throws -> [Person] { try fetchAll(where: \.isInFilter) }
    func streamAll(_ body: (Person) throws -> Void) throws { try stream(body) }

    /// After `fetchAll`: the store keeps its records in memory once open, and opening reads every
    /// file, so opening it and `fetchAll` beside the same raw read.
    static func measureExtras(
        after operation: Operation,
        _ filled: Stores<RawFiles>,
        _ harness: inout Harness
    ) throws {
        guard operation == .fetchAll else { return }
        let benchmarks = filled.benchmarks
        let path = benchmarks.path("ours")
        var found = 0
        let (open, rawAgain) = try harness.measurePair(
            ours: { found = try openStore(path: path).fetchAll(Person.self).count },
            baseline: { _ = try filled.raw.readAll() }
        )
        check(found == benchmarks.context.people.count, "open + fetchAll returned \(found) records")
        benchmarks.record(&harness, .openAndFetchAll, rows: benchmarks.context.people.count, open, rawAgain)
    }
}
