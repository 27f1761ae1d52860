import Foundation

/// What the rows of one untyped batch need from the store, learnt row by row: their columns
/// (each name validated once, and never spelt two ways), the type every value of a column fits
/// (integer, then real, then text; a blob in a column of its own), and which columns every row
/// fills. The first pass of an import; the rows themselves need not stay in memory.
struct DictionaryBatch {
    let collection: String
    /// The columns in the order rows brought them.
    private(set) var columns: [ColumnDefinition] = []
    private(set) var slotByName: [String: Int] = [:]
    /// Per column, the rows with a value that is not null.
    private var filled: [Int] = []
    /// The rows added.
    private(set) var count = 0
    /// Columns whose first row without a value is kept, and those rows.
    private let watched: [String]
    private var firstLacking: [String: Int] = [:]

    /// A batch for `collection`, keeping the first row without a value of each of `watched`.
    init(collection: String, watching watched: [String] = []) {
        self.collection = collection
        self.watched = watched
    }

    /// Adds row `rowIndex`: its values, in the order of `columns` (as long as `columns` is now).
    /// - Throws: ``StorageError`` naming the row: a key that is not a valid column name, a key
    ///   spelt as another column in another normalization, a value that cannot be stored, a blob
    ///   beside values of another type.
    mutating func add(_ row: [String: Any], at rowIndex: Int) throws -> [StorageValue] {
        // New keys get their columns in sorted order, so the layout does not depend on
        // dictionary order; each name is validated once, when it is first seen.
        if row.keys.contains(where: { slotByName[$0] == nil }) {
            for name in row.keys.filter({ slotByName[$0] == nil }).sorted() {
                do {
                    try Identifier.validateColumn(name, in: collection)
                } catch let error as StorageError {
                    throw error.at("row \(rowIndex)", in: collection)
                }
                slotByName[name] = columns.count
                columns.append(ColumnDefinition(name: name, type: .untyped))
                filled.append(0)
            }
        }
        var record = Array(repeating: StorageValue.null, count: columns.count)
        for (name, any) in row {
            let slot = slotByName[name]!
            // The dictionary found a key spelt in another Unicode normalization too.
            guard Identifier.spelledAlike(columns[slot].name, name) else {
                throw StorageError(
                    .schemaMismatch,
                    "row \(rowIndex): " + CollectionSchema.twinNames(columns[slot].name, name),
                    collection: collection,
                    column: name
                )
            }
            let (value, type) = try Session.storageValue(any, collection: collection, column: name, row: rowIndex)
            if let type, columns[slot].type != type {
                if columns[slot].type != .untyped && (type == .blob || columns[slot].type == .blob) {
                    // PostgreSQL's typed columns cannot hold a blob beside other values, and
                    // turning either into the other's kind would change it silently.
                    throw StorageError(
                        .schemaMismatch,
                        "row \(rowIndex), key \(Identifier.quoted(name)): a \(type) value in a column whose"
                            + " other values are \(columns[slot].type); a blob needs a column of its own",
                        collection: collection,
                        column: name
                    )
                }
                columns[slot].type = Session.batchType(columns[slot].type, type)
            }
            if !value.isNull { filled[slot] += 1 }
            record[slot] = value
        }
        for name in watched where firstLacking[name] == nil {
            if row[name] == nil || row[name] is NSNull { firstLacking[name] = rowIndex }
        }
        count += 1
        return record
    }

    /// The first row without a value for `name`, when `name` was watched; nil when every row
    /// has one.
    func firstRow(lacking name: String) -> Int? { firstLacking[name] }

    /// The values of a row given to `add` before, in the slots `add` gave them: the second pass
    /// of an input read twice, which must bring no key the first did not see.
    /// - Throws: ``StorageError`` with `.invalidJSON` for a key the first pass did not see (the
    ///   input changed between the passes), or as `add` for a value.
    func values(of row: [String: Any], at rowIndex: Int) throws -> [StorageValue] {
        var record = Array(repeating: StorageValue.null, count: columns.count)
        for (name, any) in row {
            guard let slot = slotByName[name] else {
                throw StorageError(
                    .invalidJSON,
                    "row \(rowIndex): key \(Identifier.quoted(name)) was not there when the input was first read;"
                        + " it changed while it was read twice",
                    collection: collection,
                    column: name
                )
            }
            record[slot] = try Session.storageValue(any, collection: collection, column: name, row: rowIndex).0
        }
        return record
    }

    /// Whether every row added has a value that is not null for `name`.
    func everyRowFills(_ name: String) -> Bool {
        guard let slot = slotByName[name] else { return false }
        return filled[slot] == count
    }

    /// The columns in name order, whichever rows brought them first, so the same rows in any
    /// order create the same layout; and for each, its slot in the records `add` returned.
    var layout: (columns: [ColumnDefinition], slots: [Int]) {
        let order = columns.indices.sorted { columns[$0].name < columns[$1].name }
        return (order.map { columns[$0] }, order)
    }
}

