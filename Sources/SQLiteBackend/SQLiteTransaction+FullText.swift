import Storage

/// The tables of one collection's full-text index in the database: an FTS5 table (`tokenize =
/// 'ascii'`, one column per indexed field, `c0`, `c1`, …) holding the store's folded tokens
/// joined by spaces, and, for a collection whose primary key is not an integer, a table mapping
/// each key to the FTS5 rowid.
///
/// An integer key is the FTS5 rowid itself. Any other key gets a rowid of its own in the map
/// rather than borrowing the record table's rowid: `VACUUM` may renumber the rowids of a table
/// without an `INTEGER PRIMARY KEY`, which would silently unhook the index from its records.
///
/// The names are `_search_fts(` + the folded collection name + `)` and that name + `_keys`: no
/// collection can be named so (names starting with `_` are the store's), FTS5's shadow tables
/// (`…)_data`, `…)_idx`, …) end after the `)` as the map does, so no two collections' tables
/// share a name, and `collectionNames()` leaves every table of the prefix out.
struct SQLiteFullTextTables {
    /// The prefix of every name, as a `LIKE` pattern with `\` as the escape.
    static let namePattern = "\\_search\\_fts(%"

    let collection: String
    let table: String
    let keyMap: String

    init(collection: String) {
        self.collection = collection
        table = "_search_fts(" + Identifier.folded(collection) + ")"
        keyMap = table + "_keys"
    }
}

extension SQLiteReadTransaction {
    /// Whether the FTS5 table of `tables` exists, and whether it maps keys to rowids.
    func fullTextLayout(_ tables: SQLiteFullTextTables) throws -> (exists: Bool, mapsKeys: Bool) {
        var exists = false
        var mapsKeys = false
        try connection.withStatement(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)",
            collection: tables.collection
        ) { statement in
            try statement.bind([.text(tables.table), .text(tables.keyMap)])
            while try statement.step("cannot read the full-text index", collection: tables.collection) {
                if case .text(let name) = statement.row.value(at: 0) {
                    if name == tables.table { exists = true } else { mapsKeys = true }
                }
            }
        }
        return (exists, mapsKeys)
    }
}

extension SQLiteReadTransaction: FullTextSearchingReadTransaction {
    func hasFullTextIndex(of collection: String) throws -> Bool {
        try checkActive()
        if isUnpinned { try requirePinnedRead() }
        return try fullTextLayout(SQLiteFullTextTables(collection: collection)).exists
    }

    func searchFullText(
        in collection: String,
        matching query: SearchQuery,
        where predicate: StoragePredicate?,
        limit: Int?
    ) throws -> [StorageValue]? {
        try checkActive()
        if isUnpinned { try requirePinnedRead() }
        guard let schema = try storedSchema(of: collection) else { return [] }
        let tables = SQLiteFullTextTables(collection: collection)
        let layout = try fullTextLayout(tables)
        guard layout.exists else { return [] }
        let fts = quote(tables.table)
        let map = quote(tables.keyMap)
        // The key, and what joins a record to it: the rowid, or the map's key.
        let key = layout.mapsKeys ? map + ".\"key\"" : fts + ".rowid"
        var sql = "SELECT " + key + " FROM " + fts
        if layout.mapsKeys { sql += " JOIN " + map + " ON " + map + ".\"id\" = " + fts + ".rowid" }
        sql += " WHERE " + fts + " MATCH ?"
        var arguments: [StorageValue] = [.text(SQLiteFullTextExpression.expression(for: query))]
        if let predicate {
            var compiler = SQLiteQueryCompiler(schema: schema)
            if predicate.containsSubquery { compiler.lookup = subqueryLookup }
            guard let clause = compiler.whereClause(predicate), clause.hasPrefix(" WHERE ") else { return nil }
            // The predicate's columns are the record table's: unqualified, they resolve to the
            // subquery's table first, and no collection is named like the index's tables.
            sql +=
                " AND EXISTS (SELECT 1 FROM " + quote(schema.name) + " WHERE " + quote(schema.name) + "."
                + quote(schema.primaryKey) + " = " + key + " AND (" + clause.dropFirst(7) + "))"
            arguments += compiler.arguments
        }
        sql += " ORDER BY bm25(" + fts + "), " + key + " LIMIT ?"
        arguments.append(.integer(Int64(limit ?? -1)))
        return try connection.withStatement(sql, collection: schema.name) { statement in
            try statement.bind(arguments)
            var keys: [StorageValue] = []
            let row = statement.row
            while try statement.step("cannot search the full-text index", collection: schema.name) {
                keys.append(row.value(at: 0))
            }
            return keys
        }
    }
}

extension SQLiteWriteTransaction: FullTextIndexingWriteTransaction {
    func createFullTextIndex(of collection: String, fields: [String]) throws -> Bool {
        try checkActive()
        guard !fields.isEmpty, let schema = try storedSchema(of: collection) else { return false }
        try dropFullTextIndex(of: collection)
        let tables = SQLiteFullTextTables(collection: collection)
        let columns = fields.indices.map { "c" + String($0) }.joined(separator: ", ")
        try connection.execute(
            "CREATE VIRTUAL TABLE " + quote(tables.table) + " USING fts5(" + columns + ", tokenize = 'ascii')",
            collection: collection
        )
        if schema.column(named: schema.primaryKey)?.type != .integer {
            try connection.execute(
                "CREATE TABLE " + quote(tables.keyMap) + " (\"id\" INTEGER PRIMARY KEY, \"key\" NOT NULL UNIQUE)",
                collection: collection
            )
        }
        return true
    }

