internal import CSQLite
import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// The FTS5 table SQLite keeps for a collection's full-text index follows every kind of write,
/// read straight from the database file: one row per record, holding the record's folded words
/// (our tokenizer's) field by field, after saves, overwrites, untyped and CSV/JSON imports,
/// update-where, deletes, rollbacks, copies both ways and migrations; and the store's own
/// postings stay empty.
@Suite(.dedicatedThreads) struct SQLiteSearchFollowTests {
    /// The rows of one query over the database at `path`, each value as text (`NULL` as nil).
    static func rows(_ path: String, _ sql: String) throws -> [[String?]] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            sqlite3_close(db)
            throw StorageError(.io, "cannot open \(path)")
        }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw StorageError(.io, String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        var rows: [[String?]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append(
                (0..<sqlite3_column_count(statement)).map { column in
                    sqlite3_column_text(statement, column).map { String(cString: $0) }
                }
            )
        }
        return rows
    }

    /// Whether a table of this name exists in the database at `path`.
    static func tableExists(_ path: String, _ name: String) throws -> Bool {
        let quoted = name.replacingOccurrences(of: "'", with: "''")
        return try !rows(path, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '\(quoted)'").isEmpty
    }

    /// Expects the FTS5 table of `collection` (integer keys) to hold exactly its records' folded
    /// words over `fields`, and the store's own postings to be empty.
    static func expectInStep(
        _ path: String,
        _ collection: String,
        fields: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let table = "_search_fts(" + collection + ")"
        #expect(try tableExists(path, table), "no FTS5 table", sourceLocation: sourceLocation)
        let list = fields.map { "\"" + $0 + "\"" }.joined(separator: ", ")
        let records = try rows(path, "SELECT id, \(list) FROM \"\(collection)\" ORDER BY id").map { row in
            [row[0] ?? ""] + row.dropFirst().map { SearchTokenizer.tokens(in: $0 ?? "").joined(separator: " ") }
        }
        let columns = fields.indices.map { "c\($0)" }.joined(separator: ", ")
        let indexed = try rows(path, "SELECT rowid, \(columns) FROM \"\(table)\" ORDER BY rowid").map { row in
            row.map { $0 ?? "" }
        }
        #expect(indexed == records, sourceLocation: sourceLocation)
        #expect(!records.isEmpty, sourceLocation: sourceLocation)
        for shared in ["_search_postings", "_search_documents"] where try tableExists(path, shared) {
            #expect(try rows(path, "SELECT count(*) FROM \"\(shared)\"") == [["0"]], sourceLocation: sourceLocation)
        }
    }

    static func expectSameAnswers(
        _ store: ObjectStore,
        _ reference: ObjectStore,
        in collection: String = "films"
    ) throws {
        for query in NativeSearchIndexChecks.queries + ["zebra", "moon*"] {
            let found = try store.search(in: collection, matching: query).map { $0["id"] }
            let wanted = try reference.search(in: collection, matching: query).map { $0["id"] }
            #expect(found == wanted, "\(query)")
        }
    }

    @Test func everyWriteKeepsTheFTS5TableInStep() throws {
        try TemporaryDirectory.with("sqlite-search-follow") { directory in
            let path = directory.appendingPathComponent("s.sqlite").path
            let store = try ObjectStore(backend: .sqlite(path: path))
            defer { try? store.close() }
            let reference = ObjectStore(backend: InMemoryStorageBackend())
            func both(_ body: (ObjectStore) throws -> Void) throws {
                try body(store)
                try body(reference)
                try Self.expectInStep(path, "films", fields: ["title", "genre"])
                try Self.expectSameAnswers(store, reference)
            }
            try both { try $0.save(contentsOf: SearchFilm.all) }
            // Overwrites, one and many.
            try both { try $0.save(SearchFilm(id: 3, title: "Zebra Moon", year: 1990, genre: "Drama")) }
            try both {
                try $0.save(
                    contentsOf: SearchFilm.all.prefix(5).map {
                        SearchFilm(id: $0.id, title: "Moonlight " + $0.title, year: $0.year, genre: nil)
                    }
                )
            }
            // A new key twice in one save, a new key below the largest, and one saved, deleted and
            // saved again in one transaction.
            try both {
                try $0.save(contentsOf: [
                    SearchFilm(id: 950, title: "Zebra First", year: 1950, genre: nil),
                    SearchFilm(id: 950, title: "Moon Second", year: 1950, genre: nil),
                    SearchFilm(id: -7, title: "Negative Zebra", year: 1950, genre: nil),
                ])
            }
            try both { store in
                try store.transaction { tx in
                    try tx.save(SearchFilm(id: 960, title: "Zebra Again", year: 1950, genre: nil))
                    try tx.delete(SearchFilm.self, id: 960)
                    try tx.save(SearchFilm(id: 960, title: "Moon Again", year: 1950, genre: nil))
                }
            }
            // Untyped writes and imports.
            try both {
                _ = try $0.insert(dictionaries: [["id": 900, "title": "Zebra Crossing", "year": 1999]], into: "films")
            }
            try both {
                let csv = Data("id,title,year,genre\n901,Zebra Nights,2001,Comedy\n4,Café Zebra,2002,\n".utf8)
                _ = try $0.insert(csv: csv, into: "films")
            }
            try both {
                let json = Data(#"{"id": 902, "title": "Moon River Zebra", "year": 1961, "genre": "Musical"}"#.utf8)
                _ = try $0.insert(jsonLines: json, into: "films")
            }
            // Update-where of an indexed field, and of another one.
            try both {
                _ = try $0.update(SearchFilm.self, set: ["genre": "Zebra Stories"], where: Column("year") < 1960)
            }
            try both { _ = try $0.update(in: "films", set: ["year": 1], where: Column("id") == 2) }
            // Deletes, one and by a predicate.
            try both { _ = try $0.delete(SearchFilm.self, id: 901) }
            try both { _ = try $0.deleteAll(SearchFilm.self, where: Column("year") > 2005) }
            // A rolled-back transaction leaves the table as it was.
            let before = try Self.rows(path, "SELECT rowid, c0, c1 FROM \"_search_fts(films)\" ORDER BY rowid")
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try store.transaction { tx in
                    try tx.save(SearchFilm(id: 1, title: "Rolled Back", year: 2000, genre: nil))
                    try tx.save(SearchFilm(id: 5000, title: "Rolled Back", year: 2000, genre: nil))
                    try tx.delete(SearchFilm.self, id: 2)
                    #expect(try tx.search(SearchFilm.self, matching: "rolled back").map(\.id) == [1, 5000])
                    throw Abort()
                }
            }
            #expect(try Self.rows(path, "SELECT rowid, c0, c1 FROM \"_search_fts(films)\" ORDER BY rowid") == before)
            try Self.expectInStep(path, "films", fields: ["title", "genre"])
            try Self.expectSameAnswers(store, reference)
        }
    }

    @Test func copiesBothWaysBuildTheFTS5TableAtTheDestination() throws {
        try TemporaryDirectory.with("sqlite-search-copy") { directory in
            let path = directory.appendingPathComponent("s.sqlite").path
            let source = ObjectStore(backend: InMemoryStorageBackend())
            try source.save(contentsOf: SearchFilm.all)
            // Into a new SQLite store.
            let store = try ObjectStore(backend: .sqlite(path: path))
            defer { try? store.close() }
            try source.copy(to: store)
            try Self.expectInStep(path, "films", fields: ["title", "genre"])
            try Self.expectSameAnswers(store, source)
            // A replace of a collection the destination indexes in FTS5 already.
            let smaller = ObjectStore(backend: InMemoryStorageBackend())
            try smaller.save(contentsOf: SearchFilm.all.suffix(40))
            try smaller.copy(to: store, mode: .replace)
            try Self.expectInStep(path, "films", fields: ["title", "genre"])
            try Self.expectSameAnswers(store, smaller)
            #expect(try Self.rows(path, "SELECT count(*) FROM \"_search_fts(films)\"") == [["40"]])
            // From SQLite's FTS5 table to another engine's own postings.
            let back = ObjectStore(backend: InMemoryStorageBackend())
            try store.copy(to: back)
            #expect(try back.fullTextIndex(of: "films") == .fullText(["title", "genre"]))
            try Self.expectSameAnswers(back, smaller)
            // SQLite to SQLite.
            let secondPath = directory.appendingPathComponent("t.sqlite").path
            let second = try ObjectStore(backend: .sqlite(path: secondPath))
            defer { try? second.close() }
            try store.copy(to: second)
            try Self.expectInStep(secondPath, "films", fields: ["title", "genre"])
            try Self.expectSameAnswers(second, smaller)
        }
    }

    @Test func migrationsRebuildTheFTS5TableOverTheFieldsLeft() throws {
        try TemporaryDirectory.with("sqlite-search-migrate") { directory in
            let path = directory.appendingPathComponent("s.sqlite").path
            let store = try ObjectStore(backend: .sqlite(path: path))
            defer { try? store.close() }
            try store.save(contentsOf: SearchFilm.all)
            var migrator = Migrator()
            migrator.register("rename title") { try $0.renameColumn("title", to: "name", in: "films") }
            migrator.register("drop genre") { try $0.dropColumn("genre", from: "films") }
            try migrator.migrate(store)
            #expect(try store.fullTextIndex(of: "films") == .fullText(["name"]))
            try Self.expectInStep(path, "films", fields: ["name"])
            #expect(try Self.rows(path, "SELECT count(*) FROM pragma_table_info('_search_fts(films)')") == [["1"]])
            // The genres are no longer found (these words are in no title); the titles are.
            #expect(try store.search(in: "films", matching: "thriller OR western").isEmpty)
            let hits = try store.search(in: "films", matching: "star").compactMap { $0["id"] }
            let wanted = SearchFilm.all.filter { SearchTokenizer.tokens(in: $0.title).contains("star") }.map {
                StorageValue.integer($0.id)
            }
            #expect(Set(hits) == Set(wanted))
            #expect(!hits.isEmpty)
        }
    }
}
