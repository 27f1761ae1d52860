import CSQLite
import Foundation

/// The SQLite baseline: what a careful programmer writes by hand against SQLite's C API, with
/// the settings the backend uses (WAL, synchronous=NORMAL; `--raw-sqlite-pragmas` adds more): one prepared statement per kind of
/// call, parameters bound and columns read by index.
final class RawSQLite {
    private var db: OpaquePointer?

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let columns = "id, firstName, lastName, email, age, height, score, isActive, createdAt, avatar"

    /// Opens (creating) the database; `avatarType` is the avatar column's type (BLOB for
    /// `Person`, TEXT for people ingested from JSON, where the avatar is base64 text).
    init(path: String, avatarType: String = "BLOB") throws {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            throw Failure(description: "cannot open \(path)")
        }
        // Several connections to one file (`concurrentLookups`: readers beside a writer) wait for
        // each other's locks instead of failing with "database is locked", as ours do.
        sqlite3_busy_timeout(db, 5_000)
        try execute("PRAGMA journal_mode=WAL")
        try execute(sqliteSynchronousFull ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        for pragma in rawSQLitePragmas { try execute("PRAGMA " + pragma) }
        try execute(
            """
            CREATE TABLE IF NOT EXISTS Person (id INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, email TEXT,
            age INTEGER, height REAL, score REAL, isActive INTEGER, createdAt REAL, avatar \(avatarType))
            """
        )
        // `--indexed`: the indexes `Person` then declares.
        if benchmarkIndexes {
            try execute("CREATE INDEX IF NOT EXISTS person_age ON Person (age)")
            try execute("CREATE UNIQUE INDEX IF NOT EXISTS person_email ON Person (email)")
        }
    }

