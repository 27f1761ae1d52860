import Storage

/// Sub-queries in the statement: `Column("authorID").in(Author.self, where: …)` is one
/// `… WHERE "authorID" IN (SELECT "id" FROM authors WHERE …)`, in scans, counts, deletes, updates
/// and aggregates. Where the compiler cannot take one (see `PostgreSQLQueryCompiler.subquery`),
/// `scan` reads its keys first (`resolvingSubqueries`) and the other calls fall back to `scan`.
extension PostgreSQLReadTransaction: SubqueryFilteringReadTransaction {
    /// A compiler over `schema` that compiles sub-queries over the tables of this transaction's
    /// catalog. The sub-query's table carries no stamp check: the statement reads only its key
    /// and the columns its predicate names, which the store checked against the same catalog.
    func makeCompiler(_ schema: CollectionSchema) -> PostgreSQLQueryCompiler {
        var compiler = PostgreSQLQueryCompiler(schema: schema)
        compiler.subqueryTarget = { [unowned self] collection, columns in
            guard let target = try? storedSchema(of: collection, needing: columns) else { return nil }
            return (target, catalog.table(of: target.name))
        }
        return compiler
    }
}
