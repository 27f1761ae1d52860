/// The operations of ``ObjectStore`` and ``StoreTransaction``, over one backend transaction.
/// Both public types forward here, so the store and a transaction behave identically.
final class Session {
    let catalog: ModelCatalog
    let reader: any BackendReadTransaction
    let writer: (any BackendWriteTransaction)?
    var prepared: [String: CollectionSchema] = [:]
    /// What this session wrote, by folded collection name, for change observation.
    private(set) var changeLogs: [String: ChangeLog] = [:]
    /// What this session knows of the store's references (`Session+References.swift`); `nil`
    /// until a save or delete of the session first needs it.
    var relations: RelationState?
    /// What this session knows and owes of the store's full-text indexes
    /// (`Session+Search.swift`); `nil` until a write or a search first needs it.
    var search: SearchState?

    init(catalog: ModelCatalog, reader: any BackendReadTransaction, writer: (any BackendWriteTransaction)?) {
        self.catalog = catalog
        self.reader = reader
        self.writer = writer
    }

    func requireWriter() throws -> any BackendWriteTransaction {
        guard let writer else {
            throw StorageError(.misuse, "a write was attempted inside a read-only operation")
        }
        return writer
    }

    /// Records a write for the change streams, published if the transaction commits.
    func noteChange(_ operation: ChangeLog.Operation, in collection: String) {
        noteChange(operation, in: collection, folded: Identifier.folded(collection))
    }

    /// Records a write for the change streams, with the collection's folded name known.
    func noteChange(_ operation: ChangeLog.Operation, in collection: String, folded: String) {
        if changeLogs.isEmpty {
            // The first change (a single save's only one): the table made with its entry, one
            // hash, no growth.
            var log = ChangeLog(collection: collection)
            log.record(operation)
            changeLogs = [folded: log]
            return
        }
        changeLogs[folded, default: ChangeLog(collection: collection)].record(operation)
    }

    // MARK: Writing models

    /// The state needed to write records of one type in this transaction: its plan (schema,
    /// key position, affinity fixes), an encoder for the plan's layout and the backend's writer.
    private struct WriteState {
        let plan: WritePlan
        let encoder: RowEncoder
        let writer: any RecordWriter
    }

    /// The write state for the first value of a save: from the store's cached plan when the
    /// stored schema of the type's collection is the one the plan was checked against, else
    /// worked out again (`makeWriteState`).
    private func writeState<T: Encodable>(for value: T, info: ModelInfo, cached: WritePlan?) throws -> WriteState {
        if !info.references.isEmpty { try registerReferences(of: info) }
        if info.fullText != nil { try registerSearch(of: info) }
        if let cached, let stored = try storedSchema(info.collection), stored == cached.stored {
            let writer = try makeRecordWriter(for: cached.schema.name, columns: cached.columnNames)
            return WriteState(plan: cached, encoder: cached.takeEncoder(), writer: writer)
        }
        return try makeWriteState(for: value, extending: nil)
    }

    /// Works out the write state of `value`'s type: its layout (the cached one, or learned from
    /// `value` extending `previous`), its schema, the collection prepared for it, the affinity
    /// fixes; the plan is kept in the catalog when the collection needed no change.
    private func makeWriteState<T: Encodable>(
        for value: T,
        extending previous: [ColumnDefinition]?
    ) throws -> WriteState {
        // The catalog's, not a plan's: it holds the layout the type's last save learned.
        let info = try catalog.info(for: T.self)
        var layout: [ColumnDefinition]
        if let cached = info.layout, previous == nil {
            layout = cached
        } else {
            layout = try RowEncoder.discover(value, extending: previous ?? []).columns
        }
        let schema = try info.schema(for: layout)
        layout = schema.columns
        catalog.rememberLayout(layout, for: T.self)
        let before = try storedSchema(schema.name)
        let stored = try prepare(schema, writtenBy: info.typeName)
        guard stored.primaryKey == schema.primaryKey else {
            throw StorageError(
                .schemaMismatch,
                "\(info.typeName) has primary key '\(schema.primaryKey)', but collection '\(schema.name)'"
                    + " is stored with primary key '\(stored.primaryKey)'",
                collection: schema.name,
                column: schema.primaryKey
            )
        }
        var fixes: [WritePlan.AffinityFix] = []
        for (index, column) in layout.enumerated() {
            if let storedType = stored.column(named: column.name)?.type, storedType != column.type,
                storedType != .untyped
            {
                fixes.append(WritePlan.AffinityFix(index: index, type: storedType))
            }
        }
        let plan = WritePlan(
            info: info,
            schema: schema,
            stored: stored,
            keyIndex: layout.firstIndex { $0.name == schema.primaryKey }!,
            affinityFixes: fixes
        )
        // Kept only when the collection was already as the plan needs it: after a change made
        // here (which a rollback may undo), the next save checks the schema it then finds.
        if before == stored { catalog.keepWritePlan(plan, for: T.self) }
        return WriteState(
            plan: plan,
            encoder: RowEncoder(typeName: info.typeName, columns: layout),
            writer: try makeRecordWriter(for: schema.name, columns: plan.columnNames)
        )
    }

