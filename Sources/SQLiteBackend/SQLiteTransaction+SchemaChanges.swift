import Storage

/// Schema changes in place: `ALTER TABLE … RENAME COLUMN`, `RENAME TO` and `DROP COLUMN`, and
/// `DROP INDEX`, never a copy of the table. Index names carry the table's and the columns' names
/// (`IndexDefinition.name(in:)`), so an index on a renamed column or table is made again under
/// its new name (the cost of building that index; the table is not copied).
extension SQLiteWriteTransaction: SchemaAlteringWriteTransaction {
    func renameColumn(_ column: String, to newName: String, in collection: String) throws -> CollectionSchema? {
        try checkActive()
        guard let stored = try currentSchema(of: collection) else { return nil }
        let affected = try ourIndexes(of: stored.name).filter { $0.definition.columns.contains(column) }
        for index in affected {
            try connection.execute("DROP INDEX " + quote(index.name), collection: stored.name)
        }
        try connection.execute(
            "ALTER TABLE " + quote(stored.name) + " RENAME COLUMN " + quote(column) + " TO " + quote(newName),
            collection: stored.name
        )
        for index in affected {
            var renamed = index.definition
            renamed.columns = renamed.columns.map { $0 == column ? newName : $0 }
            try createIndex(renamed, on: stored.name)
        }
        return try refreshSchema(of: stored.name)
    }

    func dropColumn(_ column: String, from collection: String) throws -> CollectionSchema? {
        try checkActive()
        guard let stored = try currentSchema(of: collection) else { return nil }
        for index in try ourIndexes(of: stored.name) where index.definition.columns.contains(column) {
            try connection.execute("DROP INDEX " + quote(index.name), collection: stored.name)
        }
        try connection.execute(
            "ALTER TABLE " + quote(stored.name) + " DROP COLUMN " + quote(column),
            collection: stored.name
        )
        return try refreshSchema(of: stored.name)
    }

    func renameCollection(_ collection: String, to newName: String) throws -> CollectionSchema? {
        try checkActive()
        // SQLite refuses a rename to a name that differs only in case: the copy does that one.
        guard Identifier.folded(collection) != Identifier.folded(newName),
            let stored = try currentSchema(of: collection)
        else { return nil }
        let indexes = try ourIndexes(of: stored.name)
        for index in indexes {
            try connection.execute("DROP INDEX " + quote(index.name), collection: stored.name)
        }
        // Moves the table's row of sqlite_sequence too, so the auto-key sequence goes with it.
        try connection.execute(
            "ALTER TABLE " + quote(stored.name) + " RENAME TO " + quote(newName),
            collection: stored.name
        )
        for index in indexes {
            try createIndex(index.definition, on: newName)
        }
        let folded = Identifier.folded(stored.name)
        changedSchemas[folded] = nil
        droppedCollections.insert(folded)
        return try refreshSchema(of: newName)
    }

    func dropIndex(_ index: IndexDefinition, from collection: String) throws -> CollectionSchema? {
        try checkActive()
        guard let stored = try currentSchema(of: collection) else { return nil }
        for found in try ourIndexes(of: stored.name) where found.definition == index {
            try connection.execute("DROP INDEX " + quote(found.name), collection: stored.name)
        }
        return try refreshSchema(of: stored.name)
    }

    /// The schema of `collection`, read through the writer's connection so that its copy of the
    /// catalog is current before DDL is compiled against it (see `SQLiteSchemaMigrator.prepare`).
    private func currentSchema(of collection: String) throws -> CollectionSchema? {
        let known = try storedSchema(of: collection)
        return try refreshStoredSchema(of: collection, known: known)
    }

    /// The indexes this backend made on `table` (names with its prefixes), by name, with their
    /// definitions as the catalog has them now.
    private func ourIndexes(of table: String) throws -> [(name: String, definition: IndexDefinition)] {
        var names: [String] = []
        try connection.withStatement(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? COLLATE NOCASE ORDER BY rowid",
            collection: table
        ) { statement in
            try statement.bind(.text(table), at: 1)
            while try statement.step(collection: table) {
                if case .text(let name) = statement.row.value(at: 0) { names.append(name) }
            }
        }
        var found: [(name: String, definition: IndexDefinition)] = []
        for name in names {
            let isUnique = name.hasPrefix(SQLiteConnection.uniqueIndexPrefix)
            guard isUnique || name.hasPrefix(SQLiteConnection.indexPrefix) else { continue }
            var columns: [String] = []
            try connection.withStatement("SELECT name FROM pragma_index_info(?) ORDER BY seqno", collection: table) {
                statement in
                try statement.bind(.text(name), at: 1)
                while try statement.step(collection: table) {
                    if case .text(let column) = statement.row.value(at: 0) { columns.append(column) }
                }
            }
            if !columns.isEmpty {
                found.append((name, IndexDefinition(columns, unique: isUnique)))
            } else if let nested = IndexDefinition.nested(named: name) {
                found.append((name, nested))  // an expression index: a nested field's
            }
        }
        return found
    }

    private func createIndex(_ index: IndexDefinition, on table: String) throws {
        try connection.execute(SQLiteSchemaMigrator.createIndexSQL(index, on: table), collection: table)
    }
}
