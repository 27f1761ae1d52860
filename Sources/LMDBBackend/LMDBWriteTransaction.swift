internal import CLMDB
import Foundation
import Storage

/// A write transaction. It remembers a full map (`MDB_MAP_FULL`) even when the closure catches
/// the error, so the backend can grow the map and run the closure again.
final class LMDBWriteTransaction: LMDBReadTransaction, BackendWriteTransaction {
    /// Set when an LMDB call failed because the map is full.
    private(set) var mapIsFull = false
    /// Handles opened by this transaction, published when it commits.
    private(set) var openedHandles: [String: MDB_dbi] = [:]
    /// Whether this transaction holds the environment's handle lock (until it ends).
    private(set) var holdsHandleLock = false
    /// Whether this transaction created databases (the catalog generation moves on commit).
    private(set) var newGeneration: UInt64?
    /// Auto-increment counters read or moved by this transaction, by folded collection name.
    private var counters: [String: Int64] = [:]
    /// This transaction's id (`mdb_txn_id`: the snapshot it commits), when a look-up of the
    /// registry of full-text indexes found none (see `LMDBEnvironment.noteSearchRegistryAbsent(in:)`).
    private var foundNoSearchRegistry: Int?
    /// The writers of the native full-text indexes this transaction wrote, by folded collection
    /// name (`LMDBFullTextWriter`): their pending postings are written before the commit.
    var fullTextWriters: [String: LMDBFullTextWriter] = [:]

    /// The store asks at every write whether it keeps a full-text index (`_search_indexes`, a
    /// small string, compared at once): a transaction based on a snapshot known to hold none
    /// answers so without reading the catalog, unless it made the registry itself.
    override func info(of collection: String) throws -> LMDBCollectionInfo? {
        guard collection == SearchIndexKeys.indexes else { return try super.info(of: collection) }
        let id = Int(bitPattern: UInt(mdb_txn_id(txn)))
        if collections[collection] == nil, environment.isSearchRegistryAbsent(in: id - 1) {
            foundNoSearchRegistry = id
            return nil
        }
        let found = try super.info(of: collection)
        if found == nil { foundNoSearchRegistry = id }
        return found
    }

    /// After the commit: the snapshot it made holds no registry of full-text indexes when this
    /// transaction found none and left none.
    func noteCommitted() {
        guard let id = foundNoSearchRegistry, collections[SearchIndexKeys.indexes] == nil else { return }
        environment.noteSearchRegistryAbsent(in: id)
    }

    // MARK: Sizing the map for a batch

    /// The map size and the bytes in use when the transaction began.
    private var mapAtBegin: (size: Int, used: Int) = (0, 0)
    /// Bytes of keys and values put by this transaction, plus LMDB's node overhead per put.
    private var bytesPut = 0
    /// Records put through this transaction's record writers.
    private var recordsPut = 0
    /// How many records the transaction expects in all (`expectRecords`); 0 when unknown.
    private var recordsExpected = 0
    /// After how many records the map is checked against the expected batch; nil once checked.
    private var sizeCheckAt: Int?
    /// The map size this transaction would need, when it ended for want of room and knew it.
    private(set) var neededMapSize: Int?

    /// How many records are put before the map size is checked against the batch: enough to
    /// measure the bytes a record takes, few enough that redoing them costs nothing noticeable.
    static let sizeSample = 256
    /// LMDB's per-node overhead on a leaf page (the node header and its slot), rounded up.
    static let nodeOverhead = 16

    /// Records the map's size and use at the start, for the estimates.
    func noteMapAtBegin(size: Int, used: Int) {
        mapAtBegin = (size, used)
    }

    /// Notes that about `count` more records are coming (`RecordWriter.expectRecords`); the map
    /// is checked against them after `sizeSample` of them. A batch no larger than the sample is
    /// left to `MDB_MAP_FULL`: replaying it costs no more than the check would save.
    func expectRecords(_ count: Int) {
        guard count > Self.sizeSample else { return }
        recordsExpected = recordsPut + count
        sizeCheckAt = recordsPut + Self.sizeSample
    }

