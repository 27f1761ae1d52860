internal import CLMDB
import Foundation
import Storage

/// A read transaction over one LMDB snapshot. Valid only inside the closure it was passed to;
/// every value handed out is copied out of the map before the closure returns.
class LMDBReadTransaction: BackendReadTransaction {
    let environment: LMDBEnvironment
    let txn: OpaquePointer
    /// Cleared when the closure returns; a transaction used after that throws `.misuse`.
    private(set) var isActive = true
    /// Collections this transaction has looked up (or changed), by folded name.
    var collections: [String: LMDBCollectionInfo] = [:] {
        didSet { lastInfo = nil }
    }
    /// The collection last looked up, by the name it was asked for: a `fetch(_:id:)` asks for
    /// the same collection twice, and folding and hashing its name again was a tenth of it.
    private var lastInfo: (name: String, info: LMDBCollectionInfo)?

    /// The id of the committed snapshot a read-only transaction reads (`mdb_txn_id`); `nil` for
    /// a write transaction. See `LMDBEnvironment.SnapshotMemo`.
    private(set) var snapshot: Int?
    /// Whether the handles are known to be complete for the catalog of `snapshot` (see
    /// `LMDBStorageBackend.beginCurrentRead`).
    var isCheckedSnapshot = false
    /// The last key look-up's collection, columns, records database and field ids, with a row to
    /// read into (taken while a look-up uses it): all a function of the snapshot, so a renewed
    /// transaction of the same snapshot finds them again. Read-only transactions only.
    /// (An object with constant fields: a tuple here was copied whole, three references retained
    /// and released, at every look-up's check.)
    private var lastGet: LastGet? {
        didSet { lastGetGeneration &+= 1 }
    }
    /// Moves on whenever `lastGet` is set: a look-up gives its row back for the next one only
    /// while `lastGet` is still the one it read with (a look-up inside its decode may have
    /// replaced it). Comparing `lastGet` itself would copy it (three references retained and
    /// released) on every look-up.
    private var lastGetGeneration = 0
    private var spareRow: LMDBRow?

    /// A transaction over `txn`; a read-only one (`readOnly`) reads the snapshot `txn` has now.
    init(environment: LMDBEnvironment, txn: OpaquePointer, readOnly: Bool = false) {
        self.environment = environment
        self.txn = txn
        self.snapshot = readOnly ? Int(bitPattern: UInt(mdb_txn_id(txn))) : nil
    }

    func invalidate() {
        isActive = false
    }

    /// Makes a kept read-only transaction usable again after `mdb_txn_renew`: what it found in its
    /// last snapshot is kept when the renewed one is the same (no commit since, by any process),
    /// and forgotten otherwise.
    func renewed() {
        let now = Int(bitPattern: UInt(mdb_txn_id(txn)))
        if now != snapshot {
            snapshot = now
            isCheckedSnapshot = false
            if !collections.isEmpty { collections = [:] }
            lastInfo = nil
            lastGet = nil
            spareRow = nil
        }
        isActive = true
    }

    func checkActive() throws {
        guard isActive else {
            throw StorageError(.misuse, "a transaction was used outside the closure it was passed to")
        }
    }

    /// Turns an LMDB return code into an error. The write transaction also remembers a full map.
    func check(_ rc: Int32, _ context: @autoclosure () -> String, collection: String? = nil) throws {
        guard LMDBResultCode(rc) != .success else { return }
        throw StorageError.lmdb(rc, context(), collection: collection, path: environment.path)
    }

    // MARK: Catalog

