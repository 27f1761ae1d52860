import Foundation
public import Storage

/// A small backend written outside swift-storage with its public API only: each collection is a
/// dictionary from primary key to record, and the whole store is a value, so a read transaction
/// works on a copy (a snapshot) and a write transaction publishes its copy when it commits.
///
/// It answers every query with `PredicateEvaluator`, keeps names as `Identifier.folded(_:)`
/// compares them, migrates with `CollectionSchema.merged(with:)`, and writes through a
/// `WriterLayout` and a `ForwardingRecordWriter`: the helpers every backend needs. Several
/// `ObjectStore`s may share one named store, so it counts its commits (`ExternalCommitCounter`)
/// for their settings caches.
public final class DictionaryStorageBackend: StorageBackend, ExternalCommitCounter, @unchecked Sendable {
    // @unchecked: `committed` and `commits` are only touched under `lock`; `writer` serializes
    // write transactions.
    private let lock = NSLock()
    private let writer = NSLock()
    private var committed = Collections()
    private var commits: UInt64 = 0

    /// An empty store.
    public init() {}

    nonisolated(unsafe) private static var stores: [String: DictionaryStorageBackend] = [:]
    private static let storesLock = NSLock()

    /// The store named `name`, created on first use: opening a name again gives back its data, as
    /// reopening a file would.
    /// - Parameter name: any name, usually a folder's path.
    /// - Returns: the store.
    public static func named(_ name: String) -> DictionaryStorageBackend {
        storesLock.withLock {
            if let store = stores[name] { return store }
            let store = DictionaryStorageBackend()
            stores[name] = store
            return store
        }
    }

    /// Runs `body` on a snapshot of the committed collections; never waits for a writer.
    /// - Parameter body: the reads.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func read<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result {
        let transaction = DictionaryTransaction(lock.withLock { committed })
        defer { transaction.isOpen = false }
        return try body(transaction)
    }

    /// Runs `body` on a copy of the committed collections and publishes the copy when `body`
    /// returns; one writer at a time.
    /// - Parameter body: the writes.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws; nothing it did remains.
    public func write<Result>(_ body: (any BackendWriteTransaction) throws -> Result) throws -> Result {
        writer.lock()
        defer { writer.unlock() }
        let transaction = DictionaryTransaction(lock.withLock { committed })
        defer { transaction.isOpen = false }
        let result = try body(transaction)
        // The count moves with the data, never before it: a settings read that saw the new
        // count must find the new data.
        lock.withLock {
            committed = transaction.collections
            commits += 1
        }
        return result
    }

    /// The number of commits so far, for the settings caches of the stores sharing this one.
    /// - Returns: the count.
    public func externalCommitCount() throws -> UInt64 {
        lock.withLock { commits }
    }
}

/// The store's data: collections by folded name.
struct Collections {
    var byName: [String: Collection] = [:]

    subscript(name: String) -> Collection? {
        get { byName[Identifier.folded(name)] }
        set { byName[Identifier.folded(name)] = newValue }
    }
}

/// One collection: its schema and its records (one value per schema column) by primary key.
struct Collection {
    var schema: CollectionSchema
    var records: [StorageKey: [StorageValue]] = [:]
    var lastKey: Int64 = 0

    func value(_ record: [StorageValue], _ column: String) -> StorageValue {
        schema.columnIndex(named: column).map { record[$0] } ?? .null
    }

    func matching(_ predicate: StoragePredicate?) -> [[StorageValue]] {
        records.values.filter { record in PredicateEvaluator.matches(predicate) { value(record, $0) } }
    }

    /// Throws when two records share the values of a unique index (nulls never conflict).
    func checkUniqueIndexes() throws {
        for index in schema.indexes where index.isUnique {
            let positions = index.columns.compactMap { schema.columnIndex(named: $0) }
            var seen = Set<[StorageKey]>()
            for record in records.values {
                let values = positions.map { record[$0] }
                guard !values.contains(where: \.isNull) else { continue }
                guard seen.insert(values.map(StorageKey.init)).inserted else {
                    throw StorageError(
                        .constraintViolation,
                        "duplicate \(values) in unique index \(index.name(in: schema.name))",
                        collection: schema.name,
                        column: index.columns.first
                    )
                }
            }
        }
    }
}

final class DictionaryTransaction: BackendWriteTransaction {
    /// Sorting goes through `PredicateEvaluator.precedes`, which reads nested fields.
    var ordersByNestedFields: Bool { true }

