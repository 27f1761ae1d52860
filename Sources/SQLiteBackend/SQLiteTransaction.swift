import Storage

/// A read transaction on one connection, one snapshot for every statement of the closure (an
/// implicit transaction held open by the backend). Valid only inside the closure it was passed to.
class SQLiteReadTransaction: BackendReadTransaction {
    let connection: SQLiteConnection
    let schemaCache: SQLiteSchemaCache
    /// Cleared when the closure returns; a transaction used after that throws `.misuse`.
    private(set) var isActive = true
    /// The schema version of this transaction's snapshot: read when a read transaction begins,
    /// on first need in a write transaction. In an unpinned read, the version assumed.
    var baseSchemaVersion: Int64?
    /// Whether this is a single-query read run without a pinned snapshot, on the assumption
    /// that the schema version is still `baseSchemaVersion` (see
    /// `SQLiteStorageBackend.readSingleQuery`): only a key look-up whose statement proves the
    /// assumption runs; anything else sets `needsPinnedRead` and throws before reading.
    var isUnpinned = false
    /// Set when an unpinned read could not go on: the backend runs the closure again in a
    /// pinned read. Nothing was read by then.
    private(set) var needsPinnedRead = false

    /// Gives up an unpinned read (see `isUnpinned`).
    /// - Throws: always, an error the backend recognises by `needsPinnedRead`.
    func requirePinnedRead() throws -> Never {
        needsPinnedRead = true
        throw StorageError(.engine, "a single-query read needed a pinned snapshot")
    }

    init(connection: SQLiteConnection, schemaCache: SQLiteSchemaCache) {
        self.connection = connection
        self.schemaCache = schemaCache
    }

    /// Makes a kept read transaction valid again for the next read on its connection: the
    /// backend keeps one object per reader connection rather than making and freeing one per
    /// read, and calls this only when nobody else holds the object (a closure that kept the
    /// transaction past its end still holds an invalid one; see `SQLiteStorageBackend.claim`).
    /// - Parameters:
    ///   - schemaVersion: the schema version of the read's snapshot, or the one assumed unpinned.
    ///   - unpinned: whether the read runs without a pinned snapshot (see `isUnpinned`).
    func begin(schemaVersion: Int64, unpinned: Bool) {
        isActive = true
        baseSchemaVersion = schemaVersion
        isUnpinned = unpinned
        needsPinnedRead = false
    }

    /// Ends the transaction's validity.
    func invalidate() {
        isActive = false
    }

    func checkActive() throws {
        guard isActive else {
            throw StorageError(.misuse, "a transaction was used outside the closure it was passed to")
        }
    }

    /// The stored schema of `name` as this transaction sees it, from the cache when it is current.
    func storedSchema(of name: String) throws -> CollectionSchema? {
        let version: Int64
        if let baseSchemaVersion {
            version = baseSchemaVersion
        } else {
            version = try connection.schemaVersion()
            baseSchemaVersion = version
        }
        let memoizes = memoizesSchemas
        if memoizes, let last = connection.lastSchema, last.version == version, last.name == name {
            // Unpinned, "no such collection" is not proved by a statement later: pin instead.
            if isUnpinned && !last.exists { try requirePinnedRead() }
            return last.schema
        }
        let schema: CollectionSchema?
        if let cached = schemaCache.lookup(name, version: version) {
            schema = cached
        } else {
            // Reading the catalog unpinned would read another snapshot than the query's.
            if isUnpinned { try requirePinnedRead() }
            schema = try connection.readSchema(of: name)
            schemaCache.store(schema, for: name, version: version)
        }
        if memoizes { connection.lastSchema = SQLiteSchemaMemo(name: name, version: version, schema: schema) }
        if isUnpinned && schema == nil { try requirePinnedRead() }
        return schema
    }

