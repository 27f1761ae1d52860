internal import CLMDB
import Storage

/// Inserts or replaces records of one layout. The record is encoded from the values straight
/// into a buffer reused for every record; fields the writer does not name keep their stored
/// bytes; index entries are updated and unique indexes checked in the same transaction, before
/// anything is written.
final class LMDBRecordWriter: RecordWriter {
    private let transaction: LMDBWriteTransaction
    private let collection: LMDBCollection
    private let records: MDB_dbi
    /// The field id of each of the writer's columns.
    private let fields: [Int]
    private let keyPosition: Int
    /// By field id: whether the writer writes the field.
    private let written: [Bool]
    /// Each index, its database, and for each of its columns the writer's position or -1.
    private let indexes: [(index: LMDBCollection.Index, dbi: MDB_dbi, positions: [Int], fields: [Int])]
    private let storedRow: LMDBRow

    init(transaction: LMDBWriteTransaction, info: LMDBCollectionInfo, columns: [String]) throws {
        let collection = info.collection
        self.transaction = transaction
        self.collection = collection
        self.records = try transaction.handle(collection.database, collection: collection.name)
        fields = try columns.map { column in
            guard let field = info.fieldsByName[column] else {
                throw StorageError(
                    .unknownColumn,
                    "the collection has no column \(Identifier.quoted(column))",
                    collection: collection.name,
                    column: column
                )
            }
            return field
        }
        guard let keyPosition = columns.firstIndex(of: collection.primaryKey) else {
            throw StorageError(
                .invalidKey,
                "a writer's columns must include the primary key \(Identifier.quoted(collection.primaryKey))",
                collection: collection.name,
                column: collection.primaryKey
            )
        }
        self.keyPosition = keyPosition
        var written = Array(repeating: false, count: collection.nextFieldID)
        for field in fields { written[field] = true }
        self.written = written
        indexes = try collection.indexes.map { index in
            let fields = index.columns.map { info.fieldsByName[$0] ?? -1 }
            return (
                index, try transaction.handle(index.database, collection: collection.name),
                index.columns.map { columns.firstIndex(of: $0) ?? -1 }, fields
            )
        }
        storedRow = LMDBRow(requested: [], fieldCount: collection.nextFieldID)
    }

    func expectRecords(_ count: Int) throws {
        try transaction.checkActive()
        transaction.expectRecords(count)
    }

    @discardableResult
    func put(_ values: [StorageValue]) throws -> StorageValue {
        let key = try putRecord(values)
        try transaction.noteRecordPut()
        return key
    }

