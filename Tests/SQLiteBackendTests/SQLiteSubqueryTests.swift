import Foundation
import SQLiteBackend
import Storage
import Testing

/// Sub-queries on SQLite: compiled into the one statement, resolved by the backend itself where
/// it filters with `PreparedPredicate`.
@Suite struct SQLiteSubqueryTests {
    struct Writer: Codable, StorableModel {
        static let collectionName = "writers"
        var id: Int64
        var country: String
    }

    struct Novel: Codable, StorableModel {
        static let collectionName = "novels"
        var id: Int64
        var writerID: Int64?
    }

    static func stock(_ store: ObjectStore) throws {
        try store.save(contentsOf: [
            Writer(id: 1, country: "FR"), Writer(id: 2, country: "RU"), Writer(id: 3, country: "FR"),
        ])
        var novels: [Novel] = []
        for id: Int64 in 1...9 { novels.append(Novel(id: id, writerID: id == 9 ? nil : id % 3 + 1)) }
        try store.save(contentsOf: novels)
    }

    @Test func theBackendRunsASubqueryInItsOwnStatement() throws {
        try withBackend { backend, _ in
            let store = ObjectStore(backend: backend)
            try Self.stock(store)
            // Handed to the backend as it is: an unresolved sub-query evaluated by
            // `PreparedPredicate` would match nothing.
            let keys = try backend.read { transaction -> [StorageValue] in
                #expect(transaction is any SubqueryFilteringReadTransaction)
                var keys: [StorageValue] = []
                let french = StoragePredicate.subquery(
                    "writerID",
                    collection: "writers",
                    predicate: .compare("country", .equal, "FR")
                )
                try transaction.scan(ScanRequest(collection: "novels", columns: ["id"], predicate: french)) {
                    keys.append($0.value(at: 0))
                    return true
                }
                #expect(try transaction.count(in: "novels", where: .not(french)) == 3)
                return keys
            }
            #expect(keys == [.integer(2), .integer(3), .integer(5), .integer(6), .integer(8)])
            // Through the store, twice with other values (the second from the statement cache,
            // its values bound in the same order).
            for (country, expected) in [("FR", [2, 3, 5, 6, 8]), ("RU", [1, 4, 7])] {
                let subquery = Column("writerID").in(Writer.self, where: Column("country") == country)
                let found = try store.fetchAll(Novel.self, where: Column("id") >= 1 && subquery).map(\.id)
                #expect(found == expected.map(Int64.init))
            }
            #expect(try store.deleteAll(Novel.self, where: Column("writerID").in(Writer.self, where: nil)) == 8)
        }
    }

    @Test func aSubqueryTheCompilerCannotTakeIsResolvedByTheBackend() throws {
        try withBackend { backend, _ in
            let store = ObjectStore(backend: backend)
            try Self.stock(store)
            // Deeper than the compiler's nesting limit: filtered with PreparedPredicate.
            var deep = Column("writerID").in(Writer.self, where: Column("country") == "RU")
            for _ in 0..<40 { deep = deep && (Column("id") >= 0 || Column("id") == -1) }
            #expect(try store.fetchAll(Novel.self, where: deep).map(\.id) == [1, 4, 7])
            #expect(try store.count(Novel.self, where: deep) == 3)
            #expect(try store.deleteAll(Novel.self, where: deep) == 3)
            #expect(try store.count(Novel.self) == 6)
        }
    }
}