    /// The map size that holds what was committed before plus `records` records at `perRecord`
    /// bytes each, with room for B-tree pages half full and for the branch pages.
    private func mapSize(for records: Int, perRecord: Double) -> Int {
        let projected = perRecord * Double(records) * 2
        guard projected.isFinite, projected < Double(Int.max / 4) else { return Int.max / 4 }
        return mapAtBegin.used + Int(projected)
    }

    /// Counts a record put by a record writer and, at the sample point, ends the transaction
    /// early (as a full map does) when the expected batch will not fit: the backend then grows
    /// the map to `neededMapSize` and runs the transaction again, redoing `sizeSample` records
    /// rather than everything written up to the moment the map filled.
    /// - Throws: `StorageError.Code.io` with `mapIsFull` set when the map must grow first.
    func noteRecordPut() throws {
        recordsPut += 1
        guard let checkAt = sizeCheckAt, recordsPut >= checkAt else { return }
        sizeCheckAt = nil
        let perRecord = Double(bytesPut + fullTextPendingBytes) / Double(recordsPut)
        let needed = mapSize(for: recordsExpected, perRecord: perRecord)
        guard needed > mapAtBegin.size else { return }
        mapIsFull = true
        neededMapSize = needed
        throw StorageError(
            .io,
            "the map (\(mapAtBegin.size) bytes) is too small for the \(recordsExpected) records expected",
            path: environment.path
        )
    }

    /// The bytes the full-text postings held in memory will take at their flush (counted in
    /// `bytesPut` only then).
    private var fullTextPendingBytes: Int {
        var total = 0
        for writer in fullTextWriters.values { total += writer.pendingBytes }
        return total
    }

    /// After `MDB_MAP_FULL`: the map size the whole expected batch needs at the rate the records
    /// so far filled the map, or nil when the batch's size is not known.
    func mapSizeAfterFilling() -> Int? {
        if let neededMapSize { return neededMapSize }
        guard recordsPut > 0, recordsExpected > recordsPut else { return nil }
        let perRecord =
            Double(max(mapAtBegin.size - mapAtBegin.used, bytesPut + fullTextPendingBytes)) / Double(recordsPut)
        // Measured on a full map, so pages are as full as they get: no further factor of 2.
        return mapSize(for: recordsExpected, perRecord: perRecord * 0.75)
    }

    override func check(_ rc: Int32, _ context: @autoclosure () -> String, collection: String? = nil) throws {
        guard LMDBResultCode(rc) != .success else { return }
        if LMDBResultCode(rc) == .mapFull { mapIsFull = true }
        throw StorageError.lmdb(rc, context(), collection: collection, path: environment.path)
    }

    override func handle(_ name: String, collection: String) throws -> MDB_dbi {
        if let dbi = openedHandles[name] { return dbi }
        return try super.handle(name, collection: collection)
    }

    /// Releases the handle lock; called once the transaction has ended.
    func releaseHandleLock() {
        if holdsHandleLock {
            holdsHandleLock = false
            environment.handleLock.unlock()
        }
    }