    func dropFullTextIndex(of collection: String) throws {
        try checkActive()
        let tables = SQLiteFullTextTables(collection: collection)
        try connection.execute("DROP TABLE IF EXISTS " + quote(tables.table), collection: collection)
        try connection.execute("DROP TABLE IF EXISTS " + quote(tables.keyMap), collection: collection)
    }

    func makeFullTextWriter(for collection: String) throws -> (any FullTextIndexWriter)? {
        try checkActive()
        let tables = SQLiteFullTextTables(collection: collection)
        let layout = try fullTextLayout(tables)
        guard layout.exists else { return nil }
        return SQLiteFullTextWriter(transaction: self, tables: tables, mapsKeys: layout.mapsKeys)
    }
}

/// Writes one collection's FTS5 table (and key map) with statements prepared once.
///
/// A record that cannot be in the table yet is appended with a plain `INSERT`: FTS5's
/// `INSERT OR REPLACE` first looks the rowid up in its content table and deletes it from both
/// shadow tables (three statements more a record), which a bulk save of new records would pay
/// for every one. A key new to the map is such a record (the map and the table gain and lose
/// rows together), and so is an integer key above the largest rowid the table held when the
/// writer first asked, or that it appended since.
final class SQLiteFullTextWriter: FullTextIndexWriter {
    private let transaction: SQLiteWriteTransaction
    private let tables: SQLiteFullTextTables
    private let mapsKeys: Bool
    /// The `INSERT OR REPLACE` and the plain `INSERT`, for `statementColumns` fields.
    private var statements: (replace: SQLiteStatement, append: SQLiteStatement)?
    private var statementColumns = 0
    /// The largest rowid the table may hold (integer keys), once read.
    private var largestRowid: Int64?

    init(transaction: SQLiteWriteTransaction, tables: SQLiteFullTextTables, mapsKeys: Bool) {
        self.transaction = transaction
        self.tables = tables
        self.mapsKeys = mapsKeys
    }

    private var connection: SQLiteConnection { transaction.connection }

    /// The FTS5 rowid of `key`, and whether the table cannot hold it yet: the key itself, or its
    /// entry in the map (made when `creating`); `nil` when the map has none.
    private func rowid(of key: StorageValue, creating: Bool) throws -> (rowid: Int64, isNew: Bool)? {
        guard mapsKeys else {
            guard case .integer(let rowid) = key else {
                throw StorageError(
                    .invalidKey,
                    "a full-text index of integer keys was given another key",
                    collection: tables.collection,
                    key: key
                )
            }
            guard creating else { return (rowid, false) }
            let largest: Int64
            if let known = largestRowid {
                largest = known
            } else {
                largest =
                    try connection.integer(
                        "SELECT rowid FROM " + quote(tables.table) + " ORDER BY rowid DESC LIMIT 1",
                        collection: tables.collection
                    ) ?? .min
            }
            largestRowid = max(largest, rowid)
            return (rowid, rowid > largest)
        }
        let found = try connection.withStatement(
            "SELECT \"id\" FROM " + quote(tables.keyMap) + " WHERE \"key\" = ?",
            collection: tables.collection
        ) { statement -> Int64? in
            try statement.bind(key, at: 1)
            guard try statement.step("cannot read the full-text index", collection: tables.collection) else {
                return nil
            }
            if case .integer(let id) = statement.row.value(at: 0) { return id }
            return nil
        }
        if let found { return (found, false) }
        guard creating else { return nil }
        try connection.withStatement(
            "INSERT INTO " + quote(tables.keyMap) + " (\"key\") VALUES (?)",
            collection: tables.collection
        ) { statement in
            try statement.bind(key, at: 1)
            _ = try statement.step("cannot write the full-text index", collection: tables.collection)
        }
        return (connection.lastInsertRowID, true)
    }

    func index(_ key: StorageValue, fields: [String]) throws {
        try transaction.checkActive()
        guard let (rowid, isNew) = try rowid(of: key, creating: true) else { return }
        if statements == nil || statementColumns != fields.count {
            let columns = fields.indices.map { ", c" + String($0) }.joined()
            let values = String(repeating: ", ?", count: fields.count)
            let rest = quote(tables.table) + " (rowid" + columns + ") VALUES (?" + values + ")"
            statements = (
                replace: try connection.cachedStatement(
                    "INSERT OR REPLACE INTO " + rest,
                    collection: tables.collection
                ),
                append: try connection.cachedStatement("INSERT INTO " + rest, collection: tables.collection)
            )
            statementColumns = fields.count
        }
        guard let statements else { return }
        let insert = isNew ? statements.append : statements.replace
        defer { insert.reset() }
        try insert.bind(.integer(rowid), at: 1)
        var index: Int32 = 2
        for field in fields {
            try insert.bind(.text(field), at: index)
            index += 1
        }
        do {
            _ = try insert.step("cannot write the full-text index", collection: tables.collection)
        } catch var error as StorageError {
            error.key = key
            throw error
        }
    }

    func unindex(_ key: StorageValue) throws {
        try transaction.checkActive()
        guard let (rowid, _) = try rowid(of: key, creating: false) else { return }
        try connection.withStatement(
            "DELETE FROM " + quote(tables.table) + " WHERE rowid = ?",
            collection: tables.collection
        ) { statement in
            try statement.bind(.integer(rowid), at: 1)
            _ = try statement.step("cannot write the full-text index", collection: tables.collection)
        }
        if mapsKeys {
            try connection.withStatement(
                "DELETE FROM " + quote(tables.keyMap) + " WHERE \"id\" = ?",
                collection: tables.collection
            ) { statement in
                try statement.bind(.integer(rowid), at: 1)
                _ = try statement.step("cannot write the full-text index", collection: tables.collection)
            }
        }
    }
}
