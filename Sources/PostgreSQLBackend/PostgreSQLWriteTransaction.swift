import Storage

/// A write transaction on one connection (`BEGIN ISOLATION LEVEL SERIALIZABLE` or `REPEATABLE
/// READ`). Records are buffered by their writers and sent in batches, before any other
/// statement of the transaction and before it commits.
final class PostgreSQLWriteTransaction: PostgreSQLReadTransaction, BackendWriteTransaction {
    func raiseNextAutoKey(in collection: String, to key: Int64) throws {
        guard let stored = try schema(of: collection), stored.hasAutoKey,
            let next = try nextAutoKey(in: stored.name), next < key
        else { return }
        let sequence = catalog.keySequence(of: stored.name)
        _ = try connection.query(
            "SELECT setval($1::text::regclass, $2::int8, true)",
            PostgreSQLParameters([.text(sequence), .integer(key - 1)]),
            "cannot raise the key sequence",
            collection: stored.name
        )
    }

    /// The schemas this transaction changed, published to the cache only when it commits.
    var changedSchemas: [String: CollectionSchema] = [:]
    /// The catalog stamps of `changedSchemas` (see `PostgreSQLCatalog.stampSQL(parameter:)`), by
    /// folded name, published with them.
    var changedStamps: [String: Int64] = [:]
    /// The folded names of the collections this transaction dropped (and did not create again),
    /// removed from the cache only when it commits.
    var droppedCollections: Set<String> = []
    /// Writers holding records not yet sent.
    private var writers: [PostgreSQLRecordWriter] = []
    /// The largest number of records a writer buffers before it sends them.
    let batchSize: Int
    /// The keys this transaction wrote and deleted, for other processes' change streams.
    var changes = PostgreSQLChangeSet()
    /// How many savepoints the transaction's writers used (see `PostgreSQLRecordWriter`).
    var savepoints = 0
    /// Whether the transaction answered that the store has no registry of full-text indexes
    /// from the process's cache (or a catalog read that may be stale by its commit), which its
    /// last statement then checks (`PostgreSQLSearchRegistryAppeared`). Cleared when the
    /// transaction creates the registry itself.
    private var assumesNoSearchRegistry = false
    /// The collections (folded) whose registry record the transaction answered absent from the
    /// process's cache, which its last statement then checks, except those it wrote itself.
    private var assumedUnindexed: [String] = []

    init(
        connection: PostgreSQLConnection,
        catalog: PostgreSQLCatalog,
        schemaCache: PostgreSQLSchemaCache,
        batchSize: Int
    ) {
        self.batchSize = batchSize
        super.init(connection: connection, catalog: catalog, schemaCache: schemaCache)
    }

    /// The writer whose direct copy is open on the connection, if any (see
    /// `PostgreSQLRecordWriter`): it ends before anything else is sent.
    weak var streamingWriter: PostgreSQLRecordWriter?

    /// Ends the open copy of a writer other than `writer` (sending that writer's batch).
    func endStreaming(except writer: PostgreSQLRecordWriter) throws {
        if let streaming = streamingWriter, streaming !== writer { try streaming.flush() }
    }

    override func willRunStatement() throws {
        for writer in writers { try writer.flush() }
    }

    /// Sends what the writers still hold before the commit, except when each holds at most one
    /// record: those upserts are returned, to go with the commit in one round trip.
    func flushForCommit() throws -> [PostgreSQLConnection.PipelinedStatement] {
        let last = writers.compactMap { $0.pendingSingleUpsert() }
        if last.count == writers.filter(\.hasBufferedRecords).count {
            for writer in writers { writer.forgetBufferedRecords() }
            return last
        }
        try willRunStatement()
        return []
    }

