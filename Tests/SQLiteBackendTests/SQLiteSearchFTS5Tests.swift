internal import CSQLite
import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// The store's ranking is SQLite's own: the films' words (as our tokenizer gives them) in a real
/// FTS5 table, queried with `MATCH … ORDER BY bm25(…)`, come back in the same order as
/// `search(_:matching:)` returns them, scores tied or not.
@Suite struct SQLiteSearchFTS5Tests {
    /// Our query and the same query in FTS5's syntax.
    static let queries: [(ours: String, fts5: String)] = [
        ("love", "love"),
        ("star wars", "star AND wars"),
        ("\"star wars\"", "\"star wars\""),
        ("lov*", "lov*"),
        ("moon OR blue", "moon OR blue"),
        ("star -trek", "star NOT trek"),
        ("CAFÉ OR Amelie OR comedie", "cafe OR amelie OR comedie"),
        ("the", "the"),
        ("fiction", "fiction"),
        ("star wars OR trek", "star AND (wars OR trek)"),
        ("da*", "da*"),
        ("the king", "the AND king"),
        ("\"the king\" OR lord -rings", "(\"the king\" OR lord) NOT rings"),
        ("fiction scien*", "fiction AND scien*"),
    ]

    @Test func rankingIsFTS5sBM25() throws {
        try TemporaryDirectory.with("sqlite-search-fts5") { directory in
            let store = try ObjectStore(backend: .sqlite(path: directory.appendingPathComponent("s.sqlite").path))
            defer { try? store.close() }
            try store.save(contentsOf: SearchFilm.all)

            var db: OpaquePointer?
            #expect(sqlite3_open(":memory:", &db) == SQLITE_OK)
            defer { sqlite3_close(db) }
            func exec(_ sql: String) {
                #expect(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, "\(String(cString: sqlite3_errmsg(db)))")
            }
            exec("CREATE VIRTUAL TABLE films USING fts5(title, genre, tokenize = 'unicode61 remove_diacritics 0')")
            var insert: OpaquePointer?
            sqlite3_prepare_v2(db, "INSERT INTO films (rowid, title, genre) VALUES (?, ?, ?)", -1, &insert, nil)
            for film in SearchFilm.all {
                sqlite3_bind_int64(insert, 1, film.id)
                let title = SearchTokenizer.tokens(in: film.title).joined(separator: " ")
                let genre = SearchTokenizer.tokens(in: film.genre ?? "").joined(separator: " ")
                sqlite3_bind_text(insert, 2, title, -1, storage_sqlite_transient())
                sqlite3_bind_text(insert, 3, genre, -1, storage_sqlite_transient())
                #expect(sqlite3_step(insert) == SQLITE_DONE)
                sqlite3_reset(insert)
            }
            sqlite3_finalize(insert)

            var select: OpaquePointer?
            sqlite3_prepare_v2(
                db,
                "SELECT rowid FROM films WHERE films MATCH ? ORDER BY bm25(films), rowid",
                -1,
                &select,
                nil
            )
            defer { sqlite3_finalize(select) }
            for (ours, fts5) in Self.queries {
                sqlite3_bind_text(select, 1, fts5, -1, storage_sqlite_transient())
                var expected: [Int64] = []
                while sqlite3_step(select) == SQLITE_ROW { expected.append(sqlite3_column_int64(select, 0)) }
                sqlite3_reset(select)
                #expect(!expected.isEmpty, "\(fts5)")
                let found = try store.search(SearchFilm.self, matching: ours).map(\.id)
                #expect(found == expected, "\(ours) / \(fts5)")
            }
        }
    }
}
