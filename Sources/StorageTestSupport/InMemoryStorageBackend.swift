import Foundation
public import Storage

/// A pure-Swift backend that keeps everything in memory. It proves the `StorageBackend`
/// protocol is engine-neutral (it answers every query with `PredicateEvaluator`), and gives
/// `Storage` tests that need no engine.
///
/// Write transactions work on a copy of the data and publish it on commit, so readers always see
/// a committed snapshot and never wait for the writer.
public final class InMemoryStorageBackend: StorageBackend {
    private let committed = Locked(Database())
    private let writerLock = NSLock()

    /// What its transactions add to the true row count when `ObjectStore` asks how many rows a
    /// scan yields (`expectedRowCount(of:)`), or `nil` to answer that it is not known: a wrong
    /// count must cost no record.
    public let expectedRowCountError: Int?

    /// An empty store.
    /// - Parameter expectedRowCountError: see the property of that name.
    public init(expectedRowCountError: Int? = nil) {
        self.expectedRowCountError = expectedRowCountError
    }

    private static let registry = Locked<[String: InMemoryStorageBackend]>([:])

    /// The in-memory store named `name`, created on first use: opening the same name again gives
    /// the same data, as reopening a file would.
    /// - Parameter name: the store's name.
    /// - Returns: the backend holding that store.
    public static func named(_ name: String) -> InMemoryStorageBackend {
        registry.withLock { stores in
            if let store = stores[name] { return store }
            let store = InMemoryStorageBackend()
            stores[name] = store
            return store
        }
    }

    /// Forgets the store named `name`.
    /// - Parameter name: the store's name.
    public static func remove(named name: String) {
        _ = registry.withLock { $0.removeValue(forKey: name) }
    }

    /// Runs `body` on a snapshot of the committed collections; never waits for the writer.
    /// - Parameter body: the reads; the transaction is valid only inside it.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func read<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result {
        let transaction = MemoryTransaction(
            database: committed.withLock { $0 },
            expectedRowCountError: expectedRowCountError
        )
        defer { transaction.isOpen = false }
        return try body(transaction)
    }

    /// Runs `body` on a copy of the collections and makes it current when `body` returns;
    /// writers take turns.
    /// - Parameter body: the writes; the transaction is valid only inside it.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, after discarding every change it made (for example
    ///   `StorageError` with code `.constraintViolation` from a unique index).
    public func write<Result>(_ body: (any BackendWriteTransaction) throws -> Result) throws -> Result {
        writerLock.lock()
        defer { writerLock.unlock() }
        let transaction = MemoryTransaction(
            database: committed.withLock { $0 },
            expectedRowCountError: expectedRowCountError
        )
        defer { transaction.isOpen = false }
        let result = try body(transaction)
        var database = transaction.database
        // Published with the data, so a reader never sees the new count with the old data.
        database.commitCount += 1
        committed.withLock { $0 = database }
        return result
    }
}

extension InMemoryStorageBackend: ExternalCommitCounter {
    /// The number of commits: several `ObjectStore`s may share one named store, and each one's
    /// settings cache must see the others' commits.
    /// - Returns: the number of commits so far.
    /// - Throws: nothing.
    public func externalCommitCount() throws -> UInt64 {
        committed.withLock { $0.commitCount }
    }
}

/// The whole store: a value, so a snapshot is a copy.
struct Database: Sendable {
    private var tables: [String: Table] = [:]
    /// The number of commits that made this snapshot (`ExternalCommitCounter`).
    var commitCount: UInt64 = 0

    /// The table of a collection; names match ASCII-case-insensitively, as in SQLite.
    subscript(table name: String) -> Table? {
        get { tables[Identifier.folded(name)] }
        set { tables[Identifier.folded(name)] = newValue }
    }

    /// The names of the tables, as created.
    var tableNames: [String] { tables.values.map(\.schema.name) }
}

struct Table: Sendable {
    var schema: CollectionSchema
    /// Records by primary key, compared as SQLite compares keys (text by its bytes, numbers as
    /// numbers); each record has one value per schema column, in schema order.
    var records: [StorageKey: [StorageValue]] = [:]
    var lastAssignedKey: Int64 = 0
}

final class MemoryTransaction: BackendWriteTransaction {
    /// Sorting goes through `PredicateEvaluator.precedes`, which reads nested fields.
    var ordersByNestedFields: Bool { true }

    var database: Database
    var isOpen = true
    let expectedRowCountError: Int?

    init(database: Database, expectedRowCountError: Int?) {
        self.database = database
        self.expectedRowCountError = expectedRowCountError
    }

    private func check() throws {
        guard isOpen else { throw StorageError(.misuse, "the transaction has ended") }
    }

    func schema(of collection: String) throws -> CollectionSchema? {
        try check()
        return database[table: collection]?.schema
    }

    func nextAutoKey(in collection: String) throws -> Int64? {
        try check()
        return database[table: collection].map { $0.lastAssignedKey + 1 }
    }

    func raiseNextAutoKey(in collection: String, to key: Int64) throws {
        try check()
        guard var table = database[table: collection] else { return }
        table.lastAssignedKey = max(table.lastAssignedKey, key - 1)
        database[table: collection] = table
    }

