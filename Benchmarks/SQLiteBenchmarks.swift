import Foundation
import SQLiteBackend
import Storage

/// ObjectStore on SQLite beside a hand-written loop over SQLite's C API (`RawSQLite`) on the
/// same data, in the same run.
extension RawSQLite: RawBaseline {
    static let backend = "sqlite"
    static let goals: [Operation: Double] = [
        .insert: 0.7, .fetchAll: 0.5, .lookup: 0.8, .inList: 0.5, .filter: 0.5, .ingestJSON: 0.5,
        .ingestCSV: 0.5, .ingestNDJSON: 0.5,
    ]
    static let baselines: [Operation: String] = [
        .insert: "raw C API loop, one prepared statement",
        .fetchAll: "raw step loop, columns by index",
        .lookup: "one prepared SELECT … WHERE id = ?",
        .inList: "raw SQL, WHERE id IN (SELECT value FROM json_each(?))",
        .filter: "raw SQL, WHERE age BETWEEN 30 AND 39",
        .forEach: "raw step loop",
        .ingestJSON: "JSONSerialization + raw insert loop",
        .ingestCSV: "hand-written split + raw insert loop",
        .ingestNDJSON: "lines split, JSONSerialization per line + raw insert loop",
        .singleCommits: "autocommit INSERT OR REPLACE per record",
    ]
    static let suffixes = ["", "-wal", "-shm"]
    /// The streaming goal: forEach over (up to a million) rows grows memory by at most 64 MB.
    static let streamMemoryGoal: Int? = 64 * 1_048_576

    static func fileName(_ role: String) -> String { role + ".sqlite" }

    static func openStore(path: String) throws -> ObjectStore {
        let configuration = SQLiteStorageBackend.Configuration(synchronous: sqliteSynchronousFull ? .full : .normal)
        return try ObjectStore(backend: .sqlite(path: path, configuration: configuration))
    }

    /// The store `ingest(json:)` fills keeps the avatar as the JSON's base64 text.
    static func open(path: String, forJSON: Bool) throws -> RawSQLite {
        try RawSQLite(path: path, avatarType: forJSON ? "TEXT" : "BLOB")
    }

    func insertAll(_ people: [Person]) throws { try insert(people) }
    func commitEach(_ people: ArraySlice<Person>) throws { try insertEachCommitted(people) }
    func readAll() throws -> [Person] { try fetchAll() }
    func readIn(_ ids: [Int64]) throws -> [Person] { try fetchIn(ids) }
    func readFiltered() throws -> [Person] { try fetchAll("WHERE age BETWEEN 30 AND 39 ORDER BY id") }
    func streamAll(_ body: (Person) throws -> Void) throws { try stream("ORDER BY id", body) }
}