    /// Whether `storedSchema(of:)` may answer from the connection's last look-up (the schema of
    /// a name at a schema version, which every schema change by anyone moves on). A write
    /// transaction does not: its own uncommitted changes are not facts of the version it began at.
    var memoizesSchemas: Bool { true }

    /// The schema version of the snapshot, or the one assumed unpinned (which the look-up's
    /// statement then proves): every schema change by any connection moves it on.
    var schemaStamp: Int64? { baseSchemaVersion }

    /// Nested fields sort by `json_extract` in the ORDER BY (see `SQLiteQueryCompiler`).
    var ordersByNestedFields: Bool { true }

    func schema(of collection: String) throws -> CollectionSchema? {
        try checkActive()
        return try storedSchema(of: collection)
    }

    func scan(_ request: ScanRequest, _ body: (any StorageRow) throws -> Bool) throws {
        try checkActive()
        if isUnpinned { try requirePinnedRead() }
        guard let schema = try storedSchema(of: request.collection) else { return }
        // The store refuses such keys first (`Session.checkNestedFields`); a caller of the
        // backend itself gets the same refusal rather than an order by the wrong value.
        if let sortKey = request.ordering.first(where: { !$0.path.isEmpty && !SQLiteQueryCompiler.expressible($0.path) }
        ) {
            throw StorageError(
                .invalidQuery,
                "cannot order by the nested field \(sortKey.path) of column \(Identifier.spelling(sortKey.column)):"
                    + " a key holds a quote, a backslash or a control character",
                collection: request.collection,
                column: sortKey.column
            )
        }
        guard let (sql, arguments) = compileScan(request, schema) else {
            var remaining = request.limit ?? Int.max
            var skipped = 0
            guard remaining > 0 else { return }
            return try forEachMatch(
                in: request.collection,
                schema,
                request.predicate,
                columns: request.columns,
                ordering: request.ordering
            ) { row in
                if skipped < request.offset {
                    skipped += 1
                    return true
                }
                guard try body(row) else { return false }
                remaining -= 1
                return remaining > 0
            }
        }
        try connection.withStatement(sql, collection: request.collection) { statement in
            try statement.bind(arguments)
            let row = statement.row
            while try statement.step("cannot read records", collection: request.collection) {
                guard try body(row) else { break }
            }
        }
    }

    /// The SQL text and arguments of a scan. The text depends only on the request's shape and
    /// the table's columns, so it is compiled once per shape and schema version and then reused:
    /// a key look-up is otherwise dominated by building the same SQL text again.
    /// - Returns: `nil` when the predicate binds more values than SQLite takes.
    private func compileScan(_ request: ScanRequest, _ schema: CollectionSchema) -> (String, [StorageValue])? {
        // An offset without a limit still needs a LIMIT clause; a negative one means none.
        var paging: [StorageValue] = []
        if request.limit != nil || request.offset > 0 {
            paging.append(.integer(Int64(request.limit.map { max(0, $0) } ?? -1)))
        }
        if request.offset > 0 { paging.append(.integer(Int64(request.offset))) }
        let shape = cacheableSchemaVersion.map { SQLiteScanShape(request, schema, schemaVersion: $0) }
        if let shape, let sql = connection.scanSQL[shape] {
            return (
                sql,
                SQLiteQueryCompiler.arguments(of: request.predicate, schema)
                    + SQLiteQueryCompiler.orderArguments(request.ordering, schema) + paging
            )
        }
        var compiler = SQLiteQueryCompiler(schema: schema)
        if request.predicate?.containsSubquery == true { compiler.lookup = subqueryLookup }
        var sql = "SELECT "
        sql += request.columns.isEmpty ? "NULL" : request.columns.map { compiler.column($0) }.joined(separator: ", ")
        sql += " FROM " + quote(request.collection)
        guard let whereClause = compiler.whereClause(request.predicate) else { return nil }
        sql += whereClause
        sql += compiler.orderByClause(request.ordering)
        if request.limit != nil || request.offset > 0 { sql += " LIMIT ?" }
        if request.offset > 0 { sql += " OFFSET ?" }
        if let shape { connection.scanSQL.store(sql, for: shape) }
        return (sql, compiler.arguments + paging)
    }

