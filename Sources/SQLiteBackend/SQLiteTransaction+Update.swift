import Storage

extension SQLiteWriteTransaction: BulkUpdatingWriteTransaction {
    /// One `UPDATE … SET … WHERE … RETURNING` statement: SQLite finds and rewrites the records in
    /// one pass over the table (or its index), where the core path would read the keys and then
    /// look each record up again to replace it. A predicate the compiler cannot take answers
    /// `nil`, and the store takes the core path, filtering with the shared evaluator.
    func updateAll(
        in collection: String,
        columns: [String],
        values: [StorageValue],
        where predicate: StoragePredicate?
    ) throws -> [StorageValue]? {
        try runUpdate(in: collection, columns: columns, values: values, where: predicate, returningKeys: true)?.keys
    }

    /// The same statement without `RETURNING`, counted with `sqlite3_changes`: SQLite keeps the
    /// rows a `RETURNING` clause gives in a table of their own until the statement is done, which
    /// cost about as much again as the update (docs/BENCHMARKS.md, "Update-where").
    func countingUpdateAll(
        in collection: String,
        columns: [String],
        values: [StorageValue],
        where predicate: StoragePredicate?
    ) throws -> Int? {
        try runUpdate(in: collection, columns: columns, values: values, where: predicate, returningKeys: false)?.count
    }

    /// Runs the update; `nil` when the compiler cannot take `predicate` (nothing ran then).
    private func runUpdate(
        in collection: String,
        columns: [String],
        values: [StorageValue],
        where predicate: StoragePredicate?,
        returningKeys: Bool
    ) throws -> (keys: [StorageValue], count: Int)? {
        try checkActive()
        guard let schema = try storedSchema(of: collection) else { return ([], 0) }
        var compiler = SQLiteQueryCompiler(schema: schema)
        guard let whereClause = compiler.whereClause(predicate) else { return nil }
        // Keys that are rowids are gathered by an update hook as SQLite writes each row, at a
        // fraction of what `RETURNING` costs; others come back through `RETURNING`.
        let hooked =
            returningKeys ? try connection.keyIsRowID(schema) ? SQLiteUpdatedRowIDs(table: schema.name) : nil : nil
        let returning = returningKeys && hooked == nil
        // The assignments' placeholders come first in the text, so their values are bound first.
        let sql =
            "UPDATE " + quote(schema.name) + " SET "
            + columns.map { quote($0) + " = ?" }.joined(separator: ", ") + whereClause
            + (returning ? " RETURNING " + quote(schema.primaryKey) : "")
        if let hooked {
            let count = try connection.collectingUpdatedRowIDs(hooked) {
                try runStatement(sql, collection, columns, values, compiler.arguments, returning: false).count
            }
            return (hooked.rowIDs.map { .integer($0) }, count)
        }
        return try runStatement(sql, collection, columns, values, compiler.arguments, returning: returning)
    }

    /// Binds and steps the update statement `sql`: the keys it returns (with `returning`) and
    /// how many rows it changed.
    private func runStatement(
        _ sql: String,
        _ collection: String,
        _ columns: [String],
        _ values: [StorageValue],
        _ arguments: [StorageValue],
        returning: Bool
    ) throws -> (keys: [StorageValue], count: Int) {
        try connection.withStatement(sql, collection: collection) { statement in
            var index: Int32 = 1
            for (column, value) in zip(columns, values) {
                do {
                    try statement.bind(value, at: index)
                } catch var error as StorageError where error.code == .limitExceeded {
                    error.collection = collection
                    error.column = column
                    throw error
                }
                index += 1
            }
            for argument in arguments {
                try statement.bind(argument, at: index)
                index += 1
            }
            var keys: [StorageValue] = []
            let row = statement.row
            while try statement.step("cannot update records", collection: collection) {
                keys.append(row.value(at: 0))
            }
            return (keys, returning ? keys.count : Int(connection.changes))
        }
    }
}
