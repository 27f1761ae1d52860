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
}