    func get(
        _ collection: String,
        key: StorageValue,
        columns: [String],
        _ body: (any StorageRow) throws -> Void
    ) throws -> Bool {
        try checkActive()
        let statement: SQLiteStatement
        if let version = cacheableSchemaVersion, let last = connection.lastLookup,
            last.matches(collection, columns: columns, schemaVersion: version), !last.statement.isInUse
        {
            // Compiled for this collection at this schema version, so the collection exists and
            // its schema is not needed.
            statement = last.statement
        } else {
            guard let schema = try storedSchema(of: collection) else { return false }
            statement = try lookupStatement(collection, columns: columns, schema: schema)
        }
        // Unpinned, the step must prove the schema version assumed (see `isUnpinned`): the
        // statement was last seen compiled for it, and the step must not compile it again.
        let version = baseSchemaVersion
        if isUnpinned, version == nil || statement.verified?.schemaVersion != version {
            try requirePinnedRead()
        }
        statement.isInUse = true
        defer {
            // The key stays bound until the next look-up binds its own (its one parameter is
            // bound before every step), so clearing it would be work for nothing.
            statement.resetKeepingBindings()
            statement.isInUse = false
        }
        try statement.bind(key, at: 1)
        let found: Bool
        do {
            found = try statement.step("cannot read a record", collection: collection)
        } catch  where isUnpinned {
            // Compiled again for another schema and failing there (its table dropped, say):
            // the pinned read answers from its own snapshot.
            try requirePinnedRead()
        }
        let reprepares = statement.reprepareCount
        if isUnpinned {
            if reprepares != statement.verified?.reprepares { try requirePinnedRead() }
        } else if let version, memoizesSchemas {
            // A pinned read: the snapshot's schema version is known.
            statement.verified = (version, reprepares)
        }
        guard found else { return false }
        try body(statement.row)
        return true
    }

    /// The prepared `SELECT <columns> FROM t WHERE pk = ?`, compiled once per collection, column
    /// list and schema version and kept with its statement (no look-up by SQL text, whose hashing
    /// was a tenth of a key look-up); the look-up found becomes the connection's last one.
    private func lookupStatement(
        _ collection: String,
        columns: [String],
        schema: CollectionSchema
    ) throws -> SQLiteStatement {
        let version = cacheableSchemaVersion
        if let version, let cached = connection.lookupSQL[collection],
            cached.matches(collection, columns: columns, schemaVersion: version)
        {
            // A look-up inside a scan of the same look-up (a callback) gets a statement of its own.
            if !cached.statement.isInUse {
                connection.lastLookup = cached
                return cached.statement
            }
            return try connection.prepare(cached.sql, collection: collection)
        }
        let compiler = SQLiteQueryCompiler(schema: schema)
        let selected = columns.isEmpty ? "NULL" : columns.map { compiler.column($0) }.joined(separator: ", ")
        let sql = "SELECT " + selected + " FROM " + quote(collection) + " WHERE " + quote(schema.primaryKey) + " = ?"
        let statement = try connection.cachedStatement(sql, collection: collection)
        if let version {
            let lookup = SQLiteKeyLookup(
                collection: collection,
                columns: columns,
                schemaVersion: version,
                sql: sql,
                statement: statement
            )
            connection.lookupSQL[collection] = lookup
            connection.lastLookup = lookup
        }
        return statement
    }

    /// The schema version the scan-SQL cache may be keyed by: the snapshot's version, unless this
    /// transaction changed a schema itself (its version moves only when it commits).
    var cacheableSchemaVersion: Int64? { baseSchemaVersion }