    /// When the transaction is one saved record and nothing else — no statement sent yet, one
    /// writer holding one record — that writer, whose record is then saved by one statement on
    /// its own (`PostgreSQLRecordWriter.saveAlone`) instead of in `BEGIN … COMMIT`; otherwise
    /// `nil`.
    func singleSaveWriter() -> PostgreSQLRecordWriter? {
        guard connection.hasPendingBegin, changedSchemas.isEmpty, droppedCollections.isEmpty, savepoints == 0,
            changes.isSingleUpsert
        else { return nil }
        var holding: PostgreSQLRecordWriter?
        for writer in writers where writer.hasBufferedRecords {
            guard holding == nil else { return nil }
            holding = writer
        }
        return holding
    }

    override var usesCachedLookups: Bool { changedSchemas.isEmpty && droppedCollections.isEmpty }

    override func storedEntry(
        of name: String,
        needing columns: [String] = []
    ) throws -> (schema: CollectionSchema, stamp: Int64?)? {
        // The store asks at every write (a small string: compared at once).
        if name == PostgreSQLSearchRegistryAppeared.registry { return try searchRegistryEntry(needing: columns) }
        // Nothing changed by this transaction (a save's usual case): the cache answers, without
        // folding the name here.
        if changedSchemas.isEmpty && droppedCollections.isEmpty {
            return try super.storedEntry(of: name, needing: columns)
        }
        let folded = Identifier.folded(name)
        // Its own change: nothing to check (the catalog row is this transaction's).
        if let changed = changedSchemas[folded] { return (changed, nil) }
        if droppedCollections.contains(folded) { return nil }
        return try super.storedEntry(of: name, needing: columns)
    }

    /// The schema of the store's registry of full-text indexes: its absence answered from the
    /// cache once a catalog read found none, and then checked at the commit (see
    /// `PostgreSQLSearchRegistryAppeared`), so that a single save stays one statement.
    private func searchRegistryEntry(needing columns: [String]) throws -> (schema: CollectionSchema, stamp: Int64?)? {
        let name = PostgreSQLSearchRegistryAppeared.registry
        let folded = Identifier.folded(name)
        if let changed = changedSchemas[folded] { return (changed, nil) }
        if !droppedCollections.contains(folded), schemaCache.lookup(name) == nil,
            schemaCache.searchRegistryKnownAbsent
        {
            assumesNoSearchRegistry = true
            return nil
        }
        let entry = try super.storedEntry(of: name, needing: columns)
        if entry == nil {
            schemaCache.noteSearchRegistryAbsent()
            assumesNoSearchRegistry = true
        }
        return entry
    }

    /// A look-up of a collection's record in the registry of full-text indexes, which the
    /// store makes at each write transaction: a collection the cache knows unindexed is answered
    /// so without a query (and checked at the commit); one found unindexed by the query is
    /// remembered. Other look-ups are the read transaction's.
    override func get(
        _ collection: String,
        key: StorageValue,
        columns: [String],
        _ body: (any StorageRow) throws -> Void
    ) throws -> Bool {
        guard collection == PostgreSQLSearchRegistryAppeared.registry, case .text(let folded) = key,
            !assumesNoSearchRegistry
        else { return try super.get(collection, key: key, columns: columns, body) }
        if assumedUnindexed.contains(folded) { return false }
        let written = registryKeysWritten
        if !written.contains(folded), schemaCache.isKnownUnindexed(folded) {
            try checkActive()
            assumedUnindexed.append(folded)
            return false
        }
        let found = try super.get(collection, key: key, columns: columns, body)
        if !found, !written.contains(folded) { schemaCache.noteUnindexed(folded) }
        return found
    }

    /// The keys (collections, folded) of the registry of full-text indexes this transaction
    /// wrote or deleted.
    var registryKeysWritten: [String] {
        changes.keys(of: Identifier.folded(PostgreSQLSearchRegistryAppeared.registry)).compactMap { key in
            if case .text(let text) = key { return text }
            return nil
        }
    }

