import Storage

/// The committed contents of a store, held in memory: a value, so a snapshot is a copy that
/// shares storage until one side changes.
struct ArchiveDatabase: Sendable {
    /// Tables by folded collection name.
    var tables: [String: ArchiveTable] = [:]
    /// Record files left out when the store was loaded, until a commit writes or removes them.
    var damage: [DamagedRecord] = []
    /// Collection folders the store refused to load, by folder name, with the reason (a symbolic
    /// link planted or swapped in, a folder holding another collection's schema). Using their
    /// collection throws the reason; the other collections are unaffected.
    var refusedFolders: [String: StorageError] = [:]

    /// Throws the reason the folder of `collection` was refused, if it was.
    func checkNotRefused(_ collection: String) throws {
        guard !refusedFolders.isEmpty, let folder = try? FileNames.folder(for: collection),
            var reason = refusedFolders[folder]
        else { return }
        reason.collection = collection
        throw reason
    }
}

/// One collection: its schema, its records, and the maps that enforce its unique indexes.
///
/// Keys and indexed values are compared as SQLite compares them (`StorageKey`): text by its
/// bytes, numbers as numbers whatever their storage class, so that every map agrees with the
/// file names (`FileNames.record(for:in:)`) and with the other backends.
struct ArchiveTable: Sendable {
    var schema: CollectionSchema
    /// The collection's folder name in the store.
    var folder: String
    /// Records by primary key; each has one value per schema column, in schema order.
    var records: [StorageKey: [StorageValue]] = [:]
    var lastAssignedKey: Int64 = 0
    /// For each unique index, by its position in `schema.indexes`: indexed values → key.
    var unique: [Int: [[StorageKey]: StorageKey]] = [:]
    /// For the first column of every index, by column position: value → keys of the records
    /// holding it (nulls left out). Narrows scans whose predicate requires that column to equal
    /// a value; `PredicateEvaluator` still decides which candidates match.
    var lookup: [Int: [StorageKey: Set<StorageKey>]] = [:]
    /// Files other than a key's own that hold it, written under the names of an older version
    /// (docs/ARCHIVE_FORMAT.md, "Damaged records"): removed by the next write or delete of the
    /// key, so that none of them comes back after a reopen.
    var strayFiles: [StorageKey: [String]] = [:]

    init(schema: CollectionSchema, folder: String) {
        self.schema = schema
        self.folder = folder
    }

    /// The values `record` has in the columns of unique index `index`, or `nil` when one is
    /// null (as in SQLite, nulls never conflict).
    func uniqueValues(of record: [StorageValue], index: Int) -> [StorageKey]? {
        var values: [StorageKey] = []
        for column in schema.indexes[index].columns {
            guard let position = schema.columnIndex(named: column) else { return nil }
            let value = record[position]
            if value.isNull { return nil }
            values.append(StorageKey(value))
        }
        return values
    }

    var uniqueIndexPositions: [Int] {
        schema.indexes.indices.filter { schema.indexes[$0].isUnique }
    }

    /// Checks that `record`, stored under `key`, breaks no unique index.
    func checkUnique(_ record: [StorageValue], key: StorageKey) throws {
        for index in uniqueIndexPositions {
            guard let values = uniqueValues(of: record, index: index) else { continue }
            if let owner = unique[index]?[values], owner != key {
                throw violation(index, values)
            }
        }
    }

    func violation(_ index: Int, _ values: [StorageKey]) -> StorageError {
        let columns = schema.indexes[index].columns
        return StorageError(
            .constraintViolation,
            "unique index on \(columns.joined(separator: ", ")) would be violated by \(values.map(\.value))",
            collection: schema.name,
            column: columns.first
        )
    }

    /// Builds the map of unique index `index` from the records.
    /// - Throws: `StorageError.Code.constraintViolation` when two records share values.
    mutating func buildUniqueIndex(_ index: Int) throws {
        var map: [[StorageKey]: StorageKey] = [:]
        for (key, record) in records {
            guard let values = uniqueValues(of: record, index: index) else { continue }
            if map.updateValue(key, forKey: values) != nil { throw violation(index, values) }
        }
        unique[index] = map
    }

    /// Rebuilds `lookup` from the records, for the first column of every index of the schema.
    mutating func buildLookups() {
        lookup = [:]
        for index in schema.indexes {
            guard let column = index.columns.first, let position = schema.columnIndex(named: column) else { continue }
            var map: [StorageKey: Set<StorageKey>] = [:]
            for (key, record) in records where !record[position].isNull {
                map[StorageKey(record[position]), default: []].insert(key)
            }
            lookup[position] = map
        }
    }

    mutating func setRecord(_ record: [StorageValue], forKey key: StorageKey) {
        if let old = records[key] { removeIndexEntries(of: old, key: key) }
        if !strayFiles.isEmpty { strayFiles[key] = nil }
        for index in uniqueIndexPositions {
            if let values = uniqueValues(of: record, index: index) { unique[index, default: [:]][values] = key }
        }
        for position in lookup.keys where !record[position].isNull {
            lookup[position]![StorageKey(record[position]), default: []].insert(key)
        }
        records[key] = record
    }

    /// - Returns: whether there was such a record.
    mutating func removeRecord(forKey key: StorageKey) -> Bool {
        guard let old = records.removeValue(forKey: key) else { return false }
        if !strayFiles.isEmpty { strayFiles[key] = nil }
        removeIndexEntries(of: old, key: key)
        return true
    }

    private mutating func removeIndexEntries(of record: [StorageValue], key: StorageKey) {
        for index in uniqueIndexPositions {
            if let values = uniqueValues(of: record, index: index) { unique[index]?.removeValue(forKey: values) }
        }
        for position in lookup.keys where !record[position].isNull {
            let value = StorageKey(record[position])
            lookup[position]![value]?.remove(key)
            if lookup[position]![value]?.isEmpty == true { lookup[position]![value] = nil }
        }
    }

    /// The keys of the records that can satisfy `predicate`, when it requires the primary key or
    /// the first column of an index to equal a value or one of an IN list (the smallest such
    /// set); `nil` when every record must be tested. `StorageKey` finds the integer and the real
    /// of one number alike.
    func candidateKeys(for predicate: StoragePredicate) -> Set<StorageKey>? {
        var best: Set<StorageKey>?
        // Any term this does not know (of a kind added later among them) only filters.
        for term in predicate.conjuncts {
            let column: String
            let values: [StorageValue]
            switch term {
            case .compare(let name, .equal, let value): (column, values) = (name, [value])
            case .in(let name, let list): (column, values) = (name, list)
            default: continue
            }
            guard let position = schema.columnIndex(named: column) else { continue }
            var keys = Set<StorageKey>()
            if column == schema.primaryKey {
                for value in values where !value.isNull {
                    let key = StorageKey(value)
                    if records[key] != nil { keys.insert(key) }
                }
            } else if let map = lookup[position] {
                for value in values where !value.isNull { keys.formUnion(map[StorageKey(value)] ?? []) }
            } else {
                continue
            }
            if best.map({ keys.count < $0.count }) ?? true { best = keys }
        }
        return best
    }
}