    func collectionNames() throws -> [String] {
        try checkActive()
        if isUnpinned { try requirePinnedRead() }
        var names: [String] = []
        // SQLite's own tables (sqlite_sequence, ...) and full-text indexes' are no collections.
        try connection.withStatement(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
                + " AND name NOT LIKE '" + SQLiteFullTextTables.namePattern + "' ESCAPE '\\' ORDER BY name"
        ) { statement in
            while try statement.step("cannot list the collections") {
                if case .text(let name) = statement.row.value(at: 0) { names.append(name) }
            }
        }
        return names
    }

    func count(in collection: String, where predicate: StoragePredicate?) throws -> Int {
        try checkActive()
        if isUnpinned { try requirePinnedRead() }
        guard let schema = try storedSchema(of: collection) else { return 0 }
        var compiler = SQLiteQueryCompiler(schema: schema)
        if predicate?.containsSubquery == true { compiler.lookup = subqueryLookup }
        guard let whereClause = compiler.whereClause(predicate) else {
            var count = 0
            try forEachMatch(in: collection, schema, predicate, columns: [], ordering: []) { _ in
                count += 1
                return true
            }
            return count
        }
        let sql = "SELECT count(*) FROM " + quote(collection) + whereClause
        return Int(try connection.integer(sql, compiler.arguments, collection: collection) ?? 0)
    }

    func nextAutoKey(in collection: String) throws -> Int64? {
        if isUnpinned { try requirePinnedRead() }
        guard let stored = try schema(of: collection), stored.hasAutoKey else { return nil }
        let last = try connection.integer(
            "SELECT seq FROM sqlite_sequence WHERE name = ? COLLATE NOCASE",
            [.text(stored.name)],
            collection: stored.name
        )
        return (last ?? 0) + 1
    }
}

/// A write transaction on the writer connection: `BEGIN IMMEDIATE` ... `COMMIT`.
final class SQLiteWriteTransaction: SQLiteReadTransaction, BackendWriteTransaction {
    /// The schemas this transaction changed, published to the cache only when it commits.
    var changedSchemas: [String: CollectionSchema] = [:]
    /// The collections this transaction dropped (and did not create again), by folded name: the
    /// cache, keyed by the schema version the transaction began at, still has them.
    var droppedCollections: Set<String> = []

    override var cacheableSchemaVersion: Int64? {
        changedSchemas.isEmpty && droppedCollections.isEmpty ? baseSchemaVersion : nil
    }

    override var memoizesSchemas: Bool { false }

    /// None: this transaction's own schema changes are not facts of the version it began at.
    override var schemaStamp: Int64? { nil }

    override func storedSchema(of name: String) throws -> CollectionSchema? {
        let folded = Identifier.folded(name)
        if let changed = changedSchemas[folded] { return changed }
        if droppedCollections.contains(folded) { return nil }
        return try super.storedSchema(of: name)
    }

    func dropCollection(_ collection: String) throws {
        try checkActive()
        guard let schema = try storedSchema(of: collection) else { return }
        // Its indexes go with the table.
        try connection.execute("DROP TABLE " + quote(schema.name))
        let folded = Identifier.folded(collection)
        changedSchemas[folded] = nil
        droppedCollections.insert(folded)
    }

    /// Records `name`'s schema after a change, read back from the catalog.
    func refreshSchema(of name: String) throws -> CollectionSchema {
        guard let schema = try connection.readSchema(of: name) else {
            throw StorageError(.engine, "the collection vanished while it was being prepared", collection: name)
        }
        changedSchemas[Identifier.folded(name)] = schema
        droppedCollections.remove(Identifier.folded(name))
        return schema
    }

