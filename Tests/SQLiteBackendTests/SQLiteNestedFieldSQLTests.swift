import Storage
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
            SQLiteQueryCompiler.arguments(of: predicate) + SQLiteQueryCompiler.orderArguments([ordering])
                == compiler.arguments
        )
        // Two paths of one shape share one SQL text (and cached statement).
        #expect(
            SQLiteQueryCompiler.shape(of: Column("address", "city") == "Oslo")
                == SQLiteQueryCompiler.shape(of: Column("address", "zip") == 1)
        )
    }

    @Test func keysThePathSyntaxCannotCarryAreLeftToSwift() {
        var compiler = SQLiteQueryCompiler(schema: Self.schema)
        let compiled = compiler.whereClause(Column("address", "a\"b") == 1)
        #expect(compiled == nil)
        #expect(SQLiteQueryCompiler.arguments(of: Column("address", "a\"b") == 1) == [])
    }
}
