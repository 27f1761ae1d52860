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
    /// The collection's key type and whether it assigns keys, read once: each is a search of
    /// its fields by name, too dear for every record.
    private let keyType: ColumnType
    private let hasAutoKey: Bool
    private let maximumKeySize: Int
    /// The record being encoded, in memory kept from record to record, not an array allocated and
    /// freed per record (scripts/count-check.py holds a save's allocations). Behind a pointer: a stored
    /// `var` of the class would cost an exclusivity check per access.
    private let scratch: UnsafeMutablePointer<(bytes: UnsafeMutableRawPointer, capacity: Int)>

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
        keyType = collection.keyType
        hasAutoKey = collection.hasAutoKey
        maximumKeySize = transaction.environment.maximumKeySize
        scratch = .allocate(capacity: 1)
        scratch.initialize(to: (.allocate(byteCount: 256, alignment: 8), 256))
    }

    deinit {
        scratch.pointee.bytes.deallocate()
        scratch.deallocate()
    }

    /// The scratch memory, grown to hold at least `count` bytes.
    private func scratchBytes(_ count: Int) -> UnsafeMutableRawPointer {
        if scratch.pointee.capacity < count {
            let capacity = max(count, scratch.pointee.capacity * 2)
            scratch.pointee.bytes.deallocate()
            scratch.pointee = (.allocate(byteCount: capacity, alignment: 8), capacity)
        }
        return scratch.pointee.bytes
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
        if hasAutoKey, key.isNull {
            key = .integer(try transaction.nextKey(name))
        } else if key.isNull {
            throw StorageError(.invalidKey, "a record's primary key is null", collection: name, key: key)
        }
        if keyType == .integer {
            // As SQLite's INTEGER PRIMARY KEY: only integers.
            guard case .integer(let number) = key else {
                throw StorageError(
                    .invalidKey,
                    "the primary key must be an integer, got \(key)",
                    collection: name,
                    key: key
                )
            }
            if hasAutoKey { try transaction.noteKey(number, in: name) }
        }

        // Written to raw memory sized for the largest encoding, kept from record to record: no
        // allocation, and no capacity and uniqueness check per byte appended.
        // Each value is passed where it lies: a `position == keyPosition ? key : value` would
        // copy it (a retain and a release for text and blobs).
        var capacity = 1
        for position in values.indices {
            capacity +=
                position == keyPosition
                ? LMDBRecordCoding.maximumFieldSize(key) : LMDBRecordCoding.maximumFieldSize(values[position])
        }
        let base = scratchBytes(capacity)
        base.storeBytes(of: LMDBRecordCoding.formatVersion, as: UInt8.self)
        var length = 1
        for (position, field) in fields.enumerated() {
            length +=
                position == keyPosition
                ? LMDBRecordCoding.writeField(field, key, to: base + length)
                : LMDBRecordCoding.writeField(field, values[position], to: base + length)
        }
        let record = UnsafeRawBufferPointer(start: base, count: length)
        if indexes.isEmpty {
            // An integer key's bytes on the stack: no array allocated and freed per record.
            if case .integer(let number) = key {
                return try LMDBKeyCoding.withInteger(number) { keyBytes in
                    try putWithoutIndexes(key: key, keyBytes: keyBytes, record: record)
                }
            }
            return try LMDBKeyCoding.encode(key).withUnsafeBytes { keyBytes in
                try putWithoutIndexes(key: key, keyBytes: keyBytes, record: record)
            }
        }
        let keyBytes = try checkedKeyBytes(key)
        var buffer = [UInt8](record)

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
    private func putWithoutIndexes(
        key: StorageValue,
        keyBytes: UnsafeRawBufferPointer,
        record: UnsafeRawBufferPointer
    ) throws -> StorageValue {
        let name = collection.name
        guard keyBytes.count <= maximumKeySize else { throw keyTooLong(key, keyBytes.count) }
        do {
            guard let stored = try transaction.putIfAbsent(records, key: keyBytes, value: record, collection: name)
            else { return key }
            var buffer = [UInt8](record)
            guard storedRow.load(stored) else { throw transaction.damaged(name) }
            let written = self.written
            var kept: [UInt8] = []
            _ = LMDBRecordCoding.forEachField(in: stored) { field, start, _, end in
                if field >= written.count || !written[field] {
                    kept.append(contentsOf: UnsafeRawBufferPointer(rebasing: stored[start..<end]))
                }
            }
            buffer.append(contentsOf: kept)
            try buffer.withUnsafeBytes { bytes in
                try transaction.put(records, key: keyBytes, value: bytes, collection: name)
            }
        } catch var error as StorageError {
            error.key = key
            throw error
        }
        return key
    }

    /// The bytes of `key`, checked against LMDB's key size limit.
    private func checkedKeyBytes(_ key: StorageValue) throws -> [UInt8] {
        let keyBytes = LMDBKeyCoding.encode(key)
        guard keyBytes.count <= maximumKeySize else { throw keyTooLong(key, keyBytes.count) }
        return keyBytes
    }

    private func keyTooLong(_ key: StorageValue, _ count: Int) -> StorageError {
        StorageError(
            .invalidKey,
            "the primary key takes \(count) bytes; LMDB keys hold at most \(maximumKeySize)",
            collection: collection.name,
            column: collection.primaryKey,
            key: key
        )
    }
}