    /// The metadata entry of a collection as this transaction sees it.
    func info(of collection: String) throws -> LMDBCollectionInfo? {
        if let lastInfo, lastInfo.name == collection { return lastInfo.info }
        if let snapshot, let memoized = environment.memoizedInfo(collection, snapshot: snapshot) {
            if let memoized { lastInfo = (collection, memoized) }
            return memoized
        }
        let folded = Identifier.folded(collection)
        if let known = collections[folded] {
            lastInfo = (collection, known)
            return known
        }
        let key = LMDBCollection.metadataKey(folded)
        let found = try read(environment.metadata, key: key, collection: collection) { bytes -> LMDBCollectionInfo? in
            guard let bytes else { return nil }
            if let cached = environment.collectionCache.withLock({ $0[folded] }), cached.bytes.count == bytes.count,
                cached.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 })
            {
                return cached.info
            }
            let copy = [UInt8](bytes)
            let decoded: LMDBCollection
            do {
                decoded = try JSONDecoder().decode(LMDBCollection.self, from: Data(copy))
            } catch {
                throw StorageError(
                    .corrupt,
                    "the stored schema of the collection is damaged: \(error)",
                    collection: collection,
                    path: environment.path
                )
            }
            let info = LMDBCollectionInfo(decoded)
            environment.collectionCache.withLock { $0[folded] = (copy, info) }
            return info
        }
        if let snapshot { environment.memoize(found, for: collection, snapshot: snapshot) }
        if let found {
            collections[folded] = found
            lastInfo = (collection, found)
        }
        return found
    }

    /// The handle of a named database of this transaction.
    func handle(_ name: String, collection: String) throws -> MDB_dbi {
        guard let dbi = environment.handle(name) else {
            throw StorageError(
                .corrupt,
                "the database '\(name)' of the collection is missing",
                collection: collection,
                path: environment.path
            )
        }
        return dbi
    }

    // MARK: Low-level access

    /// Calls `body` with the value stored under `key`, or `nil`. The bytes are the map's own:
    /// valid only during the call.
    func read<R>(
        _ dbi: MDB_dbi,
        key: [UInt8],
        collection: String?,
        _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        try key.withUnsafeBytes { key in try read(dbi, key: key, collection: collection, body) }
    }

    /// `read(_:key:collection:_:)` with the key's bytes in memory.
    func read<R>(
        _ dbi: MDB_dbi,
        key: UnsafeRawBufferPointer,
        collection: String?,
        _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        var data = MDB_val()
        var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_get(txn, dbi, &keyValue, &data)
        if LMDBResultCode(rc) == .notFound { return try body(nil) }
        try check(rc, "cannot read a record", collection: collection)
        return try body(UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
    }

    /// Calls `body` with each entry of `dbi` from the first key at or above `lower` until a key
    /// past `upper` (see `LMDBKeyCoding.isPast`), until it returns `false`.
    func forEachEntry(
        _ dbi: MDB_dbi,
        from lower: [UInt8]?,
        through upper: [UInt8]?,
        collection: String,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &cursor), "cannot open a cursor", collection: collection)
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var data = MDB_val()
        var rc: Int32
        if var lower {
            // A prefix of a key sorts before it, so a bound longer than LMDB allows is cut.
            if lower.count > environment.maximumKeySize { lower = Array(lower.prefix(environment.maximumKeySize)) }
            rc = lower.withUnsafeBytes { bytes in
                key = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                return mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
            }
        } else {
            rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
        }
        while LMDBResultCode(rc) == .success {
            let keyBytes = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            if let upper, LMDBKeyCoding.isPast(keyBytes, upper) { return }
            guard try body(keyBytes, UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size)) else { return }
            rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        if LMDBResultCode(rc) != .notFound { try check(rc, "cannot read records", collection: collection) }
    }

    /// Calls `body` with the primary key bytes and the record of every candidate of `plan`, in
    /// key order for a primary source and in index order for an index source.
    func forEachCandidate(
        _ info: LMDBCollectionInfo,
        _ plan: LMDBQueryPlan,
        _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let collection = info.collection
        let records = try handle(collection.database, collection: collection.name)
        switch plan.source {
        case .key(let key):
            guard key.count <= environment.maximumKeySize else { return }
            try read(records, key: key, collection: collection.name) { record in
                guard let record else { return }
                try key.withUnsafeBytes { key in _ = try body(key, record) }
            }
        case .keys(let values):
            // A list longer than the collection costs more point reads than reading everything.
            var stat = MDB_stat()
            try check(mdb_stat(txn, records, &stat), "cannot count records", collection: collection.name)
            if values.count > stat.ms_entries {
                return try forEachEntry(records, from: nil, through: nil, collection: collection.name, body)
            }
            for key in LMDBQueryPlan.keyList(values) where key.count <= environment.maximumKeySize {
                let proceed = try read(records, key: key, collection: collection.name) { record in
                    guard let record else { return true }
                    return try key.withUnsafeBytes { key in try body(key, record) }
                }
                if !proceed { return }
            }
        case .primary(let lower, let upper):
            try forEachEntry(records, from: lower, through: upper, collection: collection.name, body)
        case .index(let index, let lower, let upper):
            try forEachIndexed(info, index, from: lower, through: upper, body)
        case .indexValues(let index, let values):
            var stat = MDB_stat()
            try check(mdb_stat(txn, records, &stat), "cannot count records", collection: collection.name)
            if values.count > stat.ms_entries {
                return try forEachEntry(records, from: nil, through: nil, collection: collection.name, body)
            }
            for value in LMDBQueryPlan.keyList(values) {
                var proceed = true
                try forEachIndexed(info, index, from: value, through: value) { key, record in
                    proceed = try body(key, record)
                    return proceed
                }
                if !proceed { return }
            }
        }
    }

    /// Calls `body` with the primary key bytes and the record of every entry of `index` whose
    /// first components lie between `lower` and `upper` (inclusive), in index order.
    private func forEachIndexed(
        _ info: LMDBCollectionInfo,
        _ index: LMDBCollection.Index,
        from lower: [UInt8]?,
        through upper: [UInt8]?,
        _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let collection = info.collection
        let records = try handle(collection.database, collection: collection.name)
        let entries = try handle(index.database, collection: collection.name)
        let components = index.columns.count
        try forEachEntry(entries, from: lower, through: upper, collection: collection.name) { entry, _ in
            var offset = 0
            for _ in 0..<components {
                guard let next = LMDBKeyCoding.skipComponent(in: entry, at: offset) else {
                    throw StorageError(
                        .corrupt,
                        "an index entry is damaged",
                        collection: collection.name,
                        path: environment.path
                    )
                }
                offset = next
            }
            let key = [UInt8](UnsafeRawBufferPointer(rebasing: entry[offset...]))
            return try read(records, key: key, collection: collection.name) { record in
                guard let record else {
                    throw StorageError(
                        .corrupt,
                        "an index entry names a missing record",
                        collection: collection.name,
                        path: environment.path
                    )
                }
                return try key.withUnsafeBytes { key in try body(key, record) }
            }
        }
    }

    func damaged(_ collection: String) -> StorageError {
        StorageError(.corrupt, "a stored record is damaged", collection: collection, path: environment.path)
    }

    // MARK: BackendReadTransaction

    func schema(of collection: String) throws -> CollectionSchema? {
        try checkActive()
        return try info(of: collection)?.schema
    }

    /// The id of the committed snapshot (`snapshot`): a schema changes only by a commit, which
    /// gives the next snapshot a new id, never reused while the file exists. `nil` in a write
    /// transaction, whose id an abort gives to the next writer with other contents.
    var schemaStamp: Int64? { snapshot.map { Int64($0) } }

    /// Sort values go through `Ordering.value(from:)` (see `scan`).
    var ordersByNestedFields: Bool { true }

    func nextAutoKey(in collection: String) throws -> Int64? {
        try checkActive()
        let last = try read(environment.metadata, key: LMDBCollection.counterKey(collection), collection: collection) {
            bytes -> Int64 in
            guard let bytes else { return 0 }
            guard bytes.count == 8 else {
                throw StorageError(.corrupt, "the key counter of '\(collection)' is damaged", collection: collection)
            }
            return bytes.reduce(0) { $0 << 8 | Int64($1) }
        }
        return last + 1
    }

    func scan(_ request: ScanRequest, _ body: (any StorageRow) throws -> Bool) throws {
        try checkActive()
        guard let info = try info(of: request.collection) else { return }
        if let limit = request.limit, limit <= 0 { return }
        let collection = info.collection
        let plan = LMDBQueryPlan(request.predicate, info)
        let predicate = info.bind(request.predicate)
        let row = LMDBRow(requested: info.fields(of: request.columns), fieldCount: collection.nextFieldID)
        let lookup: (Int) -> StorageValue = { row.value(field: $0) }
        let keyOrder =
            request.ordering.isEmpty
            || (request.ordering.count == 1 && request.ordering[0].column == collection.primaryKey
                && !request.ordering[0].isDescending)
        var remaining = request.limit ?? Int.max
        var skipped = 0
        if keyOrder && plan.isInKeyOrder {
            try forEachCandidate(info, plan) { _, record in
                guard row.load(record) else { throw damaged(collection.name) }
                guard predicate.matches(lookup) else { return true }
                if skipped < request.offset {
                    skipped += 1
                    return true
                }
                guard try body(row) else { return false }
                remaining -= 1
                return remaining > 0
            }
            return
        }
        // Any other order: collect the matching keys with their sort values, sort, then read.
        let sortFields = request.ordering.map { info.fieldsByName[$0.column] ?? -1 }
        var hits: [(key: [UInt8], sortValues: [StorageValue])] = []
        try forEachCandidate(info, plan) { key, record in
            guard row.load(record) else { throw damaged(collection.name) }
            if predicate.matches(lookup) {
                // A nested field's value is read once here, not once per comparison.
                let sortValues =
                    keyOrder ? [] : zip(request.ordering, sortFields).map { $0.value(from: row.value(field: $1)) }
                hits.append(([UInt8](key), sortValues))
            }
            return true
        }
        let ordering = request.ordering
        hits.sort { lhs, rhs in
            if !keyOrder {
                for (position, sortKey) in ordering.enumerated() {
                    let order = StorageValue.compare(lhs.sortValues[position], rhs.sortValues[position])
                    if order != 0 { return sortKey.isDescending ? order > 0 : order < 0 }
                }
            }
            return lhs.key.lexicographicallyPrecedes(rhs.key)
        }
        let records = try handle(collection.database, collection: collection.name)
        for hit in hits.dropFirst(request.offset).prefix(remaining) {
            let proceed = try read(records, key: hit.key, collection: collection.name) { record in
                guard let record, row.load(record) else { throw damaged(collection.name) }
                return try body(row)
            }
            if !proceed { return }
        }
    }

    func collectionNames() throws -> [String] {
        try checkActive()
        let prefix = LMDBCollection.metadataKey("")
        var folded: [String] = []
        try forEachEntry(environment.metadata, from: prefix, through: nil, collection: "") { key, _ in
            guard key.starts(with: prefix) else { return false }
            folded.append(String(decoding: key.dropFirst(prefix.count), as: UTF8.self))
            return true
        }
        // The entries are keyed by folded names; the schema keeps the name as created.
        return try folded.compactMap { try info(of: $0)?.collection.name }
    }

    /// The collection's entry count (`mdb_stat`), past the offset and within the limit, for a
    /// scan without a predicate; `nil` with one.
    func expectedRowCount(of request: ScanRequest) throws -> Int? {
        guard request.predicate == nil else { return nil }
        let entries = try count(in: request.collection, where: nil)
        return min(max(0, entries - max(0, request.offset)), request.limit ?? Int.max)
    }

    func count(in collection: String, where predicate: StoragePredicate?) throws -> Int {
        try checkActive()
        guard let info = try info(of: collection) else { return 0 }
        if predicate == nil {
            var stat = MDB_stat()
            let dbi = try handle(info.collection.database, collection: collection)
            try check(mdb_stat(txn, dbi, &stat), "cannot count records", collection: collection)
            return stat.ms_entries
        }
        let row = LMDBRow(requested: [], fieldCount: info.collection.nextFieldID)
        let lookup: (Int) -> StorageValue = { row.value(field: $0) }
        let prepared = info.bind(predicate)
        var count = 0
        try forEachCandidate(info, LMDBQueryPlan(predicate, info)) { _, record in
            guard row.load(record) else { throw damaged(collection) }
            if prepared.matches(lookup) { count += 1 }
            return true
        }
        return count
    }

    func get(
        _ collection: String,
        key: StorageValue,
        columns: [String],
        _ body: (any StorageRow) throws -> Void
    ) throws -> Bool {
        try checkActive()
        guard let info = try info(of: collection), !key.isNull else { return false }
        let records: MDB_dbi
        let fields: [Int]
        if snapshot != nil, let last = lastGet, last.info === info, last.columns == columns {
            (records, fields) = (last.records, last.fields)
        } else {
            records = try handle(info.collection.database, collection: collection)
            fields = info.fields(of: columns)
            if snapshot != nil {
                lastGet = LastGet(info: info, columns: columns, records: records, fields: fields)
                spareRow = nil
            }
        }
        func found(_ record: UnsafeRawBufferPointer?) throws -> Bool {
            guard let record else { return false }
            // The kept row, unless a look-up inside this one's decode has it.
            let row = spareRow ?? LMDBRow(requested: fields, fieldCount: info.collection.nextFieldID)
            spareRow = nil
            // In a read-only transaction `lastGet` is this look-up's now (found or set above).
            let generation = lastGetGeneration
            defer {
                if snapshot != nil, lastGetGeneration == generation { spareRow = row }
            }
            guard row.load(record) else { throw damaged(collection) }
            try body(row)
            return true
        }
        if case .integer(let number) = key {
            // The same bytes as `LMDBKeyCoding.encode(key)`, without an array (17 bytes, always
            // within LMDB's key size).
            return try LMDBKeyCoding.withInteger(number) { keyBytes in
                try read(records, key: keyBytes, collection: collection, found)
            }
        }
        let keyBytes = LMDBKeyCoding.encode(key)
        guard keyBytes.count <= environment.maximumKeySize else { return false }
        return try keyBytes.withUnsafeBytes { keyBytes in
            try read(records, key: keyBytes, collection: collection, found)
        }
    }
}

/// A read transaction's last key look-up (see `LMDBReadTransaction.lastGet`).
private final class LastGet {
    let info: LMDBCollectionInfo
    let columns: [String]
    let records: MDB_dbi
    let fields: [Int]

    init(info: LMDBCollectionInfo, columns: [String], records: MDB_dbi, fields: [Int]) {
        self.info = info
        self.columns = columns
        self.records = records
        self.fields = fields
    }
}
