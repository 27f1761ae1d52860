import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import SQLiteBackend

/// Compiled scan SQL is reused across values of one shape; its arguments must line up.
@Suite struct SQLiteScanCacheTests {
    static let schema = CollectionSchema(
        name: "t",
        columns: [.init(name: "id", type: .integer), .init(name: "a", type: .integer), .init(name: "b", type: .text)],
        primaryKey: "id"
    )

    static let predicates: [StoragePredicate] = [
        Column("a") == 1,
        Column("a") > 1 && Column("b").like("x%"),
        Column("a").in([1, 2, 3]),
        (Column("a") == 1 || Column("b") == "z") && !(Column("missing") < 5),
        Column("a").in([4, 5]) || (Column("b") == nil && Column("a") >= 9),
        !(Column("b").like("%q") || Column("a") != 7),
        Column("a").in(0..<100) && Column("b").in((0..<100).map { "v\($0)" } + ["x\0y", "z"]),
        !Column("b").in([StorageValue.blob(Data([0, 1]))] + (0..<100).map { .real(Double($0) + 0.5) }),
        (0..<100).reduce(Column("a") == -1) { chain, value in chain || Column("a") == value },
    ]

    @Test(arguments: predicates)
    func argumentsComeInTheOrderTheCompilerBindsThem(_ predicate: StoragePredicate) {
        var compiler = SQLiteQueryCompiler(schema: Self.schema)
        _ = compiler.whereClause(predicate)
        #expect(SQLiteQueryCompiler.arguments(of: predicate, Self.schema) == compiler.arguments)
    }

    @Test func oneShapeServesManyValues() throws {
        struct Row: Codable, Equatable {
            var id: Int64
            var a: Int
            var b: String
        }
        try TemporaryDirectory.with("sqlite-scan-cache") { directory in
            let store = try ObjectStore(backend: .sqlite(path: directory.appendingPathComponent("c.sqlite").path))
            let rows = (1...50).map { Row(id: Int64($0), a: $0 % 7, b: "b\($0)") }
            try store.save(contentsOf: rows)
            for row in rows { #expect(try store.fetch(Row.self, id: row.id) == row) }
            for a in 0..<7 {
                let expected = rows.filter { $0.a == a && $0.id > 10 }
                #expect(try store.fetchAll(Row.self, where: Column("a") == a && Column("id") > 10) == expected)
            }
            // A schema change compiles anew: the new column is selected, not NULL.
            struct Wider: Codable, Equatable, StorableModel {
                static let collectionName = "Row"
                var id: Int64
                var a: Int
                var b: String
                var c: Int?
            }
            try store.save(Wider(id: 99, a: 1, b: "w", c: 5))
            #expect(try store.fetch(Wider.self, id: 99)?.c == 5)
        }
    }

    @Test func longInListsShareOneSmallShape() {
        let long = Column("a").in(0..<1_000_000)
        let shorter = Column("a").in(0..<500)
        #expect(SQLiteQueryCompiler.shape(of: long, Self.schema) == SQLiteQueryCompiler.shape(of: shorter, Self.schema))
        #expect(SQLiteQueryCompiler.shape(of: long, Self.schema) == .in("a", [.integer(0)]))
        var longCompiler = SQLiteQueryCompiler(schema: Self.schema)
        var shorterCompiler = SQLiteQueryCompiler(schema: Self.schema)
        #expect(longCompiler.whereClause(long) == shorterCompiler.whereClause(shorter))
        #expect(longCompiler.arguments.count == 1)
        // A short list binds a parameter per value, so its length is part of its shape.
        #expect(
            SQLiteQueryCompiler.shape(of: Column("a").in([1, 2]), Self.schema)
                != SQLiteQueryCompiler.shape(of: Column("a").in([1]), Self.schema)
        )
    }
}