    /// What the transaction answered from the cache and must check before its commit.
    func commitCheck() -> PostgreSQLSearchRegistryAppeared.Check {
        if assumesNoSearchRegistry { return .noRegistry }
        guard !assumedUnindexed.isEmpty else { return .none }
        let written = registryKeysWritten
        let unchecked = assumedUnindexed.filter { !written.contains($0) }
        return unchecked.isEmpty ? .none : .unindexed(unchecked)
    }

    /// The check a single save of `writer`'s record makes in its statement, or `nil` when the
    /// transaction's answers cannot be checked there (a collection other than the writer's).
    func singleSaveCheck(of writer: PostgreSQLRecordWriter) -> PostgreSQLSearchRegistryAppeared.Check? {
        let check = commitCheck()
        guard case .unindexed(let collections) = check else { return check }
        return collections == [writer.folded] ? check : nil
    }

    /// The SQLSTATEs of a migration that lost a race with another process changing the same
    /// collection: a unique violation in PostgreSQL's own catalog, or a table, a column or a
    /// constraint that exists already.
    private static let catalogRaces: Set<PostgreSQLError.Code> = [
        .uniqueViolation, .duplicateTable, .duplicateColumn, .duplicateObject,
    ]

    func prepareCollection(_ requested: CollectionSchema) throws -> CollectionSchema {
        try checkActive()
        try willRunStatement()
        let folded = Identifier.folded(requested.name)
        let usesCache = changedSchemas[folded] == nil && !droppedCollections.contains(folded)
        if usesCache, let known = schemaCache.covered(requested, folded: folded) { return known }
        if let known = usesCache ? schemaCache.lookup(requested.name)?.schema : changedSchemas[folded],
            known.merged(with: requested) == known
        {
            if usesCache { schemaCache.storeCovered(requested, by: known, folded: folded) }
            return known
        }
        try requested.validateShape()
        // The catalog, not the cache: another process may have changed the collection.
        let read = try readCatalog(requested.name)
        let current = read?.schema
        var target = current?.merged(with: requested) ?? requested
        if current == nil {
            for index in target.columns.indices where target.columns[index].name != target.primaryKey {
                target.columns[index].isNullable = true
            }
        }
        if let read, target == read.schema {
            changedSchemas[folded] = read.schema
            changedStamps[folded] = read.stamp
            return read.schema
        }
        try target.validateShape()
        for statement in catalog.migration(from: current, to: target) {
            do {
                try connection.execute(statement, collection: requested.name)
            } catch let error as StorageError
                where error.postgreSQL?.code.map(Self.catalogRaces.contains) == true
                && !Self.isDuplicateData(error)
            {
                // Another process created or changed the same table at the same moment (the
                // loser of concurrent `CREATE TABLE IF NOT EXISTS` gets a unique violation in
                // PostgreSQL's own catalog): run the transaction again, against the new catalog.
                throw StorageError(
                    .busy,
                    "another process changed the collection at the same time",
                    collection: requested.name,
                    underlying: PostgreSQLCatalogRace(
                        cause: error.postgreSQL ?? PostgreSQLError(sqlState: nil, message: error.message)
                    )
                )
            }
        }
        return try recordSchema(target, folded: folded)
    }

    /// Writes `target` to the catalog row `folded` and makes it this transaction's view.
    func recordSchema(_ target: CollectionSchema, folded: String) throws -> CollectionSchema {
        let written = try connection.query(
            catalog.upsertSQL,
            PostgreSQLParameters([.text(folded), .text(PostgreSQLCatalog.encode(target))]),
            "cannot update the store's catalog",
            collection: target.name
        )
        changedSchemas[folded] = target
        if folded == Identifier.folded(PostgreSQLSearchRegistryAppeared.registry) { assumesNoSearchRegistry = false }
        if case .integer(let stamp)? = written.firstValue {
            changedStamps[folded] = stamp
        } else {
            changedStamps[folded] = nil
        }
        droppedCollections.remove(folded)
        return target
    }

