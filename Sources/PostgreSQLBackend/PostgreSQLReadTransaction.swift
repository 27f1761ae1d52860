import Storage

/// A read transaction on one connection: `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`, so
/// every statement of the closure reads one snapshot. Valid only inside its closure.
class PostgreSQLReadTransaction: BackendReadTransaction {
    /// Nested fields sort by `#>` on the column read as `json` (see `PostgreSQLQueryCompiler`).
    var ordersByNestedFields: Bool { true }

    let connection: PostgreSQLConnection
    let catalog: PostgreSQLCatalog
    let schemaCache: PostgreSQLSchemaCache
    private(set) var isActive = true
    /// How a single-query read (`readSingleQuery`) runs: its one query outside a transaction,
    /// unless a catalog read comes first, which opens the transaction then.
    private(set) var singleQuery = SingleQuery.off

    /// The state of a single-query read.
    enum SingleQuery {
        /// Not a single-query read: the transaction began with the first statement.
        case off
        /// No statement yet; a catalog read first sends this `BEGIN`.
        case pending(begin: String)
        /// A catalog read opened the transaction: the query runs in it.
        case inTransaction
        /// The query ran outside a transaction: no other statement may follow.
        case spent
        /// The query streamed through a cursor, in a transaction that the read's commit ends
        /// (closing the cursor): no other statement may follow.
        case cursor
    }

    /// Makes this transaction a single-query read whose transaction, when one is needed, begins
    /// with `begin`.
    func runSingleQuery(begin: String) {
        singleQuery = .pending(begin: begin)
    }

    /// Whether the statements of this transaction ran inside a transaction that must commit.
    var needsCommit: Bool {
        switch singleQuery {
        case .off, .inTransaction, .cursor: true
        case .pending, .spent: false
        }
    }

    /// Called before the catalog is read: a single-query read opens its transaction here, so the
    /// schema and the query share one snapshot.
    /// - Throws: `.misuse` after the single query ran.
    private func willReadCatalog() throws {
        switch singleQuery {
        case .off, .inTransaction: return
        case .pending(let begin):
            try connection.begin(begin)
            singleQuery = .inTransaction
        case .spent, .cursor: throw secondQuery()
        }
    }

    /// Called before a query that reads records or names: in a single-query read that has not
    /// opened a transaction, the query runs on its own.
    /// - Throws: `.misuse` for a second query in a single-query read.
    func willRunQuery() throws {
        switch singleQuery {
        case .off, .inTransaction: return
        case .pending: singleQuery = .spent
        case .spent, .cursor: throw secondQuery()
        }
    }

    /// Called before a query whose rows are streamed. In a single-query read the scan is the
    /// last statement: it streams through a cursor, in a transaction (begun here when none is
    /// open) that the read's commit ends. Otherwise it streams in single-row mode, so that other
    /// statements of the transaction may run between its rows.
    /// - Returns: whether the scan streams through a cursor.
    /// - Throws: `.misuse` for a second query in a single-query read.
    private func willRunStream() throws -> Bool {
        switch singleQuery {
        case .off: return false
        case .pending(let begin):
            try connection.begin(begin)
            singleQuery = .cursor
            return true
        case .inTransaction:
            singleQuery = .cursor
            return true
        case .spent, .cursor: throw secondQuery()
        }
    }

    /// Streams the rows of `sql` to `body`: through a cursor or in single-row mode, as
    /// `willRunStream` decides.
    private func stream(
        _ sql: String,
        _ parameters: PostgreSQLParameters,
        collection: String,
        _ body: (any StorageRow) throws -> Bool
    ) throws {
        if try willRunStream() {
            try connection.streamThroughCursor(sql, parameters, "cannot read records", collection: collection, body)
        } else {
            try connection.stream(sql, parameters, "cannot read records", collection: collection, body)
        }
    }

    private func secondQuery() -> StorageError {
        StorageError(.misuse, "a single-query read (readSingleQuery) ran a second query")
    }

