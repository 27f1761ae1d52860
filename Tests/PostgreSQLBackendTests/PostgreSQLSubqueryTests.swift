import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Sub-queries on PostgreSQL: compiled into the one statement (`… IN (SELECT …)`), and resolved
/// by the backend itself where the compiler cannot take them.
@Suite struct PostgreSQLSubqueryTests {
    struct Writer: Codable, StorableModel {
        static let collectionName = "writers"
        var id: Int64
        var country: String
        var born: Int
    }

    struct Novel: Codable, StorableModel {
        static let collectionName = "novels"
        var id: Int64
        var writerID: Int64?
        /// The writer's key as text: a column of another class than the key's.
        var writerText: String
    }

    static func stock(_ store: ObjectStore) throws {
        try store.save(contentsOf: [
            Writer(id: 1, country: "FR", born: 1802), Writer(id: 2, country: "RU", born: 1821),
            Writer(id: 3, country: "FR", born: 1840),
        ])
        var novels: [Novel] = []
        for id: Int64 in 1...9 {
            let writer = id == 9 ? nil : id % 3 + 1
            novels.append(Novel(id: id, writerID: writer, writerText: writer.map { "\($0)" } ?? ""))
        }
        try store.save(contentsOf: novels)
    }

    /// A read that may run one query only (`readSingleQuery` refuses a second with `.misuse`)
    /// answers a sub-query: it is in the statement, not a query for the keys and one with them.
    @Test func aSubqueryIsPartOfTheOneStatement() throws {
        try withStore("subquery-one") { store, path in
            try Self.stock(store)
            let backend = try PostgreSQLStorageBackend(
                url: try PostgreSQLTestServer.url(),
                configuration: .init(schema: PostgreSQLTestServer.schema(for: path), observesOtherProcesses: false)
            )
            defer { backend.close() }
            _ = try backend.read { [try $0.schema(of: "writers"), try $0.schema(of: "novels")] }  // cached
            let french = StoragePredicate.subquery(
                "writerID",
                collection: "writers",
                predicate: .compare("country", .equal, "FR")
            )
            let keys = try backend.readSingleQuery { transaction -> [StorageValue] in
                #expect(transaction is any SubqueryFilteringReadTransaction)
                var keys: [StorageValue] = []
                try transaction.scan(
                    ScanRequest(collection: "novels", columns: ["id"], predicate: .compare("id", .greater, 1) && french)
                ) {
                    keys.append($0.value(at: 0))
                    return true
                }
                return keys
            }
            #expect(keys == [.integer(2), .integer(3), .integer(5), .integer(6), .integer(8)])
            #expect(try backend.readSingleQuery { try $0.count(in: "novels", where: .not(french)) } == 3)
            // Through the store: counts, updates, aggregates and deletes take it too.
            let russian = Column("writerID").in(Writer.self, where: Column("country") == "RU")
            #expect(try store.count(Novel.self, where: russian) == 3)
            #expect(try store.update(Novel.self, set: ["writerText": "ru"], where: russian) == 3)
            let rows = try store.aggregate(Novel.self, [.count], where: Column("writerText") == "ru" && russian)
            #expect(rows.first?["count"] == .integer(3))
            #expect(try store.deleteAll(Novel.self, where: russian) == 3)
            #expect(try store.fetchAll(Novel.self, orderBy: [.ascending("id")]).map(\.id) == [2, 3, 5, 6, 8, 9])
        }
    }

    /// Where SQL cannot say it as the other engines mean it (the column's class is not the key's,
    /// or the sub-query's own predicate is filtered here), the backend reads the keys first: the
    /// same answers, two queries.
    @Test func aSubqueryTheCompilerCannotTakeIsResolvedByTheBackend() throws {
        try withStore("subquery-resolved") { store, _ in
            try Self.stock(store)
            // Text holding "2" is not the integer key 2: nothing matches, on every engine.
            let asText = Column("writerText").in(Writer.self, where: nil)
            #expect(try store.count(Novel.self, where: asText) == 0)
            #expect(try store.count(Novel.self, where: !asText) == 9)
            // LIKE on an integer column is filtered here, inside the sub-query.
            let born18 = Column("writerID").in(Writer.self, where: Column("born").like("18%"))
            #expect(try store.fetchAll(Novel.self, where: born18).map(\.id) == [1, 2, 3, 4, 5, 6, 7, 8])
            let born184 = Column("writerID").in(Writer.self, where: Column("born").like("184%"))
            #expect(try store.count(Novel.self, where: born184) == 3)
            #expect(
                try store.deleteAll(
                    Novel.self,
                    where: Column("writerID").in(Writer.self, where: Column("born").like("182%"))
                ) == 3
            )
            #expect(try store.count(Novel.self) == 6)
        }
    }
}
