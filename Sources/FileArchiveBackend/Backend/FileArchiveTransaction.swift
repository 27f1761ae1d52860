import Storage

/// A transaction over an in-memory copy of the committed store. A write transaction records
/// which records and schemas it changed, so that the commit writes exactly those files.
final class FileArchiveTransaction: BackendWriteTransaction {
    /// Sorting goes through `PredicateEvaluator.precedes`, which reads nested fields.
    var ordersByNestedFields: Bool { true }

    private(set) var database: ArchiveDatabase
    /// The committed store the transaction started from: which record files exist.
    let base: ArchiveDatabase
    let isWritable: Bool
    var isOpen = true
    /// Keys written or deleted, by folded collection name: compared as `ArchiveTable.records`
    /// compares them, so each names one file.
    private(set) var changedKeys: [String: Set<StorageKey>] = [:]
    /// Collections whose schema file must be written (new, migrated, or a new auto-key counter).
    private(set) var changedSchemas: Set<String> = []
    /// Folders of collections dropped by the transaction, whose schema file the commit removes.
    private(set) var droppedFolders: Set<String> = []

    init(database: ArchiveDatabase, isWritable: Bool) {
        self.database = database
        self.base = database
        self.isWritable = isWritable
    }

    private func check() throws {
        guard isOpen else { throw StorageError(.misuse, "the transaction has ended") }
    }

    private func checkWritable() throws {
        try check()
        guard isWritable else { throw StorageError(.misuse, "a read transaction cannot write") }
    }

    // MARK: Reading

    func schema(of collection: String) throws -> CollectionSchema? {
        try check()
        try database.checkNotRefused(collection)
        return database.tables[Identifier.folded(collection)]?.schema
    }

    func nextAutoKey(in collection: String) throws -> Int64? {
        try check()
        return database.tables[Identifier.folded(collection)].map { $0.lastAssignedKey + 1 }
    }

    func raiseNextAutoKey(in collection: String, to key: Int64) throws {
        try checkWritable()
        let name = Identifier.folded(collection)
        guard let last = database.tables[name]?.lastAssignedKey, last < key - 1 else { return }
        database.tables[name]!.lastAssignedKey = key - 1
        changedSchemas.insert(name)
    }

    func scan(_ request: ScanRequest, _ body: (any StorageRow) throws -> Bool) throws {
        try check()
        try database.checkNotRefused(request.collection)
        guard let table = database.tables[Identifier.folded(request.collection)] else { return }
        let schema = table.schema
        let positions = request.columns.map { schema.columnIndex(named: $0) }
        var matching = Self.matching(table, request.predicate)
        if !request.ordering.isEmpty {
            let orderPositions = Dictionary(
                request.ordering.map { ($0.column, schema.columnIndex(named: $0.column)) },
                uniquingKeysWith: { first, _ in first }
            )
            if request.ordering.contains(where: { !$0.path.isEmpty }) {
                // A nested field's value is read from its JSON once a record, not once a comparison.
                let keys = matching.map { record in
                    request.ordering.map {
                        $0.value(from: orderPositions[$0.column].flatMap { $0 }.map { record[$0] } ?? .null)
                    }
                }
                let order = keys.indices.sorted { lhs, rhs in
                    for (index, sortKey) in request.ordering.enumerated() {
                        let order = StorageValue.compare(keys[lhs][index], keys[rhs][index])
                        if order != 0 { return sortKey.isDescending ? order > 0 : order < 0 }
                    }
                    return false
                }
                matching = order.map { matching[$0] }
            } else {
                matching.sort { lhs, rhs in
                    PredicateEvaluator.precedes(
                        request.ordering,
                        { column in orderPositions[column].flatMap { $0 }.map { lhs[$0] } ?? .null },
                        { column in orderPositions[column].flatMap { $0 }.map { rhs[$0] } ?? .null }
                    )
                }
            }
        }
        if request.offset > 0 { matching = Array(matching.dropFirst(request.offset)) }
        if let limit = request.limit { matching = Array(matching.prefix(max(limit, 0))) }
        for record in matching where try !body(ProjectedRow(values: record, positions: positions)) { return }
    }

    func count(in collection: String, where predicate: StoragePredicate?) throws -> Int {
        try check()
        try database.checkNotRefused(collection)
        guard let table = database.tables[Identifier.folded(collection)] else { return 0 }
        if predicate == nil { return table.records.count }
        return Self.matching(table, predicate).count
    }

    func collectionNames() throws -> [String] {
        try check()
        return database.tables.values.map(\.schema.name)
    }

    func get(
        _ collection: String,
        key: StorageValue,
        columns: [String],
        _ body: (any StorageRow) throws -> Void
    ) throws -> Bool {
        try check()
        try database.checkNotRefused(collection)
        guard let table = database.tables[Identifier.folded(collection)], let record = table.records[StorageKey(key)]
        else {
            return false
        }
        try body(ProjectedRow(values: record, positions: columns.map { table.schema.columnIndex(named: $0) }))
        return true
    }

    private static func matching(_ table: ArchiveTable, _ predicate: StoragePredicate?) -> [[StorageValue]] {
        guard let predicate else { return Array(table.records.values) }
        let schema = table.schema
        let candidates = table.candidateKeys(for: predicate).map { keys in keys.compactMap { table.records[$0] } }
        let prepared = PreparedPredicate(predicate)
        return (candidates ?? Array(table.records.values)).filter { record in
            prepared.matches { column in
                schema.columnIndex(named: column).map { record[$0] } ?? .null
            }
        }
    }

    // MARK: Writing