    /// Creates a named database in this transaction.
    func createDatabase(_ name: String, collection: String) throws -> MDB_dbi {
        if !holdsHandleLock {
            environment.handleLock.lock()
            holdsHandleLock = true
        }
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, name, UInt32(MDB_CREATE), &dbi)
        if LMDBResultCode(rc) == .databasesFull {
            throw StorageError(
                .limitExceeded,
                "the store has room for \(environment.configuration.maximumDatabases) named databases (one per"
                    + " collection, one per index, one for the catalog) and all are taken: open it with a larger"
                    + " LMDBStorageBackend.Configuration.maximumDatabases",
                collection: collection,
                path: environment.path
            )
        }
        try check(rc, "cannot create a database", collection: collection)
        openedHandles[name] = dbi
        if newGeneration == nil {
            let generation = try LMDBEnvironment.readGeneration(txn, environment.metadata, path: environment.path) + 1
            var bytes: [UInt8] = []
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: generation >> UInt64(shift)))
            }
            try put(environment.metadata, key: LMDBEnvironment.generationKey, value: bytes, collection: collection)
            newGeneration = generation
        }
        return dbi
    }

    /// LMDB's largest value (`MAXDATASIZE` in mdb.c, which `mdb_put` refuses with a bare `EINVAL`).
    static let maximumValueSize = 0xFFFF_FFFF

    /// Refuses a record LMDB could not store, naming the limit.
    private func checkValueSize(_ value: [UInt8], collection: String) throws {
        try checkValueSize(count: value.count, collection: collection)
    }

    private func checkValueSize(count: Int, collection: String) throws {
        guard count <= Self.maximumValueSize else {
            throw StorageError(
                .limitExceeded,
                "a record takes \(count) bytes; LMDB stores at most \(Self.maximumValueSize) bytes a record",
                collection: collection,
                path: environment.path
            )
        }
    }

    /// Writes `value` under `key`, from raw memory (see `put(_:key:value:collection:)`).
    func put(_ dbi: MDB_dbi, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, collection: String) throws {
        try checkValueSize(count: value.count, collection: collection)
        bytesPut += key.count + value.count + Self.nodeOverhead
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var dataValue = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        try check(mdb_put(txn, dbi, &keyValue, &dataValue, 0), "cannot write a record", collection: collection)
    }

    func put(_ dbi: MDB_dbi, key: [UInt8], value: [UInt8], collection: String) throws {
        try checkValueSize(value, collection: collection)
        bytesPut += key.count + value.count + Self.nodeOverhead
        let rc = key.withUnsafeBytes { keyBytes in
            value.withUnsafeBytes { valueBytes in
                var keyValue = MDB_val(
                    mv_size: keyBytes.count,
                    mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress)
                )
                var dataValue = MDB_val(
                    mv_size: valueBytes.count,
                    mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress)
                )
                return mdb_put(txn, dbi, &keyValue, &dataValue, 0)
            }
        }
        try check(rc, "cannot write a record", collection: collection)
    }

    /// Writes `value` under `key` only when the key is absent (`MDB_NOOVERWRITE`): one B-tree
    /// descent for a new key, where a look-up followed by a put takes two.
    /// - Returns: `nil` when the value was written; otherwise the stored value, which was left
    ///   as it was (the map's own bytes, valid until the next write).
    func putIfAbsent(
        _ dbi: MDB_dbi,
        key: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer,
        collection: String
    ) throws -> UnsafeRawBufferPointer? {
        try checkValueSize(count: value.count, collection: collection)
        bytesPut += key.count + value.count + Self.nodeOverhead
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var dataValue = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_put(txn, dbi, &keyValue, &dataValue, UInt32(MDB_NOOVERWRITE))
        if LMDBResultCode(rc) == .keyExists {
            return UnsafeRawBufferPointer(start: dataValue.mv_data, count: dataValue.mv_size)
        }
        try check(rc, "cannot write a record", collection: collection)
        return nil
    }

    /// Deletes `key`; a missing key is not an error.
    func remove(_ dbi: MDB_dbi, key: [UInt8], collection: String) throws {
        let rc = key.withUnsafeBytes { keyBytes in
            var keyValue = MDB_val(
                mv_size: keyBytes.count,
                mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress)
            )
            return mdb_del(txn, dbi, &keyValue, nil)
        }
        if LMDBResultCode(rc) != .notFound { try check(rc, "cannot delete a record", collection: collection) }
    }

    // MARK: Catalog

    func save(_ collection: LMDBCollection) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let bytes = [UInt8](try encoder.encode(collection))
        try put(
            environment.metadata,
            key: LMDBCollection.metadataKey(collection.name),
            value: bytes,
            collection: collection.name
        )
        collections[Identifier.folded(collection.name)] = LMDBCollectionInfo(collection)
    }

    /// The next auto-assigned key of a collection: one more than any key it ever held.
    func nextKey(_ collection: String) throws -> Int64 {
        let current = try counter(collection)
        guard current < Int64.max else {
            throw StorageError(.valueOutOfRange, "the auto-assigned keys are exhausted", collection: collection)
        }
        counters[Identifier.folded(collection)] = current + 1
        return current + 1
    }

    override func nextAutoKey(in collection: String) throws -> Int64? {
        try checkActive()
        return try counter(collection) + 1
    }

    func raiseNextAutoKey(in collection: String, to key: Int64) throws {
        try checkActive()
        try noteKey(key - 1, in: collection)
    }

    /// Notes an explicitly given key, so auto-assigned keys stay above it.
    func noteKey(_ key: Int64, in collection: String) throws {
        if key > (try counter(collection)) { counters[Identifier.folded(collection)] = key }
    }

    private func counter(_ collection: String) throws -> Int64 {
        let folded = Identifier.folded(collection)
        if let known = counters[folded] { return known }
        let value = try read(environment.metadata, key: LMDBCollection.counterKey(collection), collection: collection) {
            bytes -> Int64 in
            guard let bytes else { return 0 }
            guard bytes.count == 8 else { throw damaged(collection) }
            return bytes.reduce(0) { $0 << 8 | Int64($1) }
        }
        counters[folded] = value
        return value
    }

    /// Writes the counters moved by this transaction; called just before commit.
    func flushCounters() throws {
        for (folded, value) in counters {
            var bytes: [UInt8] = []
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> Int64(shift)))
            }
            try put(environment.metadata, key: LMDBCollection.counterKey(folded), value: bytes, collection: folded)
        }
    }

    // MARK: BackendWriteTransaction

    func prepareCollection(_ schema: CollectionSchema) throws -> CollectionSchema {
        try checkActive()
        try schema.validateShape()
        guard let existing = try info(of: schema.name) else {
            let collection = LMDBCollection(creating: schema)
            _ = try createDatabase(collection.database, collection: schema.name)
            for index in collection.indexes { _ = try createDatabase(index.database, collection: schema.name) }
            try save(collection)
            return collection.schema
        }
        let stored = existing.schema
        guard stored.primaryKey == schema.primaryKey else {
            throw StorageError(
                .schemaMismatch,
                "the collection's primary key is \(Identifier.quoted(stored.primaryKey)),"
                    + " not \(Identifier.quoted(schema.primaryKey))",
                collection: schema.name,
                column: schema.primaryKey
            )
        }
        var target = stored.merged(with: schema)
        // A key column keeps its type: changing it would change the identity of records.
        if let keyIndex = target.columnIndex(named: target.primaryKey), let storedKey = stored.primaryKeyColumn {
            target.columns[keyIndex].type = storedKey.type
        }
        if target == stored { return stored }
        try target.validateShape()
        var collection = existing.collection
        var retyped: [(field: Int, type: ColumnType)] = []
        for column in target.columns {
            if let position = collection.fields.firstIndex(where: { $0.name == column.name }) {
                if collection.fields[position].type != column.type.rawValue {
                    collection.fields[position].type = column.type.rawValue
                    retyped.append((collection.fields[position].id, column.type))
                }
            } else {
                collection.fields.append(
                    .init(
                        name: column.name,
                        type: column.type.rawValue,
                        isNullable: column.isNullable,
                        id: collection.nextFieldID
                    )
                )
                collection.nextFieldID += 1
            }
        }
        if !retyped.isEmpty { try convert(collection, retyped) }
        for definition in target.indexes where !stored.indexes.contains(definition) {
            let index = collection.addIndex(definition)
            let dbi = try createDatabase(index.database, collection: collection.name)
            try fill(index, dbi, of: collection)
        }
        try save(collection)
        return collection.schema
    }

    /// Rewrites the records whose retyped fields hold values the new type converts, as SQLite's
    /// rebuild of a retyped table does.
    private func convert(_ collection: LMDBCollection, _ retyped: [(field: Int, type: ColumnType)]) throws {
        let records = try handle(collection.database, collection: collection.name)
        let row = LMDBRow(requested: [], fieldCount: collection.nextFieldID)
        var rewrites: [(key: [UInt8], record: [UInt8])] = []
        try forEachEntry(records, from: nil, through: nil, collection: collection.name) { key, record in
            guard row.load(record) else { throw damaged(collection.name) }
            var changed = false
            var fields: [(Int, StorageValue)] = []
            _ = LMDBRecordCoding.forEachField(in: record) { field, _, tagOffset, _ in
                var value = LMDBRecordCoding.value(in: record, tagOffset: tagOffset)
                if let type = retyped.first(where: { $0.field == field })?.type {
                    let converted = value.applyingAffinity(type)
                    if converted != value {
                        changed = true
                        value = converted
                    }
                }
                fields.append((field, value))
            }
            if changed {
                var bytes = [LMDBRecordCoding.formatVersion]
                for (field, value) in fields { LMDBRecordCoding.appendField(field, value, to: &bytes) }
                rewrites.append(([UInt8](key), bytes))
            }
            return true
        }
        for rewrite in rewrites {
            try put(records, key: rewrite.key, value: rewrite.record, collection: collection.name)
        }
    }

    /// Adds an entry for every record to a new index, enforcing its uniqueness.
    private func fill(_ index: LMDBCollection.Index, _ dbi: MDB_dbi, of collection: LMDBCollection) throws {
        let records = try handle(collection.database, collection: collection.name)
        let row = LMDBRow(requested: [], fieldCount: collection.nextFieldID)
        let fields = index.columns.map { column in collection.fieldID(named: column) ?? -1 }
        var entries: [(entry: [UInt8], prefixLength: Int, hasNull: Bool)] = []
        try forEachEntry(records, from: nil, through: nil, collection: collection.name) { key, record in
            guard row.load(record) else { throw damaged(collection.name) }
            var entry: [UInt8] = []
            var hasNull = false
            for field in fields {
                let value = row.value(field: field)
                hasNull = hasNull || value.isNull
                LMDBKeyCoding.append(value, to: &entry)
            }
            let prefixLength = entry.count
            entry.append(contentsOf: key)
            entries.append((entry, prefixLength, hasNull))
            return true
        }
        for (entry, prefixLength, hasNull) in entries {
            try checkIndexEntrySize(entry, index, collection.name)
            if index.isUnique && !hasNull {
                try checkUnique(dbi, index, entry, prefixLength: prefixLength, collection: collection.name)
            }
            try put(dbi, key: entry, value: [], collection: collection.name)
        }
    }

    func checkIndexEntrySize(_ entry: [UInt8], _ index: LMDBCollection.Index, _ collection: String) throws {
        guard entry.count <= environment.maximumKeySize else {
            throw StorageError(
                .invalidKey,
                "the values of indexed columns (\(index.columns.joined(separator: ", "))) and the primary key take"
                    + " \(entry.count) bytes in an index entry; LMDB keys hold at most \(environment.maximumKeySize)",
                collection: collection,
                column: index.columns.first
            )
        }
    }

    /// Throws when another record than the entry's own has the same indexed values.
    func checkUnique(
        _ dbi: MDB_dbi,
        _ index: LMDBCollection.Index,
        _ entry: [UInt8],
        prefixLength: Int,
        collection: String
    ) throws {
        let prefix = Array(entry[..<prefixLength])
        var conflict = false
        try forEachEntry(dbi, from: prefix, through: prefix, collection: collection) { found, _ in
            if found.count != entry.count || !entry.withUnsafeBytes({ LMDBKeyCoding.compare(found, $0) == 0 }) {
                conflict = true
                return false
            }
            return true
        }
        if conflict {
            throw StorageError(
                .constraintViolation,
                "another record has the same values in the unique index on"
                    + " \(index.columns.joined(separator: ", "))",
                collection: collection,
                column: index.columns.first
            )
        }
    }

    func makeWriter(for collection: String, columns: [String]) throws -> any RecordWriter {
        try checkActive()
        guard let info = try info(of: collection) else {
            throw StorageError(.schemaMismatch, "the collection has not been prepared", collection: collection)
        }
        return try LMDBRecordWriter(transaction: self, info: info, columns: columns)
    }

    func delete(from collection: String, key: StorageValue) throws -> Bool {
        try checkActive()
        guard let info = try info(of: collection), !key.isNull else { return false }
        let keyBytes = LMDBKeyCoding.encode(key)
        guard keyBytes.count <= environment.maximumKeySize else { return false }
        return try deleteRecord(keyBytes, info)
    }

    /// Deletes a record and its index entries.
    /// - Returns: whether there was such a record.
    func deleteRecord(_ key: [UInt8], _ info: LMDBCollectionInfo) throws -> Bool {
        let collection = info.collection
        let records = try handle(collection.database, collection: collection.name)
        let row = LMDBRow(requested: [], fieldCount: collection.nextFieldID)
        // Index entries are computed before anything changes: the mapped bytes of the record
        // may move with the first write.
        let entries: [[UInt8]]? = try read(records, key: key, collection: collection.name) { record in
            guard let record else { return nil }
            guard row.load(record) else { throw damaged(collection.name) }
            return collection.indexes.map { index in
                var entry: [UInt8] = []
                for column in index.columns {
                    LMDBKeyCoding.append(row.value(field: collection.fieldID(named: column) ?? -1), to: &entry)
                }
                return entry + key
            }
        }
        guard let entries else { return false }
        for (index, entry) in zip(collection.indexes, entries) {
            try remove(try handle(index.database, collection: collection.name), key: entry, collection: collection.name)
        }
        try remove(records, key: key, collection: collection.name)
        return true
    }

    func dropCollection(_ collection: String) throws {
        try checkActive()
        guard let info = try info(of: collection) else { return }
        let stored = info.collection
        // The named databases are emptied, not deleted: deleting one closes its handle, which
        // other transactions of the process share. A collection created again with the same
        // name opens them again.
        for database in [stored.database] + stored.indexes.map(\.database) {
            let dbi = try handle(database, collection: stored.name)
            try check(mdb_drop(txn, dbi, 0), "cannot empty a database", collection: stored.name)
        }
        try remove(environment.metadata, key: LMDBCollection.metadataKey(stored.name), collection: stored.name)
        try remove(environment.metadata, key: LMDBCollection.counterKey(stored.name), collection: stored.name)
        let folded = Identifier.folded(stored.name)
        counters[folded] = nil
        collections[folded] = nil
    }

    func deleteAll(from collection: String, where predicate: StoragePredicate?) throws -> [StorageValue] {
        try checkActive()
        guard let info = try info(of: collection) else { return [] }
        let row = LMDBRow(requested: [], fieldCount: info.collection.nextFieldID)
        let lookup: (Int) -> StorageValue = { row.value(field: $0) }
        let prepared = info.bind(predicate)
        var doomed: [(key: [UInt8], value: StorageValue)] = []
        try forEachCandidate(info, LMDBQueryPlan(predicate, info)) { key, record in
            guard row.load(record) else { throw damaged(collection) }
            if prepared.matches(lookup) {
                doomed.append(([UInt8](key), row.value(field: info.collection.keyField)))
            }
            return true
        }
        doomed.sort { $0.key.lexicographicallyPrecedes($1.key) }
        for record in doomed { _ = try deleteRecord(record.key, info) }
        return doomed.map(\.value)
    }
}