    private func putRecord(_ values: [StorageValue]) throws -> StorageValue {
        try transaction.checkActive()
        let name = collection.name
        guard values.count == fields.count else {
            throw StorageError(
                .schemaMismatch,
                "a record has \(values.count) values for \(fields.count) columns",
                collection: name
            )
        }
        var key = values[keyPosition]
        if collection.hasAutoKey, key.isNull {
            key = .integer(try transaction.nextKey(name))
        } else if key.isNull {
            throw StorageError(.invalidKey, "a record's primary key is null", collection: name, key: key)
        }
        if collection.keyType == .integer {
            // As SQLite's INTEGER PRIMARY KEY: only integers.
            guard case .integer(let number) = key else {
                throw StorageError(
                    .invalidKey,
                    "the primary key must be an integer, got \(key)",
                    collection: name,
                    key: key
                )
            }
            if collection.hasAutoKey { try transaction.noteKey(number, in: name) }
        }
        let keyBytes = LMDBKeyCoding.encode(key)
        guard keyBytes.count <= transaction.environment.maximumKeySize else {
            throw StorageError(
                .invalidKey,
                "the primary key takes \(keyBytes.count) bytes; LMDB keys hold at most"
                    + " \(transaction.environment.maximumKeySize)",
                collection: name,
                column: collection.primaryKey,
                key: key
            )
        }

        // Written to raw memory sized for the largest encoding, then trimmed: one allocation
        // rather than a capacity and uniqueness check per byte appended.
        var capacity = 1
        for (position, value) in values.enumerated() {
            capacity += LMDBRecordCoding.maximumFieldSize(position == keyPosition ? key : value)
        }
        var buffer = [UInt8](unsafeUninitializedCapacity: capacity) { out, count in
            let base = UnsafeMutableRawPointer(out.baseAddress!)
            base.storeBytes(of: LMDBRecordCoding.formatVersion, as: UInt8.self)
            var offset = 1
            for (position, field) in fields.enumerated() {
                let value = position == keyPosition ? key : values[position]
                offset += LMDBRecordCoding.writeField(field, value, to: base + offset)
            }
            count = offset
        }
        if indexes.isEmpty {
            return try putWithoutIndexes(key: key, keyBytes: keyBytes, buffer: &buffer)
        }

        // Everything that needs the stored record is done before the first write, which may move
        // its mapped bytes.
        var entries: [(new: [UInt8], old: [UInt8]?, prefixLength: Int, hasNull: Bool)] = []
        entries.reserveCapacity(indexes.count)
        try transaction.read(records, key: keyBytes, collection: name) { stored in
            if let stored {
                guard storedRow.load(stored) else { throw transaction.damaged(name) }
                let written = self.written
                _ = LMDBRecordCoding.forEachField(in: stored) { field, start, _, end in
                    if field >= written.count || !written[field] {
                        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: stored[start..<end]))
                    }
                }
            }
            for index in indexes {
                var entry: [UInt8] = []
                var hasNull = false
                for (position, field) in zip(index.positions, index.fields) {
                    let value =
                        position >= 0
                        ? (position == keyPosition ? key : values[position])
                        : (stored == nil ? .null : storedRow.value(field: field))
                    hasNull = hasNull || value.isNull
                    LMDBKeyCoding.append(value, to: &entry)
                }
                let prefixLength = entry.count
                entry.append(contentsOf: keyBytes)
                var old: [UInt8]?
                if stored != nil {
                    var previous: [UInt8] = []
                    for field in index.fields { LMDBKeyCoding.append(storedRow.value(field: field), to: &previous) }
                    previous.append(contentsOf: keyBytes)
                    old = previous
                }
                entries.append((entry, old, prefixLength, hasNull))
            }
        }
        for (index, entry) in zip(indexes, entries) where entry.new != entry.old {
            try transaction.checkIndexEntrySize(entry.new, index.index, name)
            if index.index.isUnique && !entry.hasNull {
                try transaction.checkUnique(
                    index.dbi,
                    index.index,
                    entry.new,
                    prefixLength: entry.prefixLength,
                    collection: name
                )
            }
        }
        do {
            for (index, entry) in zip(indexes, entries) where entry.new != entry.old {
                if let old = entry.old { try transaction.remove(index.dbi, key: old, collection: name) }
                try transaction.put(index.dbi, key: entry.new, value: [], collection: name)
            }
            try transaction.put(records, key: keyBytes, value: buffer, collection: name)
        } catch var error as StorageError {
            error.key = key
            throw error
        }
        return key
    }

    /// Writes a record of a collection without indexes: a new key takes one `mdb_put`; a stored
    /// record (which that put reports and leaves alone) gets the fields the writer does not name
    /// appended, then is replaced.
    private func putWithoutIndexes(key: StorageValue, keyBytes: [UInt8], buffer: inout [UInt8]) throws -> StorageValue {
        let name = collection.name
        do {
            guard let stored = try transaction.putIfAbsent(records, key: keyBytes, value: buffer, collection: name)
            else { return key }
            guard storedRow.load(stored) else { throw transaction.damaged(name) }
            let written = self.written
            var kept: [UInt8] = []
            _ = LMDBRecordCoding.forEachField(in: stored) { field, start, _, end in
                if field >= written.count || !written[field] {
                    kept.append(contentsOf: UnsafeRawBufferPointer(rebasing: stored[start..<end]))
                }
            }
            buffer.append(contentsOf: kept)
            try transaction.put(records, key: keyBytes, value: buffer, collection: name)
        } catch var error as StorageError {
            error.key = key
            throw error
        }
        return key
    }
}