    /// Whether `error` is a unique index that cannot be built over the records already stored
    /// (`could not create unique index`): the data breaks it, which no retry changes, unlike a
    /// race in PostgreSQL's own catalog (a unique violation there too).
    private static func isDuplicateData(_ error: StorageError) -> Bool {
        error.postgreSQL?.code == .uniqueViolation
            && error.postgreSQL?.message.contains("could not create unique index") == true
    }

    func dropCollection(_ collection: String) throws {
        try checkActive()
        try willRunStatement()
        guard let schema = try storedSchema(of: collection) else { return }
        let folded = Identifier.folded(collection)
        try connection.execute("DROP TABLE IF EXISTS " + catalog.table(of: collection), collection: collection)
        if schema.hasAutoKey {
            try connection.execute(
                "DROP SEQUENCE IF EXISTS " + catalog.keySequence(of: collection),
                collection: collection
            )
        }
        _ = try connection.query(
            "DELETE FROM " + catalog.table + " WHERE folded = $1::text",
            PostgreSQLParameters([.text(folded)]),
            "cannot update the store's catalog",
            collection: collection
        )
        changedSchemas[folded] = nil
        changedStamps[folded] = nil
        droppedCollections.insert(folded)
    }

    func makeWriter(for collection: String, columns: [String]) throws -> any RecordWriter {
        try checkActive()
        try willRunStatement()
        let layout = PostgreSQLSchemaCache.WriterLayout(collection: collection, columns: columns)
        let plan: PostgreSQLWriterPlan
        if usesCachedLookups, let cached = schemaCache.writerPlan(layout) {
            plan = cached
        } else {
            guard let schema = try storedSchema(of: collection, needing: columns) else {
                throw StorageError(.schemaMismatch, "the collection has not been prepared", collection: collection)
            }
            plan = try PostgreSQLWriterPlan(catalog: catalog, schema: schema, collection: collection, columns: columns)
            if usesCachedLookups { schemaCache.storeWriterPlan(plan, for: layout, madeFrom: schema) }
        }
        let writer = PostgreSQLRecordWriter(transaction: self, plan: plan)
        writers.append(writer)
        return writer
    }

    func delete(from collection: String, key: StorageValue) throws -> Bool {
        try checkActive()
        try willRunStatement()
        guard let schema = try storedSchema(of: collection) else { return false }
        var compiler = PostgreSQLQueryCompiler(schema: schema)
        guard let condition = compiler.compile(.compare(schema.primaryKey, .equal, key)) else { return false }
        let result = try connection.query(
            "DELETE FROM " + catalog.table(of: collection) + " WHERE " + condition,
            compiler.parameters,
            "cannot delete a record",
            collection: collection
        )
        let deleted = result.affectedRows > 0
        if deleted { changes.record(collection, [key], deleted: true) }
        return deleted
    }

    func deleteAll(from collection: String, where predicate: StoragePredicate?) throws -> [StorageValue] {
        try checkActive()
        try willRunStatement()
        guard let schema = try storedSchema(of: collection, needing: predicate?.columnNames ?? []) else { return [] }
        var compiler = makeCompiler(schema)
        let table = catalog.table(of: collection)
        let key = PostgreSQLIdentifier.quoted(schema.primaryKey)
        var sql = "DELETE FROM " + table
        if let predicate {
            guard let condition = compiler.compile(predicate) else {
                // Matched here, deleted by key.
                var keys: [StorageValue] = []
                try scan(ScanRequest(collection: collection, columns: [schema.primaryKey], predicate: predicate)) {
                    keys.append($0.value(at: 0))
                    return true
                }
                return try keys.filter { try delete(from: collection, key: $0) }
            }
            sql += " WHERE " + condition
        }
        sql += " RETURNING " + key
        let result = try connection.query(
            sql,
            compiler.parameters,
            "cannot delete records",
            collection: collection
        )
        var keys: [StorageValue] = []
        keys.reserveCapacity(result.rowCount)
        result.forEachRow { row in
            keys.append(row.value(at: 0))
            return true
        }
        changes.record(collection, keys, deleted: true)
        return keys
    }
}
