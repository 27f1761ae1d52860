import Storage

/// Creates and migrates tables inside a write transaction, so a failed migration leaves nothing.
///
/// Only quoted identifiers and declared types reach the DDL; nothing is ever dropped but the old
/// copy of a table that has just been rebuilt.
struct SQLiteSchemaMigrator {
    /// The name of the scratch table a rebuild fills; collection names may not start with `_`.
    static let rebuildTable = "_storage_rebuild"

    let transaction: SQLiteWriteTransaction

    private var connection: SQLiteConnection { transaction.connection }

    /// Creates or migrates the table of `requested` and returns the stored schema afterwards.
    func prepare(_ requested: CollectionSchema) throws -> CollectionSchema {
        let name = requested.name
        try requested.validateShape()
        let known = try transaction.storedSchema(of: name)
        if let known, known.primaryKey == requested.primaryKey, Self.target(known, requested) == known {
            return known
        }
        // DDL ahead. The schema is read through the writer's own connection first, not taken
        // from the cache: SQLite checks a connection's copy of the schema against the database
        // only when a statement runs, and `ALTER TABLE` is compiled against that copy, so a
        // writer that last looked before another connection or process dropped and made the
        // table again failed with "duplicate column name" (or added to a table that is gone).
        // Reading the catalog brings the copy up to date.
        guard let stored = try transaction.refreshStoredSchema(of: name, known: known) else {
            try connection.execute(createTableSQL(requested, table: name), collection: name)
            for index in requested.indexes {
                try createIndex(index, on: name)
            }
            return try transaction.refreshSchema(of: name)
        }
        guard stored.primaryKey == requested.primaryKey else {
            throw StorageError(
                .schemaMismatch,
                "the collection's primary key is \(Identifier.quoted(stored.primaryKey)),"
                    + " not \(Identifier.quoted(requested.primaryKey))",
                collection: name,
                column: requested.primaryKey
            )
        }
        let target = Self.target(stored, requested)
        if target == stored { return stored }
        try target.validateShape()

        let retyped = stored.columns.contains { column in target.column(named: column.name)?.type != column.type }
        if retyped {
            try rebuild(stored, as: target)
        } else {
            for column in target.columns where stored.column(named: column.name) == nil {
                var sql = "ALTER TABLE " + quote(name) + " ADD COLUMN " + quote(column.name)
                let type = SQLiteConnection.declaredType(column.type)
                if !type.isEmpty { sql += " " + type }
                try connection.execute(sql, collection: name)
            }
            for index in target.indexes where !stored.indexes.contains(index) {
                try createIndex(index, on: name)
            }
        }
        return try transaction.refreshSchema(of: name)
    }

    /// What `stored` becomes to hold `requested`: merged, the key column keeping its type
    /// (widening it would change the identity of records).
    private static func target(_ stored: CollectionSchema, _ requested: CollectionSchema) -> CollectionSchema {
        var target = stored.merged(with: requested)
        if let keyIndex = target.columnIndex(named: target.primaryKey), let storedKey = stored.primaryKeyColumn {
            target.columns[keyIndex].type = storedKey.type
        }
        return target
    }

    /// `CREATE TABLE` for `schema`, named `table`. No column is NOT NULL, so a property may later
    /// become optional without a migration.
    private func createTableSQL(_ schema: CollectionSchema, table: String) -> String {
        let definitions = schema.columns.map { column -> String in
            var definition = quote(column.name)
            if column.name == schema.primaryKey {
                if schema.hasAutoKey {
                    // AUTOINCREMENT: keys of deleted records are never used again.
                    definition += " INTEGER PRIMARY KEY AUTOINCREMENT"
                } else {
                    let type = SQLiteConnection.declaredType(column.type)
                    definition += (type.isEmpty ? "" : " " + type) + " PRIMARY KEY"
                }
            } else {
                let type = SQLiteConnection.declaredType(column.type)
                if !type.isEmpty { definition += " " + type }
            }
            return definition
        }
        return "CREATE TABLE IF NOT EXISTS " + quote(table) + " (" + definitions.joined(separator: ", ") + ")"
    }

    private func createIndex(_ index: IndexDefinition, on table: String) throws {
        try connection.execute(Self.createIndexSQL(index, on: table), collection: table)
    }

    /// `CREATE INDEX IF NOT EXISTS` for `index` on `table`, under the index's stable name. A
    /// nested field's index is on the expression its queries compile to, the path written as a
    /// literal (an index cannot bind one); see `SQLiteQueryCompiler.indexedField`.
    static func createIndexSQL(_ index: IndexDefinition, on table: String) -> String {
        let indexed =
            index.path.isEmpty
            ? index.columns.map(quote).joined(separator: ", ")
            : SQLiteQueryCompiler.indexedField(quote(index.columns[0]), index.path)
        return "CREATE " + (index.isUnique ? "UNIQUE " : "") + "INDEX IF NOT EXISTS " + quote(index.name(in: table))
            + " ON " + quote(table) + " (" + indexed + ")"
    }

    /// Rebuilds the table with new column types: SQLite cannot change a column's type in place.
    /// Values are copied through the new columns' affinity (integers in a widened column become
    /// reals), and the auto-key sequence is carried over so keys are still never reused.
    private func rebuild(_ stored: CollectionSchema, as target: CollectionSchema) throws {
        let name = stored.name
        let scratch = quote(Self.rebuildTable)
        try connection.execute("DROP TABLE IF EXISTS " + scratch, collection: name)
        try connection.execute(createTableSQL(target, table: Self.rebuildTable), collection: name)
        let copied = stored.columns.map { quote($0.name) }.joined(separator: ", ")
        try connection.execute(
            "INSERT INTO " + scratch + " (" + copied + ") SELECT " + copied + " FROM " + quote(name),
            collection: name
        )
        var sequence: Int64?
        if stored.hasAutoKey {
            sequence = try connection.integer(
                "SELECT seq FROM sqlite_sequence WHERE name = ? COLLATE NOCASE",
                [.text(name)],
                collection: name
            )
        }
        try connection.execute("DROP TABLE " + quote(name), collection: name)
        try connection.execute("ALTER TABLE " + scratch + " RENAME TO " + quote(name), collection: name)
        if let sequence {
            // The rename moved the scratch table's sequence row (if any rows were copied).
            try connection.withStatement("DELETE FROM sqlite_sequence WHERE name = ? COLLATE NOCASE", collection: name)
            { statement in
                try statement.bind(.text(name), at: 1)
                _ = try statement.step("cannot carry over the key sequence", collection: name)
            }
            try connection.withStatement(
                "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)",
                collection: name
            ) { statement in
                try statement.bind([.text(name), .integer(sequence)])
                _ = try statement.step("cannot carry over the key sequence", collection: name)
            }
        }
        for index in target.indexes {
            try createIndex(index, on: name)
        }
    }
}