    /// The schema of `name` read through this transaction's connection (which also brings the
    /// connection's own copy of the schema up to date), kept as this transaction's view.
    /// - Parameters:
    ///   - name: the collection.
    ///   - known: what `storedSchema(of: name)` answered.
    /// - Returns: the schema, or `nil` when there is no such collection.
    /// - Throws: `StorageError` when the catalog cannot be read.
    func refreshStoredSchema(of name: String, known: CollectionSchema?) throws -> CollectionSchema? {
        let schema = try connection.readSchema(of: name)
        if schema != known {
            // The cache was wrong about the snapshot (it is keyed by schema version, so this is
            // not expected): this transaction's view is what its connection reads.
            let folded = Identifier.folded(name)
            changedSchemas[folded] = schema
            if schema == nil {
                droppedCollections.insert(folded)
            } else {
                droppedCollections.remove(folded)
            }
        }
        return schema
    }

    /// Indexes on nested fields are expression indexes (`SQLiteQueryCompiler.indexedField`).
    var indexesNestedFields: Bool { true }

    func prepareCollection(_ schema: CollectionSchema) throws -> CollectionSchema {
        try checkActive()
        return try SQLiteSchemaMigrator(transaction: self).prepare(schema)
    }

    func makeWriter(for collection: String, columns: [String]) throws -> any RecordWriter {
        try checkActive()
        guard let schema = try storedSchema(of: collection) else {
            throw StorageError(.schemaMismatch, "the collection has not been prepared", collection: collection)
        }
        for column in columns where schema.column(named: column) == nil {
            throw StorageError(
                .unknownColumn,
                "the collection has no column \(Identifier.quoted(column))",
                collection: collection,
                column: column
            )
        }
        guard let keyIndex = columns.firstIndex(of: schema.primaryKey) else {
            throw StorageError(
                .invalidKey,
                "a writer's columns must include the primary key \(Identifier.quoted(schema.primaryKey))",
                collection: collection,
                column: schema.primaryKey
            )
        }
        let shape = SQLiteUpsertShape(collection: collection, columns: columns, primaryKey: schema.primaryKey)
        let sql = connection.upsertSQL.text(for: shape) { Self.upsertSQL(shape, keyIndex: keyIndex) }
        let statement = try connection.cachedStatement(sql, collection: collection)
        return SQLiteRecordWriter(
            transaction: self,
            statement: statement,
            collection: collection,
            columnNames: columns,
            keyIndex: keyIndex,
            hasAutoKey: schema.hasAutoKey
        )
    }

    /// The upsert of a record writer: its text depends on the names only, so it is made once
    /// per connection and shape.
    private static func upsertSQL(_ shape: SQLiteUpsertShape, keyIndex: Int) -> String {
        let quotedColumns = shape.columns.map(quote)
        var sql =
            "INSERT INTO " + quote(shape.collection) + " (" + quotedColumns.joined(separator: ", ") + ") VALUES ("
        sql += Array(repeating: "?", count: shape.columns.count).joined(separator: ", ")
        sql += ") ON CONFLICT (" + quote(shape.primaryKey) + ") "
        // An upsert, not INSERT OR REPLACE: that would silently delete rows conflicting on a
        // unique index. Columns the writer does not name keep their values, as in every backend.
        let updates = quotedColumns.enumerated().compactMap { offset, column in
            offset == keyIndex ? nil : column + " = excluded." + column
        }
        sql += updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + updates.joined(separator: ", ")
        return sql
    }

    func delete(from collection: String, key: StorageValue) throws -> Bool {
        try checkActive()
        guard let schema = try storedSchema(of: collection) else { return false }
        let sql = "DELETE FROM " + quote(collection) + " WHERE " + quote(schema.primaryKey) + " = ?"
        return try connection.withStatement(sql, collection: collection) { statement in
            try statement.bind(key, at: 1)
            _ = try statement.step("cannot delete a record", collection: collection)
            return connection.changes > 0
        }
    }