    init(connection: PostgreSQLConnection, catalog: PostgreSQLCatalog, schemaCache: PostgreSQLSchemaCache) {
        self.connection = connection
        self.catalog = catalog
        self.schemaCache = schemaCache
    }

    func invalidate() {
        isActive = false
    }

    func checkActive() throws {
        guard isActive else {
            throw StorageError(.misuse, "a transaction was used outside the closure it was passed to")
        }
    }

    /// Runs before every statement of the transaction (a write transaction sends its buffered
    /// records first).
    func willRunStatement() throws {}

    /// The stored schema of `name`, read from the catalog in this transaction.
    func readCatalog(_ name: String) throws -> PostgreSQLSchemaCache.Entry? {
        try willReadCatalog()
        let result = try connection.query(
            catalog.selectSQL,
            PostgreSQLParameters([.text(Identifier.folded(name))]),
            "cannot read the store's catalog",
            collection: name
        )
        var found: (text: String, stamp: Int64)?
        result.forEachRow { row in
            if case .text(let text) = row.value(at: 0), case .integer(let stamp) = row.value(at: 1) {
                found = (text, stamp)
            }
            return false
        }
        guard let found else { return nil }
        return PostgreSQLSchemaCache.Entry(
            schema: try PostgreSQLCatalog.decode(found.text, collection: name),
            stamp: found.stamp
        )
    }

    /// The schema of `name` as this transaction sees it: from the process's cache when it knows
    /// every column in `needing` with a type, otherwise from the catalog (another process may
    /// have added or retyped a column since the cache learned it).
    func storedSchema(of name: String, needing columns: [String] = []) throws -> CollectionSchema? {
        try storedEntry(of: name, needing: columns)?.schema
    }

    /// `storedSchema(of:needing:)` with the stamp a statement compiled from the schema checks
    /// (`PostgreSQLCatalog.stampSQL(parameter:)`), or `nil` when there is nothing to check (a
    /// write transaction's own change of the collection).
    func storedEntry(
        of name: String,
        needing columns: [String] = []
    ) throws -> (schema: CollectionSchema, stamp: Int64?)? {
        if let cached = schemaCache.lookup(name) {
            if columns.isEmpty { return (cached.schema, cached.stamp) }
            let compiler = PostgreSQLQueryCompiler(schema: cached.schema)
            let complete = columns.allSatisfy { column in
                guard let definition = compiler.definition(of: column) else { return false }
                return definition.type != .untyped
            }
            if complete { return (cached.schema, cached.stamp) }
        }
        guard let entry = try readCatalog(name) else { return nil }
        schemaCache.store(entry.schema, stamp: entry.stamp)
        return (entry.schema, entry.stamp)
    }

    /// Throws the error that makes the backend run the read again on schemas read afresh when
    /// a statement's stamp (its last column, `value`) is not the one its schema was read with.
    func checkStamp(_ value: StorageValue, expected: Int64?, collection: String) throws {
        guard let expected, value != .integer(expected) else { return }
        throw StorageError(
            .engine,
            "another process changed the schema of the collection since this process read it",
            collection: collection,
            underlying: PostgreSQLSchemaChanged()
        )
    }

    func nextAutoKey(in collection: String) throws -> Int64? {
        guard let stored = try schema(of: collection), stored.hasAutoKey else { return nil }
        try willRunQuery()
        let result = try connection.query(
            "SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM "
                + catalog.keySequence(of: stored.name),
            PostgreSQLParameters(),
            "cannot read the key sequence",
            collection: stored.name
        )
        var next: Int64?
        result.forEachRow { row in
            if case .integer(let value) = row.value(at: 0) { next = value }
            return false
        }
        return next
    }

    func schema(of collection: String) throws -> CollectionSchema? {
        try checkActive()
        try willRunStatement()
        return try storedSchema(of: collection)
    }

