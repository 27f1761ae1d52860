import Storage

extension SQLiteReadTransaction {
    /// Calls `body` with every record of `collection` that `predicate` selects, in `ordering`,
    /// filtering with `PreparedPredicate` rather than in SQL: for a predicate that binds more
    /// values than one SQLite statement takes (a chain of tens of thousands of comparisons, or
    /// an IN list of as many blobs). The row carries `columns`, then the predicate's columns.
    /// - Throws: `StorageError` when the records cannot be read.
    func forEachMatch(
        in collection: String,
        _ schema: CollectionSchema,
        _ predicate: StoragePredicate?,
        columns: [String],
        ordering: [Ordering],
        _ body: (any StorageRow) throws -> Bool
    ) throws {
        var predicate = predicate
        if let unresolved = predicate, unresolved.containsSubquery { predicate = try resolvingSubqueries(unresolved) }
        let prepared = PreparedPredicate(predicate)
        var positions: [String: Int] = [:]
        var selected = columns
        for name in predicate?.columnNames ?? [] where positions[name] == nil {
            positions[name] = selected.count
            selected.append(name)
        }
        var compiler = SQLiteQueryCompiler(schema: schema)
        var sql = "SELECT " + (selected.isEmpty ? "NULL" : selected.map { compiler.column($0) }.joined(separator: ", "))
        sql += " FROM " + quote(collection) + compiler.orderByClause(ordering)
        let arguments = compiler.arguments
        try connection.withStatement(sql, collection: collection) { statement in
            // The paths of nested fields the order sorts on.
            if !arguments.isEmpty { try statement.bind(arguments) }
            let row = statement.row
            while try statement.step("cannot read records", collection: collection) {
                guard prepared.matches({ name in positions[name].map { row.value(at: $0) } ?? .null }) else { continue }
                guard try body(row) else { break }
            }
        }
    }
}

/// Sub-queries: compiled into the statement (`SQLiteQueryCompiler.subquery`), or resolved
/// (`resolvingSubqueries`) where a predicate is filtered with `PreparedPredicate` instead.
extension SQLiteReadTransaction: SubqueryFilteringReadTransaction {
    /// The stored schema of a sub-query's collection, for the compiler.
    var subqueryLookup: (String) -> CollectionSchema? {
        { [unowned self] collection in try? self.storedSchema(of: collection) }
    }
}