    /// Creates or migrates a collection once per transaction.
    /// - Parameters:
    ///   - schema: the collection as the records to write need it.
    ///   - typeName: the Swift type whose records `schema` describes, whose columns may only
    ///     change type by a safe widening; nil for the untyped path.
    /// - Returns: the collection's schema after the change.
    /// - Throws: ``StorageError`` with `.schemaMismatch` for a change that is not a safe widening.
    func prepare(_ schema: CollectionSchema, writtenBy typeName: String? = nil) throws -> CollectionSchema {
        if !schema.indexes.isEmpty, schema.indexes.contains(where: { !$0.path.isEmpty }),
            try !requireWriter().indexesNestedFields
        {
            // Accepted (if valid) and left out where the engine has no expression indexes.
            try schema.validateShape()
            var columnsOnly = schema
            columnsOnly.indexes.removeAll { !$0.path.isEmpty }
            return try prepare(columnsOnly, writtenBy: typeName)
        }
        if let known = prepared[schema.name], known.merged(with: schema) == known { return known }
        if let existing = try storedSchema(schema.name) {
            if let conflict = existing.caseConflict(with: schema) {
                throw StorageError(
                    .schemaMismatch,
                    "column \(Identifier.spelling(conflict.requested)) clashes with the stored column"
                        + " \(Identifier.spelling(conflict.stored))"
                        + " (names are compared ignoring ASCII case and Unicode normalization)",
                    collection: schema.name,
                    column: conflict.requested
                )
            }
            if let typeName { try Self.checkTypeChanges(of: schema, against: existing, typeName: typeName) }
            try checkWideningToReal(of: schema, from: existing)
        }
        let stored = try requireWriter().prepareCollection(schema)
        prepared[schema.name] = stored
        return stored
    }

    func save<S: Sequence>(_ values: S) throws -> [StorageValue] where S.Element: Encodable {
        let cached = catalog.writePlan(for: S.Element.self)
        let info = try cached?.info ?? catalog.info(for: S.Element.self)
        var state: WriteState?
        // The encoder whose last record was encoded whole, kept for the next save of the type.
        var reusable: WriteState?
        defer { if let reusable { reusable.plan.keepEncoder(reusable.encoder) } }
        var keys: [StorageValue] = []
        keys.reserveCapacity(values.underestimatedCount)
        for value in values {
            keys.append(
                try put(
                    value,
                    info: info,
                    cached: cached,
                    state: &state,
                    reusable: &reusable,
                    expecting: values.underestimatedCount
                )
            )
        }
        if let plan = state?.plan, !keys.isEmpty {
            noteChange(.upsert(keys), in: info.collection, folded: plan.foldedCollection)
        }
        return keys
    }

    /// `save(_:)` of one value, without a sequence around it: `ObjectStore.save(_:)`'s path. Its
    /// generic code is not specialized for the caller's type, where iterating a
    /// `CollectionOfOne<T>` looks up the iterator's and its `Optional`'s metadata at run time
    /// (docs/BENCHMARKS.md).
    func save<T: Encodable>(one value: T) throws -> StorageValue {
        let cached = catalog.writePlan(for: T.self)
        let info = try cached?.info ?? catalog.info(for: T.self)
        var state: WriteState?
        var reusable: WriteState?
        defer { if let reusable { reusable.plan.keepEncoder(reusable.encoder) } }
        let key = try put(value, info: info, cached: cached, state: &state, reusable: &reusable, expecting: 1)
        if let plan = state?.plan {
            noteChange(.upsert([key]), in: info.collection, folded: plan.foldedCollection)
        }
        return key
    }

