/// The seam between `ObjectStore` and a storage engine: small, record-level, transaction-scoped.
///
/// A backend stores records of named collections. A record is a list of `StorageValue`s for a
/// list of column names; the backend never sees a Swift model type. `ObjectStore` does the
/// reflection, the type mapping and the validation of names, and calls the backend inside
/// `read` and `write` transactions.
///
/// # Implementation requirements
///
/// To implement a backend (a new engine), provide `read` and `write` and the transaction types
/// they hand out, and make the shared conformance suite (`StorageTestSupport.ConformanceSuite`)
/// pass. In particular:
///
/// - `write` runs `body` in one engine transaction and commits when `body` returns. If `body`
///   throws, or the commit fails, nothing `body` did remains, and the error is rethrown
///   (engine failures as `StorageError`). Only one write transaction runs at a time in a process;
///   others wait.
/// - `read` runs `body` against one consistent snapshot of committed data. Readers should not wait
///   for the writer where the engine allows it.
/// - Transactions are only valid inside their closure; the closure is synchronous and never
///   suspends, so an engine transaction never spans an `await`.
/// - Values are stored and returned exactly as given (`ObjectStore` has already applied the
///   column's type affinity). Columns a record lacks read as `.null`.
/// - `prepareCollection` creates a missing collection, adds missing columns, widens integer
///   columns to real when asked, and creates missing indexes. It never drops data.
/// - Unique indexes are enforced: a violating `put` throws a `StorageError` with code
///   `.constraintViolation` and writes nothing. As in SQLite, null values never conflict.
/// - `scan` returns records in `ordering` (ties broken by primary key ascending, which
///   `ObjectStore` always appends), filtered by `predicate` with SQLite's semantics; a backend
///   that cannot compile a predicate uses `PredicateEvaluator`.
/// - Collection and column names are compared ignoring ASCII case, as SQLite compares them:
///   `Person` and `person` name the same collection.
/// - Names reaching a backend are valid identifiers (`ObjectStore` checks them), but a backend
///   must still quote them (SQL) or encode them (paths), and never build SQL from values.
public protocol StorageBackend: Sendable {
    /// Runs `body` in a read transaction over a consistent snapshot.
    func read<Result>(_ body: (any StorageReadTransaction) throws -> Result) throws -> Result

    /// Runs `body` in a write transaction that commits when it returns and rolls back when it throws.
    func write<Result>(_ body: (any StorageWriteTransaction) throws -> Result) throws -> Result
}

/// What a read transaction can do. Valid only inside the closure it was passed to.
public protocol StorageReadTransaction: AnyObject {
    /// The stored schema of a collection, or `nil` when it does not exist.
    func schema(of collection: String) throws -> CollectionSchema?

    /// Calls `body` with each record of `request`, in order, until it returns `false`.
    /// The row is only valid during the call.
    func scan(_ request: ScanRequest, _ body: (any StorageRow) throws -> Bool) throws

    /// The number of records of `collection` matching `predicate`.
    func count(in collection: String, where predicate: StoragePredicate?) throws -> Int

    /// Calls `body` with the record of `collection` whose primary key is `key`, if there is one.
    /// The row carries `columns`, and is only valid during the call.
    ///
    /// The default implementation is a `scan` with an equality on the key and a limit of one; a
    /// backend with a faster point look-up (a cached statement, a B-tree get) provides its own.
    /// - Returns: whether there was such a record.
    func get(
        _ collection: String,
        key: StorageValue,
        columns: [String],
        _ body: (any StorageRow) throws -> Void
    ) throws -> Bool
}

extension StorageReadTransaction {
    public func get(
        _ collection: String,
        key: StorageValue,
        columns: [String],
        _ body: (any StorageRow) throws -> Void
    ) throws -> Bool {
        guard let schema = try schema(of: collection) else { return false }
        var found = false
        let request = ScanRequest(
            collection: collection,
            columns: columns,
            predicate: .compare(schema.primaryKey, .equal, key),
            limit: 1
        )
        try scan(request) { row in
            try body(row)
            found = true
            return false
        }
        return found
    }
}

/// What a write transaction can do, in addition to reading its own writes.
public protocol StorageWriteTransaction: StorageReadTransaction {
    /// Creates or migrates a collection so it has at least `schema`'s columns and indexes.
    /// - Returns: the stored schema after the change.
    func prepareCollection(_ schema: CollectionSchema) throws -> CollectionSchema

