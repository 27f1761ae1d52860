internal import CSQLite
import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// The groundwork of issue 38's FTS5 index on SQLite: our folded tokens survive FTS5's `ascii`
/// tokenizer unchanged, and a parsed query translated by `SQLiteFullTextExpression` matches, in
/// a real FTS5 table, exactly the records (in bm25 order, ties by key) that the store's shared
/// search path returns.
@Suite struct SQLiteFullTextExpressionTests {
    /// An in-memory database with one FTS5 table `t(title, genre)` using `tokenize = 'ascii'`.
    final class Table {
        var db: OpaquePointer?

        init() throws {
            #expect(sqlite3_open(":memory:", &db) == SQLITE_OK)
            try exec("CREATE VIRTUAL TABLE t USING fts5(title, genre, tokenize = 'ascii')")
            try exec("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        }

        deinit { sqlite3_close(db) }

        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
                throw StorageError(.io, "\(sql): \(String(cString: sqlite3_errmsg(db)))")
            }
        }

        func insert(_ rowid: Int64, _ fields: [String]) throws {
            var statement: OpaquePointer?
            sqlite3_prepare_v2(db, "INSERT INTO t (rowid, title, genre) VALUES (?, ?, ?)", -1, &statement, nil)
            defer { sqlite3_finalize(statement) }
            sqlite3_bind_int64(statement, 1, rowid)
            for (index, field) in fields.enumerated() {
                let text = SearchTokenizer.tokens(in: field).joined(separator: " ")
                sqlite3_bind_text(statement, Int32(index + 2), text, -1, storage_sqlite_transient())
            }
            guard sqlite3_step(statement) == SQLITE_DONE else {
                throw StorageError(.io, String(cString: sqlite3_errmsg(db)))
            }
        }

        /// The rowids matching `expression`, best first, ties by rowid.
        func match(_ expression: String) throws -> [Int64] {
            var statement: OpaquePointer?
            sqlite3_prepare_v2(db, "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid", -1, &statement, nil)
            defer { sqlite3_finalize(statement) }
            sqlite3_bind_text(statement, 1, expression, -1, storage_sqlite_transient())
            var rowids: [Int64] = []
            while true {
                let code = sqlite3_step(statement)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else {
                    throw StorageError(.io, "\(expression): \(String(cString: sqlite3_errmsg(db)))")
                }
                rowids.append(sqlite3_column_int64(statement, 0))
            }
            return rowids
        }

        /// The tokens FTS5 holds for `rowid`, column by column, in order.
        func tokens(of rowid: Int64) -> [[String]] {
            var statement: OpaquePointer?
            sqlite3_prepare_v2(
                db,
                "SELECT col, term FROM v WHERE doc = ? ORDER BY col, offset",
                -1,
                &statement,
                nil
            )
            defer { sqlite3_finalize(statement) }
            sqlite3_bind_int64(statement, 1, rowid)
            var columns: [String: [String]] = [:]
            while sqlite3_step(statement) == SQLITE_ROW {
                let column = String(cString: sqlite3_column_text(statement, 0))
                columns[column, default: []].append(String(cString: sqlite3_column_text(statement, 1)))
            }
            return [columns["title"] ?? [], columns["genre"] ?? []]
        }
    }

    @Test func asciiTokenizerKeepsOurTokens() throws {
        let table = try Table()
        let fields = [
            ["Café Ærø: Straße Ÿes ŒUVRE", "東京 タワー 2046 x1 Ω"],
            ["naïve COÖPERATE déjà-vu", "İstanbul ﬁlm ½ ①"],
        ]
        for (index, pair) in fields.enumerated() { try table.insert(Int64(index + 1), pair) }
        for (index, pair) in fields.enumerated() {
            let expected = pair.map { SearchTokenizer.tokens(in: $0) }
            #expect(expected.allSatisfy { !$0.isEmpty })
            #expect(table.tokens(of: Int64(index + 1)) == expected, "\(pair)")
        }
        for word in ["café", "CAFE", "ærø", "東京", "2046", "deja*", "\"deja vu\"", "istanbul"] {
            let expression = SQLiteFullTextExpression.expression(for: try SearchQuery(parsing: word))
            #expect(try table.match(expression).count == 1, "\(word) → \(expression)")
        }
    }

    @Test func expressionsMatchTheSharedPath() throws {
        try TemporaryDirectory.with("sqlite-fts5-expression") { directory in
            let store = try ObjectStore(backend: .sqlite(path: directory.appendingPathComponent("s.sqlite").path))
            defer { try? store.close() }
            try store.save(contentsOf: SearchFilm.all)
            let table = try Table()
            for film in SearchFilm.all { try table.insert(film.id, [film.title, film.genre ?? ""]) }
            let queries =
                SQLiteSearchFTS5Tests.queries.map(\.ours) + [
                    "star star", "star -star", "-trek star", "\"wars star\"", "\"fiction star\"",
                    "star -\"star trek\" -wars", "s*", "lov* OR \"science fiction\" -drama", "star*",
                    "\"spider-man\"", "love love OR peace",
                ]
            for text in queries {
                let query = try SearchQuery(parsing: text)
                let expression = SQLiteFullTextExpression.expression(for: query)
                let expected = try store.search(SearchFilm.self, matching: text).map(\.id)
                #expect(try table.match(expression) == expected, "\(text) → \(expression)")
            }
        }
    }

    @Test func expressionShapes() throws {
        func expression(_ text: String) throws -> String {
            SQLiteFullTextExpression.expression(for: try SearchQuery(parsing: text))
        }
        #expect(try expression("Star") == "\"star\"")
        #expect(try expression("star wars") == "(\"star\") AND (\"wars\")")
        #expect(try expression("star wars OR trek") == "(\"star\") AND ((\"wars\" OR \"trek\"))")
        #expect(try expression("\"Star Wars\" lov*") == "(\"star wars\") AND (\"lov\"*)")
        #expect(try expression("star -trek -\"a b\"") == "((\"star\") NOT \"trek\") NOT \"a b\"")
    }
}