    /// Encodes `value` and hands it to the writer of `state` (made for it when `nil`): one record
    /// of `save(_:)`. `reusable` is the state whose encoder encoded its last record whole.
    /// - Returns: the record's key as the writer stored it.
    private func put<T: Encodable>(
        _ value: T,
        info: ModelInfo,
        cached: WritePlan?,
        state: inout WriteState?,
        reusable: inout WriteState?,
        expecting count: Int
    ) throws -> StorageValue {
        var current: WriteState
        if let state {
            current = state
        } else {
            current = try writeState(for: value, info: info, cached: cached)
            try current.writer.expectRecords(count)
        }
        reusable = nil
        do {
            try current.encoder.encode(value)
        } catch is PlanMiss {
            current = try makeWriteState(for: value, extending: current.encoder.columns)
            try current.encoder.encode(value)
        }
        state = current
        reusable = current
        let plan = current.plan
        var record = current.encoder.values
        for fix in plan.affinityFixes { record[fix.index] = record[fix.index].applyingAffinity(fix.type) }
        let key = record[plan.keyIndex]
        if plan.schema.hasAutoKey {
            record[plan.keyIndex] = .null
        } else if key.isNull {
            throw StorageError(
                .invalidKey,
                "a \(info.typeName) has no value for its primary key '\(plan.schema.primaryKey)'",
                collection: info.collection,
                column: plan.schema.primaryKey
            )
        }
        if !plan.referenceSlots.isEmpty { try checkReferences(of: record, key: key, plan: plan) }
        do {
            return try current.writer.put(record)
        } catch let error as StorageError {
            var error = error.inCollection(info.collection)
            if error.key == nil && !key.isNull { error.key = key }
            throw error
        }
    }

    // MARK: Reading models

    /// The stored schema of a type's collection, or nil when nothing was ever stored there.
    func storedSchema(_ collection: String) throws -> CollectionSchema? {
        // Only a write session prepares schemas; `writer` is a constant, where reading
        // `prepared` (a variable) first would check exclusivity on every look-up.
        if writer != nil, !prepared.isEmpty, let known = prepared[collection] { return known }
        return try reader.schema(of: collection)
    }

    /// Checks a query against the stored schema and puts it in the form every backend expects:
    /// the predicate simplified (at most `StoragePredicate.maximumDepth` deep) with its values
    /// converted with the columns' affinity, the primary key appended as the last sort key.
    func makeRequest(
        _ plan: ReadPlan,
        columns: [String],
        where predicate: StoragePredicate?,
        orderBy ordering: [Ordering],
        limit: Int?,
        offset: Int = 0
    ) throws -> ScanRequest {
        let stored = plan.schema
        let types = plan.types
        var predicate = predicate
        if let unresolved = predicate, unresolved.containsSubquery {
            predicate =
                reader is any SubqueryFilteringReadTransaction
                ? try checkSubqueries(unresolved) : try resolveSubqueries(unresolved)
        }
        for name in (predicate?.columnNames ?? []) + ordering.map(\.column) {
            if let slot = plan.slotByName[name], Identifier.spelledAlike(plan.columns[slot], name) { continue }
            // The look-up finds a column spelt in another Unicode normalization too (Swift
            // compares strings so), which SQL would not find: a query spells a column as stored.
            let other = stored.column(named: name).map { " (it has \(Identifier.spelling($0.name)))" } ?? ""
            throw StorageError(
                .unknownColumn,
                "collection '\(stored.name)' has no column \(Identifier.spelling(name))" + other,
                collection: stored.name,
                column: name
            )
        }
        if let limit, limit < 0 {
            throw StorageError(.misuse, "limit must not be negative, got \(limit)", collection: stored.name)
        }
        if offset < 0 {
            throw StorageError(.misuse, "offset must not be negative, got \(offset)", collection: stored.name)
        }
        try Self.checkNestedFields(predicate, ordering, stored, reader: reader)
        let normalized = try predicate?.simplified().mapValues { column, value in
            value.applyingAffinity(types[column] ?? .untyped)
        }
        var order = ordering
        if !order.contains(where: { $0.column == stored.primaryKey && $0.path.isEmpty }) {
            order.append(.ascending(stored.primaryKey))
        }
        return ScanRequest(
            collection: stored.name,
            columns: columns,
            predicate: normalized,
            ordering: order,
            limit: limit,
            offset: offset
        )
    }

