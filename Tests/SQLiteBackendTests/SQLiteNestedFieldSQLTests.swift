import CSQLite
import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import SQLiteBackend

/// The SQL of nested fields: pushed down to `json_extract` with the path bound, never spelled
/// in the SQL text, and the same arguments on the cached path as when compiled.
struct SQLiteNestedFieldSQLTests {
    private static let schema = CollectionSchema(
        name: "people",
        columns: [ColumnDefinition(name: "id", type: .integer), ColumnDefinition(name: "address", type: .text)],
        primaryKey: "id"
    )

    @Test func compilesToJSONExtractWithTheBoundPath() throws {
        let hostile = "it's $.[0] ' OR 1=1 --"
        let predicate =
            Column("address", "city") == "Oslo" && Column("address", hostile, "b").in([1, 2])
            && !(Column("address", "zip") == nil)
        var compiler = SQLiteQueryCompiler(schema: Self.schema)
        let compiled = compiler.whereClause(predicate)
        let clause = try #require(compiled)
        var ordering = Ordering(column: "address", descending: true)
        ordering.path = ["geo", hostile]
        let order = compiler.orderByClause([ordering, .ascending("id")])
        #expect(clause.contains("json_extract(\"address\", ?)"))
        #expect(order.contains("json_extract(\"address\", ?) END) DESC"))
        #expect(!clause.contains("city") && !clause.contains(hostile) && !order.contains(hostile))
        #expect(
            compiler.arguments == [
                "$.\"city\"", "Oslo", .text("$.\"\(hostile)\".\"b\""), 1, 2, "$.\"zip\"",
                .text("$.\"geo\".\"\(hostile)\""),
            ]
        )
        // A cached statement is bound from the request alone: the same values in the same order.
        #expect(
            SQLiteQueryCompiler.arguments(of: predicate, Self.schema)
                + SQLiteQueryCompiler.orderArguments([ordering], Self.schema)
                == compiler.arguments
        )
        // Two paths of one shape share one SQL text (and cached statement).
        #expect(
            SQLiteQueryCompiler.shape(of: Column("address", "city") == "Oslo", Self.schema)
                == SQLiteQueryCompiler.shape(of: Column("address", "zip") == 1, Self.schema)
        )
    }

    @Test func keysThePathSyntaxCannotCarryAreLeftToSwift() {
        var compiler = SQLiteQueryCompiler(schema: Self.schema)
        let compiled = compiler.whereClause(Column("address", "a\"b") == 1)
        #expect(compiled == nil)
        #expect(SQLiteQueryCompiler.arguments(of: Column("address", "a\"b") == 1, Self.schema) == [])
    }

    @Test func anIndexOnANestedFieldIsAnExpressionIndexItsQueriesUse() throws {
        try TemporaryDirectory.with("sqlite-nested-index") { directory in
            let path = directory.appendingPathComponent("i.sqlite").path
            let store = try ObjectStore(backend: SQLiteStorageBackend(path: path))
            defer { try? store.close() }
            try store.save(
                contentsOf: (1...300).map { Inhabitant(id: $0, address: Place(city: "c\($0 % 30)", zip: Int($0))) }
            )
            let schema = try store.schema(of: Inhabitant.collectionName)
            let stored = try #require(schema)
            #expect(stored.indexes == [IndexDefinition(nested: "address", "city")])
            #expect(try store.fetchAll(Inhabitant.self, where: Column("address", "city") == "c7").count == 10)
            // The plan SQLite makes for the statements the backend runs.
            func plan(_ predicate: StoragePredicate, orderBy ordering: [Ordering] = []) throws -> String {
                var compiler = SQLiteQueryCompiler(schema: stored)
                let compiled = compiler.whereClause(predicate)
                let clause = try #require(compiled)
                let order = compiler.orderByClause(ordering)
                var database: OpaquePointer?
                try #require(sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY, nil) == SQLITE_OK)
                defer { sqlite3_close_v2(database) }
                var statement: OpaquePointer?
                let sql = "EXPLAIN QUERY PLAN SELECT \"id\" FROM \"inhabitants\"" + clause + order
                try #require(sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK, "\(sql)")
                defer { sqlite3_finalize(statement) }
                var details: [String] = []
                while sqlite3_step(statement) == SQLITE_ROW {
                    details.append(String(cString: sqlite3_column_text(statement, 3)))
                }
                return details.joined(separator: "; ")
            }
            let index = IndexDefinition(nested: "address", "city").name(in: "inhabitants")
            let equal = try plan(Column("address", "city") == "c7")
            #expect(equal.contains("USING INDEX \(index)"), "\(equal)")
            let range = try plan(Column("address", "city") > "c3")
            #expect(range.contains("USING INDEX \(index)"), "\(range)")
            let ordered = try plan(Column("address", "zip") > 1, orderBy: [.ascending(Column("address", "city"))])
            #expect(ordered.contains(index) && !ordered.contains("TEMP B-TREE"), "\(ordered)")
            // A field without an index is a scan.
            let other = try plan(Column("address", "zip") == 7)
            #expect(!other.contains(index) && other.contains("SCAN"), "\(other)")
        }
    }
}

/// A model with an index on a nested field.
private struct Inhabitant: Codable, StorableModel {
    static let collectionName = "inhabitants"
    static let indexes: [IndexDefinition] = [IndexDefinition(nested: "address", "city")]
    var id: Int64
    var address: Place?
}

private struct Place: Codable {
    var city: String?
    var zip: Int?
}