    func deleteAll(from collection: String, where predicate: StoragePredicate?) throws -> [StorageValue] {
        try checkActive()
        guard let schema = try storedSchema(of: collection) else { return [] }
        var compiler = SQLiteQueryCompiler(schema: schema)
        if predicate?.containsSubquery == true { compiler.lookup = subqueryLookup }
        guard let whereClause = compiler.whereClause(predicate) else {
            var keys: [StorageValue] = []
            try forEachMatch(in: collection, schema, predicate, columns: [schema.primaryKey], ordering: []) { row in
                keys.append(row.value(at: 0))
                return true
            }
            return try keys.filter { try delete(from: collection, key: $0) }
        }
        let sql = "DELETE FROM " + quote(collection) + whereClause + " RETURNING " + quote(schema.primaryKey)
        return try connection.withStatement(sql, collection: collection) { statement in
            try statement.bind(compiler.arguments)
            var keys: [StorageValue] = []
            let row = statement.row
            while try statement.step("cannot delete records", collection: collection) {
                keys.append(row.value(at: 0))
            }
            return keys
        }
    }

    func raiseNextAutoKey(in collection: String, to key: Int64) throws {
        guard let stored = try schema(of: collection), stored.hasAutoKey,
            let next = try nextAutoKey(in: stored.name), next < key
        else { return }
        try connection.withStatement(
            "DELETE FROM sqlite_sequence WHERE name = ? COLLATE NOCASE",
            collection: stored.name
        ) {
            statement in
            try statement.bind(.text(stored.name), at: 1)
            _ = try statement.step("cannot raise the key sequence", collection: stored.name)
        }
        try connection.withStatement("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", collection: stored.name) {
            statement in
            try statement.bind([.text(stored.name), .integer(key - 1)])
            _ = try statement.step("cannot raise the key sequence", collection: stored.name)
        }
    }
}

/// Inserts or replaces records of one layout with one cached upsert statement.
final class SQLiteRecordWriter: RecordWriter {
    private let transaction: SQLiteWriteTransaction
    private let statement: SQLiteStatement
    private let collection: String
    private let columnNames: [String]
    private var columnCount: Int { columnNames.count }
    private let keyIndex: Int
    private let hasAutoKey: Bool

    init(
        transaction: SQLiteWriteTransaction,
        statement: SQLiteStatement,
        collection: String,
        columnNames: [String],
        keyIndex: Int,
        hasAutoKey: Bool
    ) {
        self.transaction = transaction
        self.statement = statement
        self.collection = collection
        self.columnNames = columnNames
        self.keyIndex = keyIndex
        self.hasAutoKey = hasAutoKey
    }

    @discardableResult
    func put(_ values: [StorageValue]) throws -> StorageValue {
        try transaction.checkActive()
        guard values.count == columnCount else {
            throw StorageError(
                .schemaMismatch,
                "a record has \(values.count) values for \(columnCount) columns",
                collection: collection
            )
        }
        let key = values[keyIndex]
        if key.isNull && !hasAutoKey {
            throw StorageError(.invalidKey, "a record's primary key is null", collection: collection, key: key)
        }
        defer { statement.resetKeepingBindings() }
        var index: Int32 = 1
        for value in values {
            do {
                try statement.bind(value, at: index)
            } catch var error as StorageError where error.code == .limitExceeded {
                error.collection = collection
                error.column = columnNames[Int(index) - 1]
                if !key.isNull { error.key = key }
                throw error
            }
            index += 1
        }
        do {
            _ = try statement.step("cannot write a record", collection: collection)
        } catch var error as StorageError {
            if !key.isNull { error.key = key }
            throw error
        }
        if hasAutoKey && key.isNull {
            return .integer(transaction.connection.lastInsertRowID)
        }
        return key
    }
}

/// What the SQL text of a record writer's upsert is made from: the collection as named, the
/// writer's columns in order, and the primary key (the key's position among `columns` follows).
struct SQLiteUpsertShape: Hashable {
    let collection: String
    let columns: [String]
    let primaryKey: String
}