    /// The answer of a query over a collection that was never stored, `empty`, once its
    /// predicate is known to be within the depth limit: a query too deep fails whether or not
    /// the collection exists, on every engine.
    static func noCollection<Answer>(_ predicate: StoragePredicate?, _ empty: Answer) throws -> Answer {
        _ = try predicate?.simplified()
        return empty
    }

    /// The scan request for a typed query and the decoder for its rows, or nil when nothing was
    /// ever stored in the type's collection.
    func prepareScan<T: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate?,
        orderBy ordering: [Ordering],
        limit: Int?,
        offset: Int = 0
    ) throws -> (ScanRequest, RowDecoder)? {
        let info = try catalog.info(for: type)
        guard let stored = try storedSchema(info.collection) else { return try Self.noCollection(predicate, nil) }
        let plan = catalog.readPlan(for: stored)
        let request = try makeRequest(
            plan,
            columns: plan.columns,
            where: predicate,
            orderBy: ordering,
            limit: limit,
            offset: offset
        )
        return (request, RowDecoder(typeName: info.typeName, collection: info.collection, plan: plan))
    }

    func scan<T: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate?,
        orderBy ordering: [Ordering],
        limit: Int?,
        _ body: (T) throws -> Bool
    ) throws {
        guard let (request, decoder) = try prepareScan(type, where: predicate, orderBy: ordering, limit: limit)
        else { return }
        try reader.scan(request) { row in try body(try decoder.decode(T.self, from: row)) }
    }

    func fetchAll<T: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate?,
        orderBy ordering: [Ordering],
        limit: Int?,
        offset: Int = 0
    ) throws -> [T] {
        guard
            let (request, decoder) = try prepareScan(
                type,
                where: predicate,
                orderBy: ordering,
                limit: limit,
                offset: offset
            )
        else { return [] }
        // A count past 16 GiB of values is not trusted with one allocation (a backend's mistake
        // must not fail it): the buffer below then grows as the rows come.
        if let expected = try reader.expectedRowCount(of: request), expected > 0,
            expected <= (1 << 34) / max(1, MemoryLayout<T>.stride)
        {
            return try fetchAll(T.self, request, decoder, expected: expected)
        }
        // Decoded into raw memory, then moved into the array once: in this unspecialized code,
        // each `Array.append` would ask the runtime for the metadata of `Array<T>`
        // (docs/BENCHMARKS.md).
        var buffer = ValueBuffer()
        defer { buffer.free(T.self) }
        try reader.scan(request) { row in
            // Decoded in place: a decoded value passed to `append` was copied (a retain and a
            // release of each of its references).
            try decoder.decode(T.self, from: row, into: buffer.reserveNext(T.self))
            buffer.didInitializeNext()
            return true
        }
        return buffer.moveToArray(of: T.self)
    }

    /// The records of `request` decoded straight into an array of capacity `expected` (the
    /// backend's `expectedRowCount`): one allocation, no second copy of the records. Records past
    /// `expected` (a count that was wrong) are gathered beside it and appended.
    private func fetchAll<T: Decodable>(
        _ type: T.Type,
        _ request: ScanRequest,
        _ decoder: RowDecoder,
        expected: Int
    ) throws -> [T] {
        var extra = ValueBuffer()
        defer { extra.free(T.self) }
        var records = try [T](unsafeUninitializedCapacity: expected) { buffer, initialized in
            let base = buffer.baseAddress!
            try reader.scan(request) { row in
                if initialized < expected {
                    try decoder.decode(T.self, from: row, into: base + initialized)
                    initialized += 1
                } else {
                    try decoder.decode(T.self, from: row, into: extra.reserveNext(T.self))
                    extra.didInitializeNext()
                }
                return true
            }
        }
        if !extra.isEmpty { records += extra.moveToArray(of: T.self) }
        return records
    }

    func fetch<T: Decodable>(_ type: T.Type, id: StorageValue) throws -> T? {
        let slot = UnsafeMutablePointer<T>.allocate(capacity: 1)
        defer { slot.deallocate() }
        guard try fetch(type, id: id, into: slot) else { return nil }
        return slot.move()
    }

    /// Decodes the value of `type` stored under `id` into `slot` (uninitialized before), and
    /// returns whether there was one (and `slot` is initialized).
    ///
    /// Why a slot rather than `T?`: in this unspecialized code, every `T?` (a local, or a generic
    /// argument such as the result type of a transaction closure) fetches the metadata of
    /// `Optional<T>` from the runtime, several times a look-up (docs/BENCHMARKS.md).
    func fetch<T: Decodable>(_ type: T.Type, id: StorageValue, into slot: UnsafeMutablePointer<T>) throws -> Bool {
        try Self.fetch(
            type,
            id: id,
            into: slot,
            reader: reader,
            session: self,
            catalog: catalog,
            kept: catalog.typeReadPlan(for: T.self)
        )
    }

    /// A primary key converted with the key column's affinity, as it is stored.
    static func normalizedKey(_ key: StorageValue, _ plan: ReadPlan) throws -> StorageValue {
        guard !key.isNull else {
            throw StorageError(.invalidKey, "a primary key may not be null", collection: plan.schema.name)
        }
        return key.applyingAffinity(plan.keyType)
    }

    func count<T>(_ type: T.Type, where predicate: StoragePredicate?) throws -> Int {
        try count(in: try catalog.info(for: type).collection, where: predicate)
    }

    func count(in collection: String, where predicate: StoragePredicate?) throws -> Int {
        guard let stored = try storedSchema(collection) else { return try Self.noCollection(predicate, 0) }
        let request = try makeRequest(
            catalog.readPlan(for: stored),
            columns: [],
            where: predicate,
            orderBy: [],
            limit: nil
        )
        return try reader.count(in: collection, where: request.predicate)
    }

    /// The next batch of a stream: at most `limit` values of `type` matching `predicate` in
    /// `ordering` (then by primary key), strictly after the record whose sort values were
    /// `after`, with the sort values of the last one returned. Keyset paging: each batch is a
    /// query of its own, so no transaction stays open between batches, and a batch costs a seek,
    /// not a skip over the records before it.
    func streamBatch<T: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate?,
        orderBy ordering: [Ordering],
        after: [StorageValue]?,
        limit: Int
    ) throws -> (values: [T], last: [StorageValue]?) {
        guard let (initial, decoder) = try prepareScan(type, where: predicate, orderBy: ordering, limit: limit)
        else { return ([], nil) }
        var request = initial
        let order = request.ordering
        if let after {
            let past = Self.keyset(order, after: after)
            request.predicate = request.predicate.map { .and($0, past) } ?? past
        }
        let positions = try order.map { sortKey in
            guard let position = request.columns.firstIndex(of: sortKey.column) else {
                throw StorageError(.unknownColumn, "no column '\(sortKey.column)'", collection: request.collection)
            }
            return position
        }
        var values: [T] = []
        var last: [StorageValue]?
        try reader.scan(request) { row in
            values.append(try decoder.decode(T.self, from: row))
            last = zip(order, positions).map { $0.value(from: row.value(at: $1)) }
            return true
        }
        return (values, last ?? after)
    }

    /// The records that sort strictly after a record with sort values `values` in `ordering`
    /// (whose last key is the primary key, so no two records tie), with SQLite's order: NULL
    /// first when ascending, last when descending.
    static func keyset(_ ordering: [Ordering], after values: [StorageValue]) -> StoragePredicate {
        // A sort key on a nested field compares the field, as the ordering does.
        func on(_ sortKey: Ordering, _ term: StoragePredicate) -> StoragePredicate {
            sortKey.path.isEmpty ? term : .nested(path: sortKey.path, term)
        }
        func past(_ sortKey: Ordering, _ value: StorageValue) -> StoragePredicate {
            switch (sortKey.isDescending, value.isNull) {
            case (false, false): return on(sortKey, .compare(sortKey.column, .greater, value))
            case (false, true): return .not(on(sortKey, .isNull(sortKey.column)))
            case (true, false):
                return .or(on(sortKey, .compare(sortKey.column, .less, value)), on(sortKey, .isNull(sortKey.column)))
            case (true, true): return .constant(false)
            }
        }
        func same(_ sortKey: Ordering, _ value: StorageValue) -> StoragePredicate {
            on(sortKey, value.isNull ? .isNull(sortKey.column) : .compare(sortKey.column, .equal, value))
        }
        var predicate = past(ordering[ordering.count - 1], values[ordering.count - 1])
        for index in stride(from: ordering.count - 2, through: 0, by: -1) {
            predicate = .or(past(ordering[index], values[index]), .and(same(ordering[index], values[index]), predicate))
        }
        return predicate
    }

    // MARK: Collections

    /// The collections' names, reserved ones (starting with `_`, such as `_settings`) left out.
    func collectionNames() throws -> [String] {
        try reader.collectionNames().filter { !$0.hasPrefix("_") }.sorted()
    }

    func schema(of collection: String) throws -> CollectionSchema? {
        try Identifier.validateCollection(collection)
        return try storedSchema(collection)
    }

    /// Deletes every record of `collection` (noted as a change, with every key), then its
    /// indexes and schema, inside this transaction.
    func drop(collection: String) throws -> Bool {
        try Identifier.validateCollection(collection)
        guard let stored = try storedSchema(collection) else { return false }
        let writer = try requireWriter()
        let keys: [StorageValue]
        if try references(targeting: stored.name).isEmpty {
            keys = try writer.deleteAll(from: stored.name, where: nil)
        } else {
            // The rules apply to every record; the records' own change is noted by the delete.
            _ = try deleteApplyingReferences(try self.keys(of: stored, where: nil), of: stored)
            keys = []
        }
        try unregisterReferences(from: stored.name)
        try dropSearchIndex(of: stored.name)
        try writer.dropCollection(stored.name)
        let folded = Identifier.folded(stored.name)
        for name in prepared.keys where Identifier.folded(name) == folded { prepared[name] = nil }
        if !keys.isEmpty { noteChange(.delete(keys), in: stored.name) }
        return true
    }

    // MARK: Deleting

    func delete<T>(_ type: T.Type, id: StorageValue) throws -> Bool {
        let info = try catalog.info(for: type)
        guard let stored = try storedSchema(info.collection) else { return false }
        let key = try Self.normalizedKey(id, catalog.readPlan(for: stored))
        if try !references(targeting: stored.name).isEmpty {
            guard try exists(key, in: stored.name) else { return false }
            return try !deleteApplyingReferences([key], of: stored).isEmpty
        }
        let deleted = try requireWriter().delete(from: info.collection, key: key)
        if deleted {
            try unindexRecords([key], in: info.collection)
            noteChange(.delete([key]), in: info.collection)
        }
        return deleted
    }

    func deleteAll<T>(_ type: T.Type, where predicate: StoragePredicate?) throws -> [StorageValue] {
        try deleteAll(from: try catalog.info(for: type).collection, where: predicate)
    }

    func deleteAll(from collection: String, where predicate: StoragePredicate?) throws -> [StorageValue] {
        guard let stored = try storedSchema(collection) else { return try Self.noCollection(predicate, []) }
        let request = try makeRequest(
            catalog.readPlan(for: stored),
            columns: [],
            where: predicate,
            orderBy: [],
            limit: nil
        )
        if try !references(targeting: stored.name).isEmpty {
            return try deleteApplyingReferences(try self.keys(of: stored, where: request.predicate), of: stored)
        }
        let keys = try requireWriter().deleteAll(from: collection, where: request.predicate)
        if !keys.isEmpty {
            try unindexRecords(keys, in: collection)
            noteChange(.delete(keys), in: collection)
        }
        return keys
    }
}