    func scan(_ request: ScanRequest, _ body: (any StorageRow) throws -> Bool) throws {
        try check()
        guard let table = database[table: request.collection] else { return }
        let positions = request.columns.map { table.schema.columnIndex(named: $0) }
        var matching = Self.matching(table, request.predicate)
        matching.sort { lhs, rhs in
            PredicateEvaluator.precedes(
                request.ordering,
                { Self.value(lhs, table.schema, $0) },
                { Self.value(rhs, table.schema, $0) }
            )
        }
        if request.offset > 0 { matching = Array(matching.dropFirst(request.offset)) }
        if let limit = request.limit { matching = Array(matching.prefix(limit)) }
        for record in matching where try !body(ProjectedRow(values: record, positions: positions)) { return }
    }

    func expectedRowCount(of request: ScanRequest) throws -> Int? {
        guard let error = expectedRowCountError else { return nil }
        var rows = 0
        try scan(request) { _ in
            rows += 1
            return true
        }
        return max(0, rows + error)
    }

    func count(in collection: String, where predicate: StoragePredicate?) throws -> Int {
        try check()
        guard let table = database[table: collection] else { return 0 }
        return Self.matching(table, predicate).count
    }

    func collectionNames() throws -> [String] {
        try check()
        return database.tableNames
    }

    func dropCollection(_ collection: String) throws {
        try check()
        database[table: collection] = nil
    }

    func get(
        _ collection: String,
        key: StorageValue,
        columns: [String],
        _ body: (any StorageRow) throws -> Void
    ) throws -> Bool {
        try check()
        guard let table = database[table: collection], let record = table.records[StorageKey(key)] else {
            return false
        }
        try body(ProjectedRow(values: record, positions: columns.map { table.schema.columnIndex(named: $0) }))
        return true
    }

    func prepareCollection(_ schema: CollectionSchema) throws -> CollectionSchema {
        try check()
        guard var table = database[table: schema.name] else {
            try schema.validateShape()
            database[table: schema.name] = Table(schema: schema)
            return schema
        }
        let merged = table.schema.merged(with: schema)
        try merged.validateShape()
        let added = merged.columns.count - table.schema.columns.count
        for (index, column) in merged.columns.enumerated().prefix(table.schema.columns.count)
        where column.type != table.schema.columns[index].type {
            for key in table.records.keys {
                table.records[key]![index] = table.records[key]![index].applyingAffinity(column.type)
            }
        }
        if added > 0 {
            for key in table.records.keys { table.records[key]! += Array(repeating: .null, count: added) }
        }
        table.schema = merged
        for index in merged.indexes where index.isUnique {
            try Self.checkUnique(table, index)
        }
        database[table: schema.name] = table
        return merged
    }

    func makeWriter(for collection: String, columns: [String]) throws -> any RecordWriter {
        try check()
        guard let schema = database[table: collection]?.schema else {
            throw StorageError(.misuse, "collection '\(collection)' was not prepared", collection: collection)
        }
        let layout = try WriterLayout(columns: columns, in: schema, collection: collection)
        return ForwardingRecordWriter { [self] values in
            try put(into: collection, positions: layout.positions, keyPosition: layout.keyPosition, values: values)
        }
    }

    func put(
        into collection: String,
        positions: [Int],
        keyPosition: Int,
        values: [StorageValue]
    ) throws
        -> StorageValue
    {
        try check()
        var table = database[table: collection]!
        var key = values[keyPosition]
        if key.isNull && table.schema.hasAutoKey {
            table.lastAssignedKey += 1
            key = .integer(table.lastAssignedKey)
        } else if case .integer(let number) = key, table.schema.hasAutoKey {
            table.lastAssignedKey = max(table.lastAssignedKey, number)
        }
        var record = table.records[StorageKey(key)] ?? Array(repeating: .null, count: table.schema.columns.count)
        for (index, position) in positions.enumerated() { record[position] = values[index] }
        record[positions[keyPosition]] = key
        table.records[StorageKey(key)] = record
        for index in table.schema.indexes where index.isUnique {
            try Self.checkUnique(table, index)
        }
        database[table: collection] = table
        return key
    }

    func delete(from collection: String, key: StorageValue) throws -> Bool {
        try check()
        return database[table: collection]?.records.removeValue(forKey: StorageKey(key)) != nil
    }

    func deleteAll(from collection: String, where predicate: StoragePredicate?) throws -> [StorageValue] {
        try check()
        guard let table = database[table: collection] else { return [] }
        let keyIndex = table.schema.columnIndex(named: table.schema.primaryKey)!
        let keys = Self.matching(table, predicate).map { $0[keyIndex] }.sorted { StorageValue.compare($0, $1) < 0 }
        for key in keys { database[table: collection]!.records.removeValue(forKey: StorageKey(key)) }
        return keys
    }

    private static func matching(_ table: Table, _ predicate: StoragePredicate?) -> [[StorageValue]] {
        let prepared = PreparedPredicate(predicate)
        return table.records.values.filter { record in
            prepared.matches { value(record, table.schema, $0) }
        }
    }

    private static func value(_ record: [StorageValue], _ schema: CollectionSchema, _ column: String) -> StorageValue {
        schema.columnIndex(named: column).map { record[$0] } ?? .null
    }

    private static func checkUnique(_ table: Table, _ index: IndexDefinition) throws {
        let positions = index.columns.compactMap { table.schema.columnIndex(named: $0) }
        var seen = Set<[StorageKey]>()
        for record in table.records.values {
            let values = positions.map { record[$0] }
            if values.contains(where: \.isNull) { continue }
            if !seen.insert(values.map(StorageKey.init)).inserted {
                throw StorageError(
                    .constraintViolation,
                    "unique index on \(index.columns.joined(separator: ", ")) would be violated by \(values)",
                    collection: table.schema.name,
                    column: index.columns.first
                )
            }
        }
    }
}
