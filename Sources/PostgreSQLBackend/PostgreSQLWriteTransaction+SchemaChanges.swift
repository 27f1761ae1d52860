import Storage

/// Schema changes in place: `ALTER TABLE … RENAME COLUMN`, `ALTER TABLE … RENAME TO` (with the
/// key sequence and the indexes, `ALTER … RENAME`, whose names derive from the collection's and
/// the columns' names), `ALTER TABLE … DROP COLUMN` and `DROP INDEX`, each with the catalog row
/// rewritten in the same transaction: other processes see the new stamp and read the schema
/// again (`PostgreSQLSchemaCache`). No record is copied; a rename takes PostgreSQL's
/// `ACCESS EXCLUSIVE` lock on the table until the commit.
extension PostgreSQLWriteTransaction: SchemaAlteringWriteTransaction {
    func renameColumn(_ column: String, to newName: String, in collection: String) throws -> CollectionSchema? {
        guard let current = try currentSchema(of: collection) else { return nil }
        var target = current
        for position in target.columns.indices where target.columns[position].name == column {
            target.columns[position].name = newName
        }
        target.indexes = current.indexes.map { index in
            IndexDefinition(index.columns.map { $0 == column ? newName : $0 }, unique: index.isUnique)
        }
        let table = catalog.table(of: current.name)
        if Identifier.folded(column) != Identifier.folded(newName) {
            try connection.execute(
                "ALTER TABLE " + table + " RENAME COLUMN " + PostgreSQLIdentifier.quoted(column) + " TO "
                    + PostgreSQLIdentifier.quoted(newName),
                collection: current.name
            )
        }
        for (old, new) in zip(current.indexes, target.indexes) where old != new {
            try renameIndex(old, of: current.name, to: new, of: current.name)
        }
        return try recordSchema(target, folded: Identifier.folded(current.name))
    }

    func dropColumn(_ column: String, from collection: String) throws -> CollectionSchema? {
        guard let current = try currentSchema(of: collection) else { return nil }
        var target = current
        target.columns.removeAll { $0.name == column }
        target.indexes.removeAll { $0.columns.contains(column) }
        // The indexes on the column go with it.
        try connection.execute(
            "ALTER TABLE " + catalog.table(of: current.name) + " DROP COLUMN " + PostgreSQLIdentifier.quoted(column),
            collection: current.name
        )
        return try recordSchema(target, folded: Identifier.folded(current.name))
    }

    func renameCollection(_ collection: String, to newName: String) throws -> CollectionSchema? {
        let oldFolded = Identifier.folded(collection)
        let newFolded = Identifier.folded(newName)
        guard oldFolded != newFolded, let current = try currentSchema(of: collection) else { return nil }
        var target = current
        target.name = newName
        try connection.execute(
            "ALTER TABLE " + catalog.table(of: current.name) + " RENAME TO " + PostgreSQLIdentifier.quoted(newName),
            collection: current.name
        )
        if current.hasAutoKey {
            try connection.execute(
                "ALTER SEQUENCE " + catalog.keySequence(of: current.name) + " RENAME TO "
                    + PostgreSQLIdentifier.quoted(newName, suffix: "$key"),
                collection: current.name
            )
        }
        for index in current.indexes {
            try renameIndex(index, of: current.name, to: index, of: newName)
        }
        _ = try connection.query(
            "DELETE FROM " + catalog.table + " WHERE folded = $1::text",
            PostgreSQLParameters([.text(oldFolded)]),
            "cannot update the store's catalog",
            collection: current.name
        )
        changedSchemas[oldFolded] = nil
        changedStamps[oldFolded] = nil
        droppedCollections.insert(oldFolded)
        return try recordSchema(target, folded: newFolded)
    }

    func dropIndex(_ index: IndexDefinition, from collection: String) throws -> CollectionSchema? {
        guard let current = try currentSchema(of: collection) else { return nil }
        var target = current
        target.indexes.removeAll { $0 == index }
        try connection.execute(
            "DROP INDEX IF EXISTS " + catalog.schemaName + "."
                + PostgreSQLIdentifier.indexName(index, in: current.name),
            collection: current.name
        )
        return try recordSchema(target, folded: Identifier.folded(current.name))
    }

    /// The collection's schema as the catalog has it now (not the cache: another process may
    /// have changed it), after the checks every statement of the transaction makes.
    private func currentSchema(of collection: String) throws -> CollectionSchema? {
        try checkActive()
        try willRunStatement()
        let folded = Identifier.folded(collection)
        if let changed = changedSchemas[folded] { return changed }
        if droppedCollections.contains(folded) { return nil }
        return try readCatalog(collection)?.schema
    }

    private func renameIndex(
        _ index: IndexDefinition,
        of collection: String,
        to newIndex: IndexDefinition,
        of newCollection: String
    ) throws {
        let old = PostgreSQLIdentifier.indexName(index, in: collection)
        let new = PostgreSQLIdentifier.indexName(newIndex, in: newCollection)
        guard old != new else { return }
        try connection.execute(
            "ALTER INDEX " + catalog.schemaName + "." + old + " RENAME TO " + new,
            collection: newCollection
        )
    }
}