    deinit { sqlite3_close_v2(db) }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw failure() }
    }

    private func failure() -> Failure {
        Failure(description: String(cString: sqlite3_errmsg(db)))
    }

    private func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw failure() }
        return statement
    }

    private func bind(_ person: Person, to statement: OpaquePointer?) {
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
    }

    private func person(_ statement: OpaquePointer?) -> Person {
        func text(_ column: Int32) -> String {
            String(cString: sqlite3_column_text(statement, column))
        }
        let avatar = Data(bytes: sqlite3_column_blob(statement, 9), count: Int(sqlite3_column_bytes(statement, 9)))
        return Person(
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
    }

    /// All of `people` in one transaction.
    @inline(never)  // a symbol of its own, for profiles
    func insert(_ people: some Sequence<Person>) throws {
        try execute("BEGIN IMMEDIATE")
        let statement = try prepare("INSERT INTO Person VALUES (?,?,?,?,?,?,?,?,?,?)")
        defer { sqlite3_finalize(statement) }
        for person in people {
            bind(person, to: statement)
            guard sqlite3_step(statement) == SQLITE_DONE else { throw failure() }
            sqlite3_reset(statement)
        }
        try execute("COMMIT")
    }

    /// `UPDATE … SET score, firstName … WHERE id BETWEEN` in one transaction: update-where's
    /// baseline (UpdateBenchmarks.swift). Returns how many rows changed.
    @inline(never)  // a symbol of its own, for profiles
    func update(ids: ClosedRange<Int64>, score: Double, firstName: String) throws -> Int {
        try execute("BEGIN IMMEDIATE")
        let statement = try prepare("UPDATE Person SET score = ?, firstName = ? WHERE id >= ? AND id <= ?")
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_double(statement, 1, score)
        sqlite3_bind_text(statement, 2, firstName, -1, storage_sqlite_transient())
        sqlite3_bind_int64(statement, 3, ids.lowerBound)
        sqlite3_bind_int64(statement, 4, ids.upperBound)
        guard sqlite3_step(statement) == SQLITE_DONE else { throw failure() }
        let changed = Int(sqlite3_changes(db))
        try execute("COMMIT")
        return changed
    }

    /// Each of `people` in a transaction of its own (SQLite's autocommit), as a save would.
    func insertEachCommitted(_ people: some Sequence<Person>) throws {
        let statement = try prepare("INSERT OR REPLACE INTO Person VALUES (?,?,?,?,?,?,?,?,?,?)")
        defer { sqlite3_finalize(statement) }
        for person in people {
            bind(person, to: statement)
            guard sqlite3_step(statement) == SQLITE_DONE else { throw failure() }
            sqlite3_reset(statement)
        }
    }

    /// Calls `body` with each row of `SELECT … <clause>`.
    func stream(_ clause: String = "ORDER BY id", _ body: (Person) throws -> Void) throws {
        let statement = try prepare("SELECT \(Self.columns) FROM Person " + clause)
        defer { sqlite3_finalize(statement) }
        while sqlite3_step(statement) == SQLITE_ROW { try body(person(statement)) }
    }

    @inline(never)  // a symbol of its own, for profiles
    func fetchAll(_ clause: String = "ORDER BY id") throws -> [Person] {
        var people: [Person] = []
        try stream(clause) { people.append($0) }
        return people
    }

    /// One prepared `SELECT … WHERE id = ?`, each look-up its own (autocommit) read.
    @inline(never)  // a symbol of its own, for profiles
    func lookUp(_ ids: [Int64]) throws -> Int {
        let statement = try prepare("SELECT \(Self.columns) FROM Person WHERE id = ?")
        defer { sqlite3_finalize(statement) }
        var found = 0
        for id in ids {
            sqlite3_bind_int64(statement, 1, id)
            if sqlite3_step(statement) == SQLITE_ROW, person(statement).id == id { found += 1 }
            sqlite3_reset(statement)
        }
        return found
    }

    /// `WHERE id IN (…)` with the ids bound as one JSON array, read back by `json_each`.
    @inline(never)  // a symbol of its own, for profiles
    func fetchIn(_ ids: [Int64]) throws -> [Person] {
        let statement = try prepare(
            "SELECT \(Self.columns) FROM Person WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id"
        )
        defer { sqlite3_finalize(statement) }
        let json = "[" + ids.map { String($0) }.joined(separator: ",") + "]"
        sqlite3_bind_text(statement, 1, json, -1, storage_sqlite_transient())
        var people: [Person] = []
        while sqlite3_step(statement) == SQLITE_ROW { people.append(person(statement)) }
        return people
    }

    /// `JSONSerialization`, then one transaction of inserts binding each key's value with the
    /// column's type, known in advance as a hand-written loop knows it.
    func ingest(json: Data) throws -> Int {
        guard let rows = try JSONSerialization.jsonObject(with: json) as? [[String: Any]] else {
            throw Failure(description: "not a JSON array of objects")
        }
        try execute("BEGIN IMMEDIATE")
        let statement = try prepare("INSERT OR REPLACE INTO Person (\(Self.columns)) VALUES (?,?,?,?,?,?,?,?,?,?)")
        defer { sqlite3_finalize(statement) }
        for row in rows { try insert(row, with: statement) }
        try execute("COMMIT")
        return rows.count
    }

    /// The NDJSON baseline: the text split on LF, each line parsed by `JSONSerialization` and
    /// bound as `ingest(json:)` binds an object, in one transaction.
    func ingest(jsonLines: Data, sample: () -> Void) throws -> Int? {
        try execute("BEGIN IMMEDIATE")
        let statement = try prepare("INSERT OR REPLACE INTO Person (\(Self.columns)) VALUES (?,?,?,?,?,?,?,?,?,?)")
        defer { sqlite3_finalize(statement) }
        var count = 0
        for line in jsonLines.split(separator: UInt8(ascii: "\n")) {
            guard let row = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                throw Failure(description: "line \(count + 1) is not a JSON object")
            }
            try insert(row, with: statement)
            count += 1
            if count & 4095 == 0 { sample() }
        }
        try execute("COMMIT")
        return count
    }

    /// Binds a parsed object's values by the columns' known types and steps the statement.
    private func insert(_ row: [String: Any], with statement: OpaquePointer?) throws {
        func number(_ key: String) -> NSNumber { row[key] as? NSNumber ?? 0 }
        func text(_ key: String, _ index: Int32) {
            sqlite3_bind_text(statement, index, row[key] as? String ?? "", -1, storage_sqlite_transient())
        }
        sqlite3_bind_int64(statement, 1, number("id").int64Value)
        text("firstName", 2)
        text("lastName", 3)
        text("email", 4)
        sqlite3_bind_int64(statement, 5, number("age").int64Value)
        sqlite3_bind_double(statement, 6, number("height").doubleValue)
        sqlite3_bind_double(statement, 7, number("score").doubleValue)
        sqlite3_bind_int64(statement, 8, number("isActive").boolValue ? 1 : 0)
        sqlite3_bind_double(statement, 9, number("createdAt").doubleValue)
        text("avatar", 10)
        guard sqlite3_step(statement) == SQLITE_DONE else { throw failure() }
        sqlite3_reset(statement)
    }

    /// The CSV baseline: lines split on LF, fields on commas (the benchmark's CSV has no quoted
    /// fields), each field bound by position with the type the code knows it has.
    func ingest(csv: Data) throws -> Int? {
        try execute("BEGIN IMMEDIATE")
        let statement = try prepare("INSERT OR REPLACE INTO Person (\(Self.columns)) VALUES (?,?,?,?,?,?,?,?,?,?)")
        defer { sqlite3_finalize(statement) }
        var count = 0
        for line in csv.split(separator: UInt8(ascii: "\n")).dropFirst() {
            let fields = line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            func text(_ index: Int) -> String { String(decoding: fields[index], as: UTF8.self) }
            sqlite3_bind_int64(statement, 1, Int64(text(0)) ?? 0)
            sqlite3_bind_text(statement, 2, text(1), -1, storage_sqlite_transient())
            sqlite3_bind_text(statement, 3, text(2), -1, storage_sqlite_transient())
            sqlite3_bind_text(statement, 4, text(3), -1, storage_sqlite_transient())
            sqlite3_bind_int64(statement, 5, Int64(text(4)) ?? 0)
            sqlite3_bind_double(statement, 6, Double(text(5)) ?? 0)
            sqlite3_bind_double(statement, 7, Double(text(6)) ?? 0)
            sqlite3_bind_int64(statement, 8, Int64(text(7)) ?? 0)
            sqlite3_bind_double(statement, 9, Double(text(8)) ?? 0)
            sqlite3_bind_text(statement, 10, text(9), -1, storage_sqlite_transient())
            guard sqlite3_step(statement) == SQLITE_DONE else { throw failure() }
            sqlite3_reset(statement)
            count += 1
        }
        try execute("COMMIT")
        return count
    }
}
