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
    /// For the first column of every index, by column position: value → keys of the records
    /// holding it (nulls left out). Narrows scans whose predicate requires that column to equal
    /// a value; `PredicateEvaluator` still decides which candidates match.
    var lookup: [Int: [StorageValue: Set<StorageValue>]] = [:]

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

    /// Rebuilds `lookup` from the records, for the first column of every index of the schema.
    mutating func buildLookups() {
        lookup = [:]
        for index in schema.indexes {
            guard let column = index.columns.first, let position = schema.columnIndex(named: column) else { continue }
            var map: [StorageValue: Set<StorageValue>] = [:]
            for (key, record) in records where !record[position].isNull {
                map[record[position], default: []].insert(key)
            }
            lookup[position] = map
        }
    }

    mutating func setRecord(_ record: [StorageValue], forKey key: StorageValue) {
        if let old = records[key] { removeIndexEntries(of: old, key: key) }
        for index in uniqueIndexPositions {
            if let values = uniqueValues(of: record, index: index) { unique[index, default: [:]][values] = key }
        }
        for position in lookup.keys where !record[position].isNull {
            lookup[position]![record[position], default: []].insert(key)
        }
        records[key] = record
    }

    /// - Returns: whether there was such a record.
    mutating func removeRecord(forKey key: StorageValue) -> Bool {
        guard let old = records.removeValue(forKey: key) else { return false }
        removeIndexEntries(of: old, key: key)
        return true
    }

    private mutating func removeIndexEntries(of record: [StorageValue], key: StorageValue) {
        for index in uniqueIndexPositions {
            if let values = uniqueValues(of: record, index: index) { unique[index]?.removeValue(forKey: values) }
        }
        for position in lookup.keys where !record[position].isNull {
            let value = record[position]
            lookup[position]![value]?.remove(key)
            if lookup[position]![value]?.isEmpty == true { lookup[position]![value] = nil }
        }
    }

    /// The keys of the records that can satisfy `predicate`, when it requires the primary key or
    /// the first column of an index to equal a value or one of an IN list (the smallest such
    /// set); `nil` when every record must be tested.
    func candidateKeys(for predicate: StoragePredicate) -> Set<StorageValue>? {
        var best: Set<StorageValue>?
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
            var keys = Set<StorageValue>()
            if column == schema.primaryKey {
                for value in values where !value.isNull {
                    for variant in Self.equalValues(value) where records[variant] != nil { keys.insert(variant) }
                }
            } else if let map = lookup[position] {
                for value in values where !value.isNull {
                    for variant in Self.equalValues(value) { keys.formUnion(map[variant] ?? []) }
                }
            } else {
                continue
            }
            if best.map({ keys.count < $0.count }) ?? true { best = keys }
        }
        return best
    }

    /// Every stored value that `StorageValue.compare` finds equal to `value`: integers and
    /// reals of the same number are equal, but hash apart.
    private static func equalValues(_ value: StorageValue) -> [StorageValue] {
        switch value {
        case .integer(let number): return [value, .real(Double(number))]
        case .real(let number):
            guard number.rounded(.towardZero) == number, number >= -9_223_372_036_854_775_808.0,
                number < 9_223_372_036_854_775_808.0
            else { return [value] }
            return [value, .integer(Int64(number))]
        default: return [value]
        }
    }
}