/// A growing run of values of one type in raw memory, for collecting decoded records without
/// an array's per-append metadata look-ups in unspecialized code (see `Session.fetchAll`). Not
/// generic itself (a generic struct's metadata was looked up on every append); each method
/// takes the element type, which must be the same for every call on one buffer.
struct ValueBuffer {
    private var base: UnsafeMutableRawPointer?
    private var count = 0
    private var capacity = 0
    /// Whether `base` is from `RawMemory.resize` (freed with `RawMemory.release`), not `allocate`.
    private var isResized = false

    /// The uninitialized memory of the next value, growing the memory when it is full; the
    /// caller initializes it and then counts it with `didInitializeNext()` (or leaves it
    /// uninitialized, and the buffer unchanged).
    @inline(__always)
    mutating func reserveNext<T>(_ type: T.Type) -> UnsafeMutablePointer<T> {
        if count == capacity { grow(T.self) }
        return base!.assumingMemoryBound(to: T.self) + count
    }

    /// Grows the memory. Values that a bitwise copy may move (`String`, `Data`, arrays, most
    /// structs) grow fourfold by `realloc`, which copies their bytes at most (for a large block
    /// it may remap the pages instead), and fourfold growth copies a third as many bytes as
    /// doubling; anything else is moved value by value into twice the memory, a cost per value
    /// for each doubling it goes through (docs/BENCHMARKS.md).
    @inline(never)
    private mutating func grow<T>(_ type: T.Type) {
        if base == nil || isResized, RawMemory.canResize(T.self) {
            let grown = Swift.max(16, capacity * 4)
            base = RawMemory.resize(base, to: grown * MemoryLayout<T>.stride)
            isResized = true
            capacity = grown
            return
        }
        let grown = Swift.max(16, capacity * 2)
        let moved = UnsafeMutablePointer<T>.allocate(capacity: grown)
        if let base {
            moved.moveInitialize(from: base.assumingMemoryBound(to: T.self), count: count)
            base.deallocate()
        }
        base = UnsafeMutableRawPointer(moved)
        capacity = grown
    }

