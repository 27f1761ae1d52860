import Storage

/// The committed contents of a store, held in memory: a value, so a snapshot is a copy that
/// shares storage until one side changes.
struct ArchiveDatabase: Sendable {
    /// Tables by folded collection name.
    var tables: [String: ArchiveTable] = [:]
}

/// One collection: its schema, its records, and the maps that enforce its unique indexes.
struct ArchiveTable: Sendable {
    var schema: CollectionSchema
    /// The collection's folder name in the store.
    var folder: String
    /// Records by primary key; each has one value per schema column, in schema order.
    var records: [StorageValue: [StorageValue]] = [:]
    var lastAssignedKey: Int64 = 0
    /// For each unique index, by its position in `schema.indexes`: indexed values → key.
    var unique: [Int: [[StorageValue]: StorageValue]] = [:]

    init(schema: CollectionSchema, folder: String) {
        self.schema = schema
        self.folder = folder
    }

    /// The values `record` has in the columns of unique index `index`, or `nil` when one is
    /// null (as in SQLite, nulls never conflict).
    func uniqueValues(of record: [StorageValue], index: Int) -> [StorageValue]? {
        var values: [StorageValue] = []
        for column in schema.indexes[index].columns {
            guard let position = schema.columnIndex(named: column) else { return nil }
            let value = record[position]
            if value.isNull { return nil }
            values.append(value)
        }
        return values
    }

    var uniqueIndexPositions: [Int] {
        schema.indexes.indices.filter { schema.indexes[$0].isUnique }
    }

    /// Checks that `record`, stored under `key`, breaks no unique index.
    func checkUnique(_ record: [StorageValue], key: StorageValue) throws {
        for index in uniqueIndexPositions {
            guard let values = uniqueValues(of: record, index: index) else { continue }
            if let owner = unique[index]?[values], owner != key {
                throw violation(index, values)
            }
        }
    }

    func violation(_ index: Int, _ values: [StorageValue]) -> StorageError {
        let columns = schema.indexes[index].columns
        return StorageError(
            .constraintViolation,
            "unique index on \(columns.joined(separator: ", ")) would be violated by \(values)",
            collection: schema.name,
            column: columns.first
        )
    }

    /// Builds the map of unique index `index` from the records.
    /// - Throws: `StorageError.Code.constraintViolation` when two records share values.
    mutating func buildUniqueIndex(_ index: Int) throws {
        var map: [[StorageValue]: StorageValue] = [:]
        for (key, record) in records {
            guard let values = uniqueValues(of: record, index: index) else { continue }
            if map.updateValue(key, forKey: values) != nil { throw violation(index, values) }
        }
        unique[index] = map
    }

    mutating func setRecord(_ record: [StorageValue], forKey key: StorageValue) {
        if let old = records[key] { removeUniqueEntries(of: old) }
        for index in uniqueIndexPositions {
            if let values = uniqueValues(of: record, index: index) { unique[index, default: [:]][values] = key }
        }
        records[key] = record
    }

    /// - Returns: whether there was such a record.
    mutating func removeRecord(forKey key: StorageValue) -> Bool {
        guard let old = records.removeValue(forKey: key) else { return false }
        removeUniqueEntries(of: old)
        return true
    }

    private mutating func removeUniqueEntries(of record: [StorageValue]) {
        for index in uniqueIndexPositions {
            if let values = uniqueValues(of: record, index: index) { unique[index]?.removeValue(forKey: values) }
        }
    }
}
