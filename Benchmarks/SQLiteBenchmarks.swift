import CSQLite
import Foundation
import SQLiteBackend
import Storage

/// ObjectStore on SQLite beside a hand-written loop over SQLite's C API on the same data.
struct SQLiteBenchmarks {
    let directory: URL
    let people: [Person]

    func run(_ harness: inout Harness) throws {
        progress("sqlite: \(people.count) records")
        let oursPath = directory.appendingPathComponent("ours.sqlite").path
        let rawPath = directory.appendingPathComponent("raw.sqlite").path

        let oursInsert = try harness.measure(
            setUp: { removeDatabase(oursPath) },
            run: {
                let store = try ObjectStore(backend: .sqlite(path: oursPath))
                try store.save(contentsOf: people)
            }
        )
        let rawInsert = try harness.measure(
            setUp: { removeDatabase(rawPath) },
            run: { try RawSQLite(path: rawPath).insert(people) }
        )
        harness.record(
            backend: "sqlite",
            operation: "insert",
            rows: people.count,
            ours: oursInsert,
            baseline: "raw C API loop",
            baselineTime: rawInsert
        )

        let store = try ObjectStore(backend: .sqlite(path: oursPath))
        let raw = try RawSQLite(path: rawPath)
        var fetched = 0
        let oursFetch = try harness.measure(run: { fetched = try store.fetchAll(Person.self).count })
        precondition(fetched == people.count, "fetchAll returned \(fetched) records")
        let rawFetch = try harness.measure(run: { fetched = try raw.fetchAll().count })
        precondition(fetched == people.count, "the raw loop returned \(fetched) records")
        harness.record(
            backend: "sqlite",
            operation: "fetchAll",
            rows: people.count,
            ours: oursFetch,
            baseline: "raw step loop",
            baselineTime: rawFetch
        )
    }

    private func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// The baseline: what a careful programmer writes by hand against SQLite's C API, with the same
/// settings the backend uses (WAL, synchronous=NORMAL, one transaction, one prepared statement).
final class RawSQLite {
    private var db: OpaquePointer?

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(path: String) throws {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            throw Failure(description: "cannot open \(path)")
        }
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=NORMAL")
        try execute(
            """
            CREATE TABLE IF NOT EXISTS Person (id INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, email TEXT,
            age INTEGER, height REAL, score REAL, isActive INTEGER, createdAt REAL, avatar BLOB)
            """
        )
    }

    deinit { sqlite3_close_v2(db) }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw Failure(description: String(cString: sqlite3_errmsg(db)))
        }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw Failure(description: String(cString: sqlite3_errmsg(db)))
        }
        return statement
    }

    func insert(_ people: [Person]) throws {
        try execute("BEGIN IMMEDIATE")
        let statement = try prepare("INSERT INTO Person VALUES (?,?,?,?,?,?,?,?,?,?)")
        defer { sqlite3_finalize(statement) }
        for person in people {
            sqlite3_bind_int64(statement, 1, person.id)
            sqlite3_bind_text(statement, 2, person.firstName, -1, storage_sqlite_transient())
            sqlite3_bind_text(statement, 3, person.lastName, -1, storage_sqlite_transient())
            sqlite3_bind_text(statement, 4, person.email, -1, storage_sqlite_transient())
            sqlite3_bind_int64(statement, 5, Int64(person.age))
            sqlite3_bind_double(statement, 6, person.height)
            sqlite3_bind_double(statement, 7, person.score)
            sqlite3_bind_int64(statement, 8, person.isActive ? 1 : 0)
            sqlite3_bind_double(statement, 9, person.createdAt.timeIntervalSince1970)
            _ = person.avatar.withUnsafeBytes { bytes in
                sqlite3_bind_blob(statement, 10, bytes.baseAddress, Int32(bytes.count), storage_sqlite_transient())
            }
            guard sqlite3_step(statement) == SQLITE_DONE else {
                throw Failure(description: String(cString: sqlite3_errmsg(db)))
            }
            sqlite3_reset(statement)
        }
        try execute("COMMIT")
    }

    func fetchAll() throws -> [Person] {
        let statement = try prepare("SELECT * FROM Person ORDER BY id")
        defer { sqlite3_finalize(statement) }
        var people: [Person] = []
        func text(_ column: Int32) -> String {
            String(cString: sqlite3_column_text(statement, column))
        }
        while sqlite3_step(statement) == SQLITE_ROW {
            let avatar = Data(bytes: sqlite3_column_blob(statement, 9), count: Int(sqlite3_column_bytes(statement, 9)))
            people.append(
                Person(
                    id: sqlite3_column_int64(statement, 0),
                    firstName: text(1),
                    lastName: text(2),
                    email: text(3),
                    age: Int(sqlite3_column_int64(statement, 4)),
                    height: sqlite3_column_double(statement, 5),
                    score: sqlite3_column_double(statement, 6),
                    isActive: sqlite3_column_int64(statement, 7) != 0,
                    createdAt: Date(timeIntervalSince1970: sqlite3_column_double(statement, 8)),
                    avatar: avatar
                )
            )
        }
        return people
    }
}