    /// Whether no value is held.
    var isEmpty: Bool { count == 0 }

    /// Counts the value `reserveNext` gave the memory of as initialized.
    @inline(__always)
    mutating func didInitializeNext() {
        count += 1
    }

    /// The values as an array; the buffer is empty afterwards.
    mutating func moveToArray<T>(of type: T.Type) -> [T] {
        guard let base, count > 0 else { return [] }
        let moving = count
        count = 0
        return [T](unsafeUninitializedCapacity: moving) { array, initialized in
            array.baseAddress!.moveInitialize(from: base.assumingMemoryBound(to: T.self), count: moving)
            initialized = moving
        }
    }

    /// Destroys what is left (after a failure part-way) and frees the memory.
    mutating func free<T>(_ type: T.Type) {
        guard let base else { return }
        base.assumingMemoryBound(to: T.self).deinitialize(count: count)
        if isResized {
            RawMemory.release(base)
        } else {
            base.deallocate()
        }
        self.base = nil
        count = 0
        capacity = 0
        isResized = false
    }
}

extension Session {
    /// The one key look-up: decodes the value of `type` stored under `id` into `slot`
    /// (uninitialized before) over `reader`, and returns whether there was one. `session` is the
    /// session the read runs in, when it has one (a read inside a write session must see the
    /// schemas that session prepared); `ObjectStore.fetch(_:id:)` passes none for a read of its
    /// own, so that it makes no session. `kept` is the type's look-up plan
    /// (`ModelCatalog.typeReadPlan(for:)`, `nil` when it has none yet).
    static func fetch<T: Decodable>(
        _ type: T.Type,
        id: StorageValue,
        into slot: UnsafeMutablePointer<T>,
        reader: any BackendReadTransaction,
        session: Session?,
        catalog: ModelCatalog,
        kept: TypeReadPlan?
    ) throws -> Bool {
        // A read of its own at a stamp the kept plan was checked at reads the same schema.
        let stamp = session == nil ? reader.schemaStamp : nil
        let lookup: TypeReadPlan
        if let kept, let stamp, kept.isChecked(at: stamp) {
            lookup = kept
        } else {
            let info = kept == nil ? try catalog.info(for: type) : nil
            let collection = kept?.collection ?? info!.collection
            let found: CollectionSchema?
            if let session {
                found = try session.storedSchema(collection)
            } else {
                found = try reader.schema(of: collection)
            }
            guard let stored = found else { return false }
            if let kept, kept.plan.describes(stored) {
                lookup = kept
            } else {
                lookup = catalog.makeTypeReadPlan(
                    for: T.self,
                    info: try info ?? catalog.info(for: type),
                    stored: stored
                )
            }
            if let stamp { lookup.noteChecked(at: stamp) }
        }
        let plan = lookup.plan
        let key = try normalizedKey(id, plan)
        let decoder =
            plan.takeDecoder(for: T.self)
            ?? RowDecoder(typeName: lookup.typeName, collection: lookup.collection, plan: plan)
        defer { plan.keepDecoder(decoder, for: T.self) }
        var decoded = false
        do {
            _ = try reader.get(lookup.collection, key: key, columns: plan.columns) { row in
                if decoded {
                    slot.deinitialize(count: 1)
                    decoded = false
                }
                try decoder.decode(T.self, from: row, into: slot)
                decoded = true
            }
        } catch {
            if decoded { slot.deinitialize(count: 1) }
            throw error
        }
        return decoded
    }
}
