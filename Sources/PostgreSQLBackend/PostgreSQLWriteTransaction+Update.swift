import Storage

extension PostgreSQLWriteTransaction: BulkUpdatingWriteTransaction {
    /// One `UPDATE … SET … WHERE … RETURNING` statement, one round trip whatever the number of
    /// records, where the core path would read the keys and send every record back. A predicate
    /// the compiler cannot take, or a value bound for a column whose PostgreSQL type is not the
    /// value's own (an untyped column is `text` here), answers `nil`: the store then takes the core
    /// path, whose writer converts or refuses such a value exactly as a save does.
    func updateAll(
        in collection: String,
        columns: [String],
        values: [StorageValue],
        where predicate: StoragePredicate?
    ) throws -> [StorageValue]? {
        try checkActive()
        try willRunStatement()
        guard let schema = try storedSchema(of: collection, needing: columns + (predicate?.columnNames ?? []))
        else { return [] }
        var compiler = makeCompiler(schema)
        var condition = ""
        if let predicate {
            guard let compiled = compiler.compile(predicate) else { return nil }
            condition = " WHERE " + compiled
        }
        var parameters = compiler.parameters
        var assignments: [String] = []
        for (column, value) in zip(columns, values) {
            guard let definition = compiler.definition(of: column) else { return nil }
            let type = value.columnType ?? definition.type
            guard definition.type == type || definition.type == .untyped && type == .text else { return nil }
            parameters.append(value)
            assignments.append(
                PostgreSQLIdentifier.quoted(definition.name) + " = $\(parameters.count)::"
                    + PostgreSQLType.sqlName(of: type)
            )
        }
        let sql =
            "UPDATE " + catalog.table(of: collection) + " SET " + assignments.joined(separator: ", ") + condition
            + " RETURNING " + PostgreSQLIdentifier.quoted(schema.primaryKey)
        let result = try connection.query(sql, parameters, "cannot update records", collection: collection)
        var keys: [StorageValue] = []
        keys.reserveCapacity(result.rowCount)
        result.forEachRow { row in
            keys.append(row.value(at: 0))
            return true
        }
        // Other processes' change streams hear of the keys as of any other write's.
        if !keys.isEmpty { changes.record(collection, keys, deleted: false) }
        return keys
    }
}