    var collections: Collections
    var isOpen = true

    init(_ collections: Collections) {
        self.collections = collections
    }

    private func collection(_ name: String) throws -> Collection? {
        guard isOpen else { throw StorageError(.misuse, "the transaction has ended") }
        return collections[name]
    }

    func schema(of collection: String) throws -> CollectionSchema? {
        try self.collection(collection)?.schema
    }

    func collectionNames() throws -> [String] {
        guard isOpen else { throw StorageError(.misuse, "the transaction has ended") }
        return collections.byName.values.map(\.schema.name)
    }

    func scan(_ request: ScanRequest, _ body: (any StorageRow) throws -> Bool) throws {
        guard let collection = try collection(request.collection) else { return }
        let positions = request.columns.map { collection.schema.columnIndex(named: $0) }
        let ordered = collection.matching(request.predicate).sorted { lhs, rhs in
            PredicateEvaluator.precedes(request.ordering, { collection.value(lhs, $0) }, { collection.value(rhs, $0) })
        }
        let page = ordered.dropFirst(request.offset).prefix(request.limit ?? Int.max)
        for record in page where try !body(ProjectedRow(values: record, positions: positions)) { return }
    }

    func count(in collection: String, where predicate: StoragePredicate?) throws -> Int {
        try self.collection(collection)?.matching(predicate).count ?? 0
    }

    func prepareCollection(_ schema: CollectionSchema) throws -> CollectionSchema {
        guard var collection = try collection(schema.name) else {
            try schema.validateShape()
            collections[schema.name] = Collection(schema: schema)
            return schema
        }
        let merged = collection.schema.merged(with: schema)
        try merged.validateShape()
        let old = collection.schema.columns
        for key in collection.records.keys {
            var record = collection.records[key]!
            // Widened columns (integer to real) convert their values, as SQLite's affinity would.
            for index in old.indices where merged.columns[index].type != old[index].type {
                record[index] = record[index].applyingAffinity(merged.columns[index].type)
            }
            record += Array(repeating: .null, count: merged.columns.count - old.count)
            collection.records[key] = record
        }
        collection.schema = merged
        try collection.checkUniqueIndexes()
        collections[schema.name] = collection
        return merged
    }

    func makeWriter(for name: String, columns: [String]) throws -> any RecordWriter {
        guard let schema = try collection(name)?.schema else {
            throw StorageError(.misuse, "collection '\(name)' was not prepared", collection: name)
        }
        let layout = try WriterLayout(columns: columns, in: schema, collection: name)
        return ForwardingRecordWriter { [self] values in try put(values, layout, into: name) }
    }

    private func put(_ values: [StorageValue], _ layout: WriterLayout, into name: String) throws -> StorageValue {
        guard var collection = try collection(name) else {
            throw StorageError(.misuse, "collection '\(name)' was dropped", collection: name)
        }
        var key = values[layout.keyPosition]
        if collection.schema.hasAutoKey {
            if key.isNull {
                collection.lastKey += 1
                key = .integer(collection.lastKey)
            } else if case .integer(let number) = key {
                collection.lastKey = max(collection.lastKey, number)
            }
        }
        var record =
            collection.records[StorageKey(key)] ?? Array(repeating: .null, count: collection.schema.columns.count)
        for (index, position) in layout.positions.enumerated() { record[position] = values[index] }
        record[layout.positions[layout.keyPosition]] = key
        collection.records[StorageKey(key)] = record
        try collection.checkUniqueIndexes()
        collections[name] = collection
        return key
    }

    func delete(from collection: String, key: StorageValue) throws -> Bool {
        guard try self.collection(collection) != nil else { return false }
        return collections[collection]!.records.removeValue(forKey: StorageKey(key)) != nil
    }

    func deleteAll(from name: String, where predicate: StoragePredicate?) throws -> [StorageValue] {
        guard let collection = try collection(name) else { return [] }
        let keyIndex = collection.schema.columnIndex(named: collection.schema.primaryKey)!
        let keys = collection.matching(predicate).map { $0[keyIndex] }.sorted { StorageValue.compare($0, $1) < 0 }
        for key in keys { collections[name]!.records[StorageKey(key)] = nil }
        return keys
    }

    func dropCollection(_ collection: String) throws {
        guard try self.collection(collection) != nil else { return }
        collections[collection] = nil
    }
}
