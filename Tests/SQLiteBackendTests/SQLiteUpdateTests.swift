import CSQLite
import Foundation
import SQLiteBackend
import Storage
import Testing

/// Update-where on SQLite: one `UPDATE … RETURNING`, and the core path when the compiler cannot
/// take the predicate.
@Suite struct SQLiteUpdateTests {
    @Test func aCompiledPredicateIsOneStatementAndOneTooDeepIsLeftToTheStore() throws {
        try withBackend { backend, _ in
            let keys = try backend.write { transaction -> [StorageValue]? in
                _ = try transaction.prepareCollection(peopleSchema)
                let writer = try transaction.makeWriter(for: "people", columns: ["id", "name", "score"])
                for id in 1...5 { try writer.put([.integer(Int64(id)), .text("p\(id)"), .real(Double(id))]) }
                let bulk = try #require(transaction as? any BulkUpdatingWriteTransaction)
                return try bulk.updateAll(
                    in: "people",
                    columns: ["name", "extra"],
                    values: [.text("x"), .integer(7)],
                    where: Column("score") >= 4.0
                )
            }
            #expect(keys.map(Set.init) == [.integer(4), .integer(5)])
            let rows = try backend.read { try $0.rows(ScanRequest(collection: "people", columns: ["name", "extra"])) }
            #expect(rows == [["p1", nil], ["p2", nil], ["p3", nil], ["x", 7], ["x", 7]])

            // Alternating AND and OR cannot be flattened: past SQLite's parser depth, the
            // transaction answers nil and changes nothing.
            var deep: StoragePredicate = Column("id") == 1
            for level in 0..<40 {
                deep = level % 2 == 0 ? (Column("score") > -1.0 && deep) : (Column("id") == 99 || deep)
            }
            let answer = try backend.write { transaction -> [StorageValue]? in
                try (transaction as? any BulkUpdatingWriteTransaction)?.updateAll(
                    in: "people",
                    columns: ["name"],
                    values: [.text("deep")],
                    where: deep
                )
            }
            #expect(answer == nil)
            let store = ObjectStore(backend: backend)
            #expect(try store.update(in: "people", set: ["name": "deep"], where: deep) == 1)
            #expect(try store.fetchDictionaries(from: "people", where: Column("name") == "deep").count == 1)
        }
    }

    /// The keys an update reports: gathered by the update hook when the key is the rowid, by
    /// `RETURNING` otherwise, and the same either way, for a table of this backend's and for
    /// tables made by hand whose rowids are not their keys.
    @Test func theKeysOfAnUpdateAreTheRecordsKeysWhateverTheTable() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/keys.sqlite"
            let store = ObjectStore(backend: try SQLiteStorageBackend(path: path))
            defer { try? store.close() }
            try store.insert(dictionaries: (1...6).map { ["id": $0 * 10, "n": $0] }, into: "integers")
            try store.insert(dictionaries: (1...6).map { ["id": "k\($0)", "n": $0] }, into: "texts")
            // Made by hand: `INT PRIMARY KEY` and `INTEGER PRIMARY KEY DESC` are not the rowid,
            // and a table WITHOUT ROWID has none.
            var database: OpaquePointer?
            try #require(sqlite3_open_v2(path, &database, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
            for table in [
                "\"ints\" (\"id\" INT PRIMARY KEY, \"n\" INTEGER)",
                "\"descending\" (\"id\" INTEGER PRIMARY KEY DESC, \"n\" INTEGER)",
                "\"norowid\" (\"id\" INTEGER PRIMARY KEY, \"n\" INTEGER) WITHOUT ROWID",
            ] {
                let name = String(table.split(separator: " ")[0])
                let sql = "CREATE TABLE \(table); INSERT INTO \(name) (id, n) VALUES (100, 1), (200, 2), (300, 3)"
                try #require(sqlite3_exec(database, sql, nil, nil, nil) == SQLITE_OK, "\(sql)")
            }
            sqlite3_close_v2(database)
            let backend = try SQLiteStorageBackend(path: path)
            defer { try? backend.close() }
            func keys(_ table: String, _ predicate: StoragePredicate) throws -> Set<StorageValue>? {
                try backend.write { transaction in
                    let bulk = try #require(transaction as? any BulkUpdatingWriteTransaction)
                    return try bulk.updateAll(in: table, columns: ["n"], values: [.integer(0)], where: predicate)
                        .map(Set.init)
                }
            }
            #expect(try keys("integers", Column("n") >= 4) == [.integer(40), .integer(50), .integer(60)])
            #expect(try keys("integers", Column("n") > 100) == [])
            #expect(try keys("texts", Column("n") <= 2) == [.text("k1"), .text("k2")])
            for table in ["ints", "descending", "norowid"] {
                #expect(try keys(table, Column("n") >= 2) == [.integer(200), .integer(300)], "\(table)")
            }
        }
    }
}