    /// A writer that inserts or replaces records of `collection` laid out as `columns`.
    /// `columns` must include the primary key.
    func makeWriter(for collection: String, columns: [String]) throws -> any RecordWriter

    /// Deletes the record with primary key `key`.
    /// - Returns: whether a record was deleted.
    func delete(from collection: String, key: StorageValue) throws -> Bool

    /// Deletes every record matching `predicate`.
    /// - Returns: the primary keys of the deleted records.
    func deleteAll(from collection: String, where predicate: StoragePredicate?) throws -> [StorageValue]
}

/// Inserts or replaces records of one layout, inside one write transaction.
public protocol RecordWriter: AnyObject {
    /// Inserts the record, or replaces the one with the same primary key. In a collection with an
    /// auto-assigned key, a `.null` key gets the next key, never one used before.
    /// - Parameter values: one value per column of the writer, in order.
    /// - Returns: the record's primary key.
    @discardableResult
    func put(_ values: [StorageValue]) throws -> StorageValue
}

/// A read of a collection: which columns, which records, in which order, how many.
public struct ScanRequest: Sendable, Hashable {
    /// The collection read.
    public var collection: String
    /// The columns each row carries, in order. Columns the collection lacks read as `.null`.
    public var columns: [String]
    /// Which records; `nil` for all.
    public var predicate: StoragePredicate?
    /// The order of the rows.
    public var ordering: [Ordering]
    /// At most this many rows; `nil` for all.
    public var limit: Int?

    /// Creates a scan request.
    public init(
        collection: String,
        columns: [String],
        predicate: StoragePredicate? = nil,
        ordering: [Ordering] = [],
        limit: Int? = nil
    ) {
        self.collection = collection
        self.columns = columns
        self.predicate = predicate
        self.ordering = ordering
        self.limit = limit
    }
}

/// One record during a scan, read by column position. Valid only during the callback.
public protocol StorageRow {
    /// The value of the column at `index` of the request's `columns`.
    func value(at index: Int) -> StorageValue
}

/// A row that is a stored record seen through a column projection: the value at `index` is the
/// record's value at `positions[index]`, or `.null` where the record lacks that column. For
/// backends that keep records as `[StorageValue]` in their schema's column order.
package struct ProjectedRow: StorageRow {
    let values: [StorageValue]
    let positions: [Int?]

    /// A row of `values` (in schema order) projected by `positions` (a schema index per requested
    /// column, `nil` for a column the schema lacks).
    package init(values: [StorageValue], positions: [Int?]) {
        self.values = values
        self.positions = positions
    }

    package func value(at index: Int) -> StorageValue {
        positions[index].map { values[$0] } ?? .null
    }
}

/// Where a writer's columns sit in a schema's column order, for backends that keep records as
/// `[StorageValue]` in that order.
package struct WriterLayout: Sendable {
    /// The schema index of each of the writer's columns.
    package let positions: [Int]
    /// The index, among the writer's columns, of the primary key.
    package let keyPosition: Int

    /// The layout of `columns` in `schema`.
    /// - Throws: `StorageError` with code `.unknownColumn` for a column the schema lacks, or
    ///   `.invalidKey` when the columns lack the primary key.
    package init(columns: [String], in schema: CollectionSchema, collection: String) throws {
        positions = try columns.map { column in
            guard let position = schema.columnIndex(named: column) else {
                throw StorageError(
                    .unknownColumn,
                    "no column \(Identifier.quoted(column))",
                    collection: collection,
                    column: column
                )
            }
            return position
        }
        guard let keyPosition = columns.firstIndex(of: schema.primaryKey) else {
            throw StorageError(.invalidKey, "the writer's columns lack the primary key", collection: collection)
        }
        self.keyPosition = keyPosition
    }
}

/// A `RecordWriter` that hands each record to a closure: for backends whose transaction does the
/// writing itself.
package final class ForwardingRecordWriter: RecordWriter {
    private let body: ([StorageValue]) throws -> StorageValue

    /// A writer whose `put` calls `body`.
    package init(_ body: @escaping ([StorageValue]) throws -> StorageValue) {
        self.body = body
    }

    package func put(_ values: [StorageValue]) throws -> StorageValue {
        try body(values)
    }
}