    func scan(_ request: ScanRequest, _ body: (any StorageRow) throws -> Bool) throws {
        if Self.readsNestedFields(request) {
            // Filtered here in part: the sub-queries' keys are read first.
            if let predicate = request.predicate, predicate.containsSubquery {
                var resolved = request
                resolved.predicate = try resolvingSubqueries(predicate)
                return try scan(resolved, body)
            }
            return try scanWithNestedFields(request, body)
        }
        try checkActive()
        try willRunStatement()
        let predicateColumns = request.predicate?.columnNames ?? []
        guard let (schema, stamp) = try storedEntry(of: request.collection, needing: request.columns + predicateColumns)
        else { return }
        var compiler = makeCompiler(schema)
        let table = catalog.table(of: request.collection)
        var selected = request.columns.map(compiler.selected)
        let condition = request.predicate.map { compiler.compile($0) }
        // The first row carries the collection's catalog stamp in its last column (see `get`).
        let folded = StorageValue.text(Identifier.folded(request.collection))
        var checked = false
        func checkFirstStamp(_ row: any StorageRow, at index: Int) throws {
            guard !checked else { return }
            try checkStamp(row.value(at: index), expected: stamp, collection: request.collection)
            checked = true
        }
        if let condition, condition == nil, let predicate = request.predicate {
            if predicate.containsSubquery {
                // A sub-query SQL cannot take here (or a term beside it): its keys are read first.
                var resolved = request
                resolved.predicate = try resolvingSubqueries(predicate)
                return try scan(resolved, body)
            }
            // Filtered here, with SQLite's semantics, over the predicate's columns too.
            selected += predicateColumns.map(compiler.selected)
            selected.append(catalog.stampSQL(parameter: 1))
            let stampIndex = selected.count - 1
            let sql =
                "SELECT " + selected.joined(separator: ", ") + " FROM " + table
                + compiler.orderByClause(request.ordering)
            var remaining = request.limit ?? Int.max
            var skipped = max(0, request.offset)
            guard remaining > 0 else {
                try willRunQuery()
                return
            }
            let offset = request.columns.count
            // Prepared once: an IN list hashed once, not once a row (10,000 listed ids over
            // 20,000 rows took 17 s with `PredicateEvaluator.matches`, which prepares per call).
            let prepared = PreparedPredicate(predicate)
            try stream(sql, PostgreSQLParameters([folded]), collection: request.collection) { row in
                try checkFirstStamp(row, at: stampIndex)
                let matches = prepared.matches { name in
                    guard let index = predicateColumns.firstIndex(of: name) else { return .null }
                    return row.value(at: offset + index)
                }
                guard matches else { return true }
                if skipped > 0 {
                    skipped -= 1
                    return true
                }
                remaining -= 1
                return try body(row) && remaining > 0
            }
            return
        }
        var parameters = compiler.parameters
        parameters.append(folded)
        if selected.isEmpty { selected = ["NULL"] }
        selected.append(catalog.stampSQL(parameter: parameters.count))
        let stampIndex = selected.count - 1
        var sql = "SELECT " + selected.joined(separator: ", ") + " FROM " + table
        if let condition = condition ?? nil { sql += " WHERE " + condition }
        sql += compiler.orderByClause(request.ordering)
        if let limit = request.limit {
            sql += " LIMIT \(max(0, limit))"
            if request.offset > 0 { sql += " OFFSET \(request.offset)" }
            if limit <= 256 {
                try willRunQuery()
                let result = try connection.query(
                    sql,
                    parameters,
                    "cannot read records",
                    collection: request.collection
                )
                try result.forEachRow { row in
                    try checkFirstStamp(row, at: stampIndex)
                    return try body(row)
                }
                return
            }
        }
        if request.limit == nil, request.offset > 0 { sql += " OFFSET \(request.offset)" }
        try stream(sql, parameters, collection: request.collection) { row in
            try checkFirstStamp(row, at: stampIndex)
            return try body(row)
        }
    }