    func prepareCollection(_ schema: CollectionSchema) throws -> CollectionSchema {
        try checkWritable()
        try database.checkNotRefused(schema.name)
        let name = Identifier.folded(schema.name)
        guard var table = database.tables[name] else {
            // The names too, as loading checks them (`SchemaArchive.schema(path:)`): a schema the
            // store could not read back is never written.
            try schema.validate(allowingReservedName: true)
            var table = ArchiveTable(schema: schema, folder: try FileNames.folder(for: schema.name))
            for index in table.uniqueIndexPositions { table.unique[index] = [:] }
            table.buildLookups()
            database.tables[name] = table
            changedSchemas.insert(name)
            return schema
        }
        let merged = table.schema.merged(with: schema)
        if merged == table.schema { return merged }
        try merged.validate(allowingReservedName: true)
        let old = table.schema
        let added = merged.columns.count - old.columns.count
        let widened = old.columns.indices.filter { merged.columns[$0].type != old.columns[$0].type }
        if added > 0 || !widened.isEmpty {
            for key in Array(table.records.keys) {
                var record = table.records[key]!
                for index in widened { record[index] = record[index].applyingAffinity(merged.columns[index].type) }
                if added > 0 { record += repeatElement(.null, count: added) }
                table.records[key] = record
            }
        }
        table.schema = merged
        if !widened.isEmpty {
            // Widened values hash differently (1 is not 1.0): the maps are rebuilt from them.
            for index in old.indexes.indices where old.indexes[index].isUnique { try table.buildUniqueIndex(index) }
        }
        for index in merged.indexes.indices
        where merged.indexes[index].isUnique && !old.indexes.contains(merged.indexes[index]) {
            try table.buildUniqueIndex(index)
        }
        if !widened.isEmpty || merged.indexes != old.indexes { table.buildLookups() }
        database.tables[name] = table
        changedSchemas.insert(name)
        return merged
    }

    func makeWriter(for collection: String, columns: [String]) throws -> any RecordWriter {
        try checkWritable()
        try database.checkNotRefused(collection)
        let name = Identifier.folded(collection)
        guard let schema = database.tables[name]?.schema else {
            throw StorageError(.misuse, "collection '\(collection)' was not prepared", collection: collection)
        }
        let layout = try WriterLayout(columns: columns, in: schema, collection: collection)
        return ForwardingRecordWriter { [self] values in
            try put(into: name, positions: layout.positions, keyPosition: layout.keyPosition, values: values)
        }
    }

    func put(into name: String, positions: [Int], keyPosition: Int, values: [StorageValue]) throws -> StorageValue {
        try checkWritable()
        // The table is read in a closure of its own, so that no copy of it is alive when it is
        // mutated below (a live copy would make the mutation copy every record).
        let (key, record, lastKey, counterChanged) = try {
            () throws -> (StorageValue, [StorageValue], Int64, Bool) in
            guard let table = database.tables[name] else {
                throw StorageError(.misuse, "the collection of this writer no longer exists")
            }
            var key = values[keyPosition]
            var lastKey = table.lastAssignedKey
            if table.schema.hasAutoKey {
                if key.isNull {
                    lastKey += 1
                    key = .integer(lastKey)
                } else if case .integer(let number) = key {
                    lastKey = max(lastKey, number)
                }
            }
            // Refuses keys too long for a file name before anything changes.
            _ = try FileNames.record(for: key, in: table.schema.name)
            var record =
                table.records[StorageKey(key)] ?? Array(repeating: .null, count: table.schema.columns.count)
            for (index, position) in positions.enumerated() { record[position] = values[index] }
            record[positions[keyPosition]] = key
            try table.checkUnique(record, key: StorageKey(key))
            try RecordArchive.checkSize(record, columns: table.schema.columns, collection: table.schema.name, key: key)
            return (key, record, lastKey, lastKey != table.lastAssignedKey)
        }()
        database.tables[name]!.setRecord(record, forKey: StorageKey(key))
        if counterChanged {
            database.tables[name]!.lastAssignedKey = lastKey
            changedSchemas.insert(name)
        }
        changedKeys[name, default: []].insert(StorageKey(key))
        return key
    }

    func delete(from collection: String, key: StorageValue) throws -> Bool {
        try checkWritable()
        try database.checkNotRefused(collection)
        let name = Identifier.folded(collection)
        let key = StorageKey(key)
        guard database.tables[name]?.records[key] != nil else { return false }
        _ = database.tables[name]!.removeRecord(forKey: key)
        changedKeys[name, default: []].insert(key)
        return true
    }

    func deleteAll(from collection: String, where predicate: StoragePredicate?) throws -> [StorageValue] {
        try checkWritable()
        try database.checkNotRefused(collection)
        let name = Identifier.folded(collection)
        let keys = { () -> [StorageValue] in
            guard let table = database.tables[name] else { return [] }
            let keyIndex = table.schema.columnIndex(named: table.schema.primaryKey)!
            return Self.matching(table, predicate).map { $0[keyIndex] }.sorted { StorageValue.compare($0, $1) < 0 }
        }()
        for key in keys.lazy.map(StorageKey.init) {
            _ = database.tables[name]!.removeRecord(forKey: key)
            changedKeys[name, default: []].insert(key)
        }
        return keys
    }

    func dropCollection(_ collection: String) throws {
        try checkWritable()
        let name = Identifier.folded(collection)
        guard let table = database.tables[name] else { return }
        // Every record file goes with the commit, then the schema file (a folder without one is
        // no collection); the records are listed as changed keys so the plan removes their files.
        for key in Array(table.records.keys) { changedKeys[name, default: []].insert(key) }
        database.tables[name] = nil
        changedSchemas.remove(name)
        droppedFolders.insert(table.folder)
    }
}