extension Session {
    /// The second pass of an untyped import: chooses the key as a batch does (`primaryKey`, else
    /// the stored one, else `id` when every row has one, else an auto key), prepares the
    /// collection with the types `batch` found, and stores every record `next` gives (in the
    /// order and slots of `batch.add`'s results), converted to the stored types.
    /// - Parameters:
    ///   - batch: the first pass's findings.
    ///   - primaryKey: the key asked for, or nil.
    ///   - earlier: for a natural key, the record of an earlier row (laid out as `next`'s), so
    ///     that two rows under one key are compared whole; nil compares digests of their values
    ///     (a stream, whose rows are not kept).
    ///   - next: the next record and the row it came from, or nil at the end.
    /// - Returns: the keys of the stored records.
    /// - Throws: ``StorageError`` naming the row: a key that is not the collection's, types the
    ///   stored columns cannot take, a record without its key, two records under one natural key
    ///   that differ; or what `next` or the backend throws.
    func store(
        _ batch: DictionaryBatch,
        primaryKey: String?,
        earlier: ((Int) -> [StorageValue])? = nil,
        next: () throws -> (row: Int, record: [StorageValue])?
    ) throws -> KeyList {
        let collection = batch.collection
        let stored = try storedSchema(collection)
        var (columns, slots) = batch.layout
        let key: String
        if let stored {
            try Self.checkPrimaryKey(primaryKey, against: stored)
            try Self.checkBatchTypes(of: columns, against: stored)
            key = stored.primaryKey
        } else if let primaryKey {
            try Identifier.validateColumn(primaryKey, in: collection)
            key = primaryKey
        } else if batch.everyRowFills("id") {
            key = "id"
        } else {
            key = CollectionSchema.autoKeyColumn
        }
        var keySlot = columns.firstIndex { $0.name == key }
        if keySlot == nil {
            guard key == CollectionSchema.autoKeyColumn else {
                throw StorageError(
                    .invalidKey,
                    "the rows have no \(Identifier.quoted(key)), the primary key of collection '\(collection)'",
                    collection: collection,
                    column: key
                )
            }
            keySlot = columns.count
            columns.append(ColumnDefinition(name: key, type: .integer, isNullable: false))
            slots.append(-1)
        }
        let schema = CollectionSchema(name: collection, columns: columns, primaryKey: key)
        try schema.validate()
        let result = try prepare(schema)
        let types = columns.map { result.column(named: $0.name)?.type ?? .untyped }
        let writer = try makeRecordWriter(for: collection, columns: columns.map(\.name))
        try writer.expectRecords(batch.count)
        let references = try referenceSlots(of: collection, columns: columns.map(\.name))
        let natural = key != CollectionSchema.autoKeyColumn
        // Rows seen per key, for a natural key only: two rows of one batch under one key must
        // agree, or the file has an error the last row would silently hide.
        var firstRow: [StorageValue: (row: Int, digest: Int)]? = primaryKey == nil ? nil : [:]
        // The change record: sequential keys (ids, or keys the store assigns) take a few bytes
        // however many records a file has.
        var keys = KeyList()
        func arranged(_ values: [StorageValue]) -> [StorageValue] {
            slots.map { $0 >= 0 && $0 < values.count ? values[$0] : .null }
        }
        while let (rowIndex, values) = try next() {
            var record = arranged(values)
            if natural && record[keySlot!].isNull {
                throw StorageError(
                    .invalidKey,
                    "row \(rowIndex) has no value for the primary key \(Identifier.quoted(key))",
                    collection: collection,
                    column: key
                )
            }
            if firstRow != nil {
                let digest = record.hashValue
                if let first = firstRow![record[keySlot!]] {
                    let same = earlier.map { arranged($0(first.row)) == record } ?? (first.digest == digest)
                    guard same else {
                        throw StorageError(
                            .constraintViolation,
                            "rows \(first.row) and \(rowIndex) both have \(Identifier.quoted(key)) = \(record[keySlot!])"
                                + " but differ; nothing was stored",
                            collection: collection,
                            column: key,
                            key: record[keySlot!]
                        )
                    }
                } else {
                    firstRow![record[keySlot!]] = (rowIndex, digest)
                }
            }
            do {
                for index in record.indices {
                    record[index] = try Self.converted(record[index], to: types[index], column: columns[index].name)
                }
                if !references.isEmpty {
                    try checkReferences(of: record, key: record[keySlot!], slots: references, in: collection)
                }
                keys.append(try writer.put(record))
            } catch let error as StorageError {
                throw error.at("row \(rowIndex)", in: collection)
            }
        }
        noteChange(.upsertList(keys), in: collection)
        return keys
    }
}