    func collectionNames() throws -> [String] {
        try checkActive()
        try willRunStatement()
        try willRunQuery()
        let result = try connection.query(
            "SELECT folded, definition FROM " + catalog.table + " ORDER BY folded",
            PostgreSQLParameters(),
            "cannot read the store's catalog"
        )
        var names: [String] = []
        try result.forEachRow { row in
            if case .text(let definition) = row.value(at: 1) {
                let folded = row.value(at: 0)
                names.append(try PostgreSQLCatalog.decode(definition, collection: folded.description).name)
            }
            return true
        }
        return names
    }

    func count(in collection: String, where predicate: StoragePredicate?) throws -> Int {
        try checkActive()
        try willRunStatement()
        guard let schema = try storedSchema(of: collection, needing: predicate?.columnNames ?? []) else { return 0 }
        var compiler = makeCompiler(schema)
        var sql = "SELECT count(*) FROM " + catalog.table(of: collection)
        if let predicate {
            guard let condition = compiler.compile(predicate) else {
                var total = 0
                try scan(ScanRequest(collection: collection, columns: [], predicate: predicate)) { _ in
                    total += 1
                    return true
                }
                return total
            }
            sql += " WHERE " + condition
        }
        try willRunQuery()
        let result = try connection.query(
            sql,
            compiler.parameters,
            "cannot count records",
            collection: collection
        )
        guard case .integer(let count)? = result.firstValue else { return 0 }
        return Int(count)
    }

    /// Whether the schema cache's look-up statements apply in this transaction (a write
    /// transaction that changed or dropped a collection has schemas of its own).
    var usesCachedLookups: Bool { true }

    func get(
        _ collection: String,
        key: StorageValue,
        columns: [String],
        _ body: (any StorageRow) throws -> Void
    ) throws -> Bool {
        try checkActive()
        try willRunStatement()
        let lookup = PostgreSQLSchemaCache.Lookup(collection: collection, columns: columns, keyClass: key.classIndex)
        // The statement reads the collection's catalog stamp beside the record (its last
        // column): a schema changed by another process since it was cached sends the read round
        // again (`checkStamp`).
        let folded = StorageValue.text(Identifier.folded(collection))
        if usesCachedLookups, let cached = schemaCache.lookupSQL(lookup) {
            // Made from the cached schema, whose columns these are: no catalog read, no compiling.
            let parameters = PostgreSQLParameters([key, folded])
            return try runLookup(cached.sql, parameters, cached.stamp, at: max(columns.count, 1), collection, body)
        }
        guard let (schema, stamp) = try storedEntry(of: collection, needing: columns) else { return false }
        var compiler = PostgreSQLQueryCompiler(schema: schema)
        guard let condition = compiler.compile(.compare(schema.primaryKey, .equal, key)) else { return false }
        var selected = columns.isEmpty ? ["NULL"] : columns.map(compiler.selected)
        var parameters = compiler.parameters
        parameters.append(folded)
        selected.append(catalog.stampSQL(parameter: parameters.count))
        let sql =
            "SELECT " + selected.joined(separator: ", ") + " FROM " + catalog.table(of: collection) + " WHERE "
            + condition
        if compiler.arguments == [key], usesCachedLookups, stamp != nil {
            schemaCache.storeLookupSQL(sql, for: lookup, madeFrom: schema)
        }
        return try runLookup(sql, parameters, stamp, at: selected.count - 1, collection, body)
    }

    private func runLookup(
        _ sql: String,
        _ parameters: PostgreSQLParameters,
        _ stamp: Int64?,
        at stampIndex: Int,
        _ collection: String,
        _ body: (any StorageRow) throws -> Void
    ) throws -> Bool {
        try willRunQuery()
        let result = try connection.query(sql, parameters, "cannot read a record", collection: collection)
        var found = false
        try result.forEachRow { row in
            try checkStamp(row.value(at: stampIndex), expected: stamp, collection: collection)
            try body(row)
            found = true
            return false
        }
        return found
    }
}

extension StorageValue {
    /// The value's class, for keying statements whose SQL depends on it.
    fileprivate var classIndex: Int {
        switch self {
        case .null: 0
        case .integer: 1
        case .real: 2
        case .text: 3
        case .blob: 4
        }
    }
}
