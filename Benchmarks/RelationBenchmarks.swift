import CSQLite
import FileArchiveBackend
import Foundation
import LMDBBackend
import SQLiteBackend
import Storage

/// Relations (`--relations`): eager loading of 10,000 books with their authors beside the
/// hand-written two-query way (fetch the books, then their authors with one IN list, joined in a
/// dictionary) on each engine; and a cascade delete of an author's 10,000 books beside raw SQL's
/// `ON DELETE CASCADE` through SQLite's C API. Goal: ratio ≥ 0.5 for both.
enum RelationBenchmarks {
    static let goal = 0.5

    struct Author: Codable, StorableModel {
        static let collectionName = "authors"
        var id: Int64
        var name: String
    }

    struct Book: Codable, StorableModel {
        static let collectionName = "books"
        static let references: [Reference] = [Reference("authorID", to: Author.self, onDelete: .cascade)]
        var id: Int64
        var title: String
        var authorID: Int64?
    }

    static func run(_ harness: inout Harness, books: Int, backends: [String], directory: URL) throws {
        for backend in backends {
            let path = directory.appendingPathComponent("relations.\(backend)").path
            let store: ObjectStore
            switch backend {
            case "sqlite": store = ObjectStore(backend: try .sqlite(path: path))
            case "lmdb": store = ObjectStore(backend: try .lmdb(path: path))
            case "archive": store = try ObjectStore(backend: .fileArchive(directory: path))
            case "postgresql": store = try RawPostgreSQL.openStore(path: path)
            default: continue
            }
            defer { try? store.close() }
            try eagerLoading(&harness, backend: backend, store: store, books: books)
            if backend == "postgresql" { RawPostgreSQL.dropSchema(RawPostgreSQL.schema(for: path) + "_ours") }
        }
        if backends.contains("sqlite") { try cascadeDelete(&harness, books: books, directory: directory) }
    }

    /// The authors (one for every ten books) and the books, every tenth without an author.
    static func library(_ books: Int) -> ([Author], [Book]) {
        let authors = (1...max(1, books / 10)).map { Author(id: Int64($0), name: "author \($0)") }
        let shelf = (1...books).map { id in
            Book(id: Int64(id), title: "book \(id)", authorID: id % 10 == 0 ? nil : Int64(id % authors.count + 1))
        }
        return (authors, shelf)
    }

    private static func eagerLoading(_ harness: inout Harness, backend: String, store: ObjectStore, books: Int) throws {
        progress("eager loading \(backend)")
        let (authors, shelf) = library(books)
        try store.save(contentsOf: authors)
        try store.save(contentsOf: shelf)
        let clock = ContinuousClock()
        var ours: [Duration] = []
        var theirs: [Duration] = []
        for round in 0...harness.repetitions {
            var pairs: [(Book, Author?)] = []
            let mine = try clock.measure {
                pairs = try store.fetchAll(Book.self, including: Author.self, via: "authorID")
            }
            precondition(pairs.count == books && pairs.filter { $0.1 != nil }.count == books - books / 10)
            var joined: [(Book, Author?)] = []
            let base = try clock.measure {
                let found = try store.fetchAll(Book.self)
                let ids = Set(found.compactMap(\.authorID))
                let byID = Dictionary(
                    uniqueKeysWithValues: try store.fetchAll(Author.self, where: Column("id").in(ids)).map {
                        ($0.id, $0)
                    }
                )
                joined = found.map { ($0, $0.authorID.flatMap { byID[$0] }) }
            }
            precondition(joined.count == pairs.count)
            if round > 0 {
                ours.append(mine)
                theirs.append(base)
            }
        }
        harness.record(
            backend: backend,
            operation: .eagerLoad,
            rows: books,
            ours: Harness.median(ours),
            baseline: "two fetchAll by hand: the books, then their authors by one IN list, joined in a dictionary",
            baselineTime: Harness.median(theirs),
            goal: goal
        )
    }

    /// One author with `books` books, deleted with them: ours by `delete(_:id:)` with a cascade
    /// reference, the baseline by `DELETE FROM author WHERE id = 1` with `PRAGMA foreign_keys=ON`
    /// and `REFERENCES author(id) ON DELETE CASCADE`, an index on the referencing column in both.
    private static func cascadeDelete(_ harness: inout Harness, books: Int, directory: URL) throws {
        progress("cascade delete sqlite")
        let oursPath = directory.appendingPathComponent("cascade-ours.sqlite").path
        let rawPath = directory.appendingPathComponent("cascade-raw.sqlite").path
        let store = ObjectStore(backend: try .sqlite(path: oursPath))
        defer { try? store.close() }
        let raw = try RawCascade(path: rawPath)
        let shelf = (1...books).map { Book(id: Int64($0), title: "book \($0)", authorID: 1) }
        let clock = ContinuousClock()
        var ours: [Duration] = []
        var theirs: [Duration] = []
        for round in 0...harness.repetitions {
            try store.save(Author(id: 1, name: "the author"))
            try store.save(contentsOf: shelf)
            try raw.fill(books: books)
            var deleted = false
            let mine = try clock.measure { deleted = try store.delete(Author.self, id: 1) }
            precondition(deleted)
            let left = try store.count(Book.self)
            precondition(left == 0)
            let base = try clock.measure { try raw.deleteAuthor() }
            let rawLeft = try raw.bookCount()
            precondition(rawLeft == 0)
            if round > 0 {
                ours.append(mine)
                theirs.append(base)
            }
        }
        harness.record(
            backend: "sqlite",
            operation: .cascadeDelete,
            rows: books,
            ours: Harness.median(ours),
            baseline: "raw SQL through the C API: DELETE of the author, ON DELETE CASCADE, foreign_keys=ON",
            baselineTime: Harness.median(theirs),
            goal: goal
        )
    }
}

/// The raw SQLite baseline of a cascade delete: two tables with a real foreign key.
final class RawCascade {
    private var db: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            throw RawSQLite.Failure(description: "cannot open \(path)")
        }
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=NORMAL")
        try execute("PRAGMA foreign_keys=ON")
        try execute("CREATE TABLE author (id INTEGER PRIMARY KEY, name TEXT)")
        try execute(
            "CREATE TABLE book (id INTEGER PRIMARY KEY, title TEXT,"
                + " authorID INTEGER REFERENCES author(id) ON DELETE CASCADE)"
        )
        try execute("CREATE INDEX book_author ON book (authorID)")
    }

    deinit { sqlite3_close_v2(db) }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw RawSQLite.Failure(description: String(cString: sqlite3_errmsg(db)))
        }
    }

    /// The author and `books` books, in one transaction through one prepared statement.
    func fill(books: Int) throws {
        try execute("BEGIN; INSERT INTO author (id, name) VALUES (1, 'the author')")
        var statement: OpaquePointer?
        guard
            sqlite3_prepare_v2(db, "INSERT INTO book (id, title, authorID) VALUES (?, ?, 1)", -1, &statement, nil)
                == SQLITE_OK
        else { throw RawSQLite.Failure(description: String(cString: sqlite3_errmsg(db))) }
        defer { sqlite3_finalize(statement) }
        for id in 1...books {
            sqlite3_bind_int64(statement, 1, Int64(id))
            sqlite3_bind_text(statement, 2, "book \(id)", -1, storage_sqlite_transient())
            guard sqlite3_step(statement) == SQLITE_DONE else {
                throw RawSQLite.Failure(description: String(cString: sqlite3_errmsg(db)))
            }
            sqlite3_reset(statement)
        }
        try execute("COMMIT")
    }

    func deleteAuthor() throws {
        try execute("BEGIN; DELETE FROM author WHERE id = 1; COMMIT")
    }

    func bookCount() throws -> Int {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT count(*) FROM book", -1, &statement, nil) == SQLITE_OK else {
            throw RawSQLite.Failure(description: String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return 0 }
        return Int(sqlite3_column_int64(statement, 0))
    }
}
