public import Foundation

/// The seam between ``ObjectStore`` and a storage engine: small, record-level, transaction-scoped.
///
/// A backend stores records of named collections. A record is a list of ``StorageValue``s for a
/// list of column names; the backend never sees a Swift model type. ``ObjectStore`` does the
/// reflection, the type mapping and the validation of names, and calls the backend inside
/// `read` and `write` transactions.
///
/// # Implementation requirements
///
/// To implement a backend (a new engine), provide `read` and `write` and the transaction types
/// they hand out, and make the shared conformance suite (`StorageTestSupport.ConformanceSuite`)
/// pass. A backend in another package needs only public API: the helpers (``Identifier``,
/// ``StorePath``, ``OwningProcess``, `CollectionSchema.merged(with:)`, ``WriterLayout``,
/// ``ForwardingRecordWriter``, ``ProjectedRow``, ``PredicateEvaluator``) are public, and the suite is
/// the `StorageTestSupport` product (<doc:ImplementingABackend>).
/// In particular:
///
/// - `write` runs `body` in one engine transaction and commits when `body` returns. If `body`
///   throws, or the commit fails, nothing `body` did remains, and the error is rethrown
///   (engine failures as ``StorageError``). Only one write transaction runs at a time in a process;
///   others wait.
/// - `read` runs `body` against one consistent snapshot of committed data. Readers should not wait
///   for the writer where the engine allows it. `readSingleQuery` is a `read` whose closure makes
///   at most one query after its `schema(of:)` calls; its default implementation is `read`.
/// - Transactions are only valid inside their closure; the closure is synchronous and never
///   suspends, so an engine transaction never spans an `await`.
/// - Values are stored and returned exactly as given (``ObjectStore`` has already applied the
///   column's type affinity). Columns a record lacks read as `.null`.
/// - `prepareCollection` creates a missing collection, adds missing columns, widens integer
///   columns to real when asked, and creates missing indexes. It never drops data.
/// - Unique indexes are enforced: a violating `put` throws a ``StorageError`` with code
///   `.constraintViolation` and writes nothing. As in SQLite, null values never conflict.
/// - `scan` returns records in `ordering` (ties broken by primary key ascending, which
///   ``ObjectStore`` always appends), filtered by `predicate` with SQLite's semantics; a backend
///   that cannot compile a predicate (or a node of one: new kinds of node may be added, see
///   ``StoragePredicate``) uses ``PreparedPredicate`` or ``PredicateEvaluator``. IN lists may hold a
///   million values and `&&`/`||` chains tens of thousands of terms.
/// - Collection and column names are compared ignoring ASCII case, as SQLite compares them:
///   `Person` and `person` name the same collection.
/// - Names reaching a backend are valid identifiers (``ObjectStore`` checks them), but a backend
///   must still quote them (SQL) or encode them (paths), and never build SQL from values.
/// - `scan` skips the first `ScanRequest.offset` matching records (after ordering), then returns
///   at most `limit`.
/// - `collectionNames` lists every collection of the snapshot, as created (reserved names
///   starting with `_` included: ``ObjectStore`` filters them).
/// - `dropCollection` removes a collection's records, indexes and schema inside the write
///   transaction, so it is undone with the rest when the transaction rolls back; the name may be
///   used again afterwards, even in the same transaction.
/// - A backend opened read-only answers `isReadOnly` `true`, and its `write` throws
///   ``StorageError`` with code `.readOnly` and writes nothing; opening a store that does not
///   exist read-only throws `.cannotOpen` and creates nothing.
/// - `close` frees the engine's connections, file descriptors and maps. ``ObjectStore`` calls it
///   once, after every call in flight has returned, and calls nothing afterwards. It must not
///   wait without bound for another backend on the same files.
///
/// # Commits made elsewhere
///
/// A backend whose store other processes or machines also write (a database server) may adopt
/// ``ExternalCommitSource`` as well. ``ObjectStore`` then subscribes when it is first observed (its
/// first change stream or settings read, not when it is created) and feeds each reported commit into its change streams (`changes(of:)`) and its settings cache, exactly as
/// it does its own commits. A backend without it sees only its own commits in its change
/// streams; an embedded engine adopts ``ExternalCommitCounter`` so that ``Settings`` reads still see
/// other processes' commits.
///
/// - A backend whose store other processes (or other ``ObjectStore``s) may commit to adopts
///   ``ExternalCommitCounter``, so that ``Settings`` reads see their commits. A backend that does not
///   adopt it is taken to be the only writer of its data (as the in-memory backend is), and the
///   settings cache trusts what this store committed.
public protocol StorageBackend: Sendable {
    /// Runs `body` in a read transaction over a consistent snapshot.
    func read<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result

    /// Runs `body`, which reads records with at most one query, over a consistent snapshot.
    ///
    /// ``ObjectStore`` calls it instead of `read` for its one-query calls (`fetch(_:id:)`,
    /// `fetchAll`, `forEach`, `count`): `body` makes any number of `schema(of:)` calls and then
    /// at most one call that reads records or names (`get`, `scan`, `count`, `collectionNames`,
    /// `nextAutoKey`). A backend for which a transaction costs statements of its own (a database
    /// server's `BEGIN` and `COMMIT`) may run that one query on its own, as its own snapshot,
    /// provided the schema it planned the query with belongs to the same snapshot: when
    /// `schema(of:)` must read the store's catalog (a second query), the backend opens a
    /// transaction first, as `read` would.
    ///
    /// The default implementation calls `read(body)`.
    /// - Parameter body: the reads; the transaction is valid only inside it.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or a ``StorageError`` for an engine failure, as `read` does.
    func readSingleQuery<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result

    /// Whether `readSingleQueryWithoutWaiting` may run reads at all: ``ObjectStore`` then tries
    /// the `async` overloads of its one-query reads on the calling task first (see below).
    ///
    /// The default is `false`.
    var readsWithoutWaiting: Bool { get }

    /// Runs `body` as `readSingleQuery` does, on the calling thread, when the backend can do it
    /// waiting for nothing but its own work (CPU and the pages or bytes it reads): not for the
    /// writer, a lock another transaction or process holds, a busy handler, a map change, a
    /// reload or a server. When it would have to wait, it returns `nil` instead, having
    /// delivered nothing (`body` may have begun and been abandoned: it only reads).
    ///
    /// ``ObjectStore``'s `async` `fetch(_:id:)`, `fetchAll`, `count` call it on the caller's task
    /// (a thread of Swift's cooperative pool) when `readsWithoutWaiting` is `true`, and hand the
    /// call to the store's own threads when it returns `nil`: a read that costs microseconds
    /// then costs no thread hand-off, and a read that would block never blocks the pool.
    ///
    /// The default implementation returns `nil`.
    /// - Parameter body: the reads, as for `readSingleQuery`.
    /// - Returns: what `body` returns, or `nil` when the read would have waited.
    /// - Throws: what `body` throws, or a ``StorageError`` for an engine failure, as `read` does.
    func readSingleQueryWithoutWaiting<Result>(
        _ body: (any BackendReadTransaction) throws -> Result
    ) throws -> Result?

    /// Runs `body` in a write transaction that commits when it returns and rolls back when it throws.
    func write<Result>(_ body: (any BackendWriteTransaction) throws -> Result) throws -> Result

    /// Whether the backend was opened read-only (`readOnly: true` in its configuration): its
    /// `write` throws ``StorageError`` with code `.readOnly` and writes nothing, and
    /// ``ObjectStore`` refuses every write with that code before it asks the backend for a
    /// transaction.
    ///
    /// The default is `false`.
    var isReadOnly: Bool { get }

    /// Frees the engine's resources (connections, file descriptors, maps). Later calls of
    /// `read` and `write` may fail with any error; ``ObjectStore`` makes none.
    ///
    /// The default implementation does nothing: a backend holding nothing but memory has
    /// nothing to free before it is released.
    /// - Throws: ``StorageError`` when the engine fails to close cleanly.
    func close() throws
}

extension StorageBackend {
    /// Does nothing: the default for a backend that holds only memory.
    /// - Throws: nothing.
    public func close() throws {}

    /// Runs `body` in a read transaction: the default for a backend whose transactions cost no
    /// statements of their own.
    /// - Parameter body: the reads; the transaction is valid only inside it.
    /// - Returns: what `body` returns.
    /// - Throws: what `read` throws.
    public func readSingleQuery<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result {
        try read(body)
    }

    /// `false`: the default, a backend whose reads run on the store's own threads.
    public var readsWithoutWaiting: Bool { false }

    /// `false`: the default, a backend that writes.
    public var isReadOnly: Bool { false }

    /// Returns `nil` without running `body`: the default, a backend whose reads may always wait.
    /// - Parameter body: the reads (not run).
    /// - Returns: `nil`.
    /// - Throws: nothing.
    public func readSingleQueryWithoutWaiting<Result>(
        _ body: (any BackendReadTransaction) throws -> Result
    ) throws -> Result? {
        nil
    }
}

/// A backend that can report the commits other processes or machines make to its store; see
/// "Commits made elsewhere" in ``StorageBackend``.
///
/// Implementation requirements: call `handler` once per commit made by anyone but this backend
/// instance, after it committed, in commit order, with one ``CollectionChange`` per collection the
/// commit touched (each key once, in `upserted` or `deleted`, however many keys there are). Never
/// call it for this instance's own commits, which ``ObjectStore`` already publishes. Calls come
/// from a thread of the backend's own; the handler does not block.
///
/// ``ObjectStore`` starts the reports lazily: it calls `observeExternalCommits(_:)` the first time
/// the store is observed (its first change stream, the first ``Settings`` value it is about to
/// cache, the first settings subscription), never for a store that is not observed, so a
/// backend's listening costs (a connection, a thread, a wake-up per commit) are paid only by
/// stores that use them.
public protocol ExternalCommitSource: StorageBackend {
    /// Starts reporting commits made elsewhere to `handler`, until the backend is closed or
    /// released. Called at most once per ``ObjectStore``, when it is first observed, possibly
    /// long after the backend was opened, and never after ``StorageBackend/close()``.
    ///
    /// Returns only once reporting is in effect: a commit made elsewhere after it returns must be
    /// reported (when the backend cannot reach its engine then, it reports from the moment it can).
    /// - Parameter handler: called with the changes of each commit made elsewhere, on a thread of
    ///   the backend's.
    func observeExternalCommits(_ handler: @escaping @Sendable ([CollectionChange]) -> Void)
}

/// A backend whose store other processes may commit to, and that can tell with one cheap check
/// whether anything was committed since it last looked: an embedded engine's change counter
/// (SQLite's `PRAGMA data_version`, LMDB's last transaction id, a commit counter in a lock file).
///
/// ``ObjectStore`` reads it before serving a ``Settings`` value from its cache, and drops the cache
/// when the count moved. It is read on every settings read, so it must be cheap, and it must
/// never take or wait for the writer.
///
/// Engines that push notifications of other processes' commits (a database server) adopt
/// ``ExternalCommitSource`` instead, which also feeds the change streams; a counter only tells
/// that something changed, not what.
public protocol ExternalCommitCounter: StorageBackend {
    /// A count of the store's commits: two calls return the same value only if no commit, by any
    /// process, happened in between. It may also move on this store's own commits or without a
    /// commit (that only costs a re-read); it must not stay the same across a commit.
    /// - Returns: the current count.
    /// - Throws: ``StorageError`` when the engine cannot be asked.
    func externalCommitCount() throws -> UInt64
}

/// What a read transaction can do. Valid only inside the closure it was passed to.
public protocol BackendReadTransaction: AnyObject {
    /// The stored schema of a collection, or `nil` when it does not exist.
    func schema(of collection: String) throws -> CollectionSchema?

    /// Calls `body` with each record of `request`, in order, until it returns `false`.
    /// The row is only valid during the call.
    func scan(_ request: ScanRequest, _ body: (any StorageRow) throws -> Bool) throws

    /// The number of records of `collection` matching `predicate`.
    func count(in collection: String, where predicate: StoragePredicate?) throws -> Int

    /// The names of every collection in the snapshot, as they were created.
    func collectionNames() throws -> [String]

    /// The key the backend would assign next in an auto-keyed collection: one more than any key
    /// it ever assigned or was given there, the keys of deleted records included.
    ///
    /// `ObjectStore.copy(to:)` carries it over so that a copy never reuses a key the source
    /// assigned and later deleted. The default implementation returns `nil` (not known).
    /// - Parameter collection: the name of an auto-keyed collection.
    /// - Returns: the next auto-assigned key, or `nil` when the backend does not tell it.
    /// - Throws: ``StorageError`` with `.io` or `.engine` when it cannot be read.
    func nextAutoKey(in collection: String) throws -> Int64?

    /// How many rows `scan(request)` yields in this snapshot, when the backend knows it without
    /// reading them (a stored count), or `nil`. `ObjectStore.fetchAll` then decodes the records
    /// straight into an array of that capacity: a result of ten million records is not gathered
    /// in one buffer and copied into another. A count that turns out too small costs a copy of
    /// the records past it, never a record. The default implementation returns `nil`.
    /// - Parameter request: the scan about to run.
    /// - Returns: the number of rows, or `nil` when it is not known cheaply.
    /// - Throws: ``StorageError`` when the engine cannot be asked.
    func expectedRowCount(of request: ScanRequest) throws -> Int?

    /// A number that names the schemas this transaction reads: two read transactions of one
    /// backend that answer the same number read the same schema for every collection, so a
    /// collection's schema, checked once at a stamp, need not be read again at that stamp.
    ///
    /// `ObjectStore.fetch(_:id:)` checks the schema of the type's collection against its kept
    /// look-up plan only when the stamp moved (a schema read and compared was about a thirtieth
    /// of a key look-up on SQLite). SQLite answers its schema version, which every schema
    /// change by any connection moves on; LMDB the id of the committed snapshot, which every
    /// commit moves on. A write transaction answers `nil`: its own
    /// uncommitted changes are not facts of any stamp. The default implementation returns
    /// `nil` (no such number: every look-up reads the schema).
    var schemaStamp: Int64? { get }

    /// Whether `scan` sorts by a field inside a column's JSON text when an ordering has a
    /// ``Ordering/path``; see the default implementation.
    var ordersByNestedFields: Bool { get }

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

extension BackendReadTransaction {
    /// Whether `scan` sorts by a field inside a column's JSON text when an ordering has a
    /// ``Ordering/path`` (as ``PredicateEvaluator/precedes(_:_:_:)`` and
    /// ``Ordering/value(from:)`` do). `false` by default: the store then refuses a query ordered
    /// by a nested field with ``StorageError/Code/invalidQuery`` rather than hand the backend an
    /// ordering it would read as one by the whole column. A backend that sorts with
    /// `PredicateEvaluator.precedes` answers `true`. Filters on nested fields need no such
    /// answer: a predicate node a backend does not know is evaluated with ``PreparedPredicate``.
    public var ordersByNestedFields: Bool { false }

    /// Reads the record whose primary key is `key` through `scan`, with an equality on the
    /// primary key and a limit of 1. A backend with a faster look-up by key implements it.
    /// - Parameters:
    ///   - collection: the collection read.
    ///   - key: the primary key looked up.
    ///   - columns: the columns `body` reads, by position.
    ///   - body: called once with the record when it exists.
    /// - Returns: whether the record exists.
    /// - Throws: what `scan` or `body` throws.
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
public protocol BackendWriteTransaction: BackendReadTransaction {
    /// Creates or migrates a collection so it has at least `schema`'s columns and indexes.
    /// - Returns: the stored schema after the change.
    func prepareCollection(_ schema: CollectionSchema) throws -> CollectionSchema

    /// Whether `prepareCollection` creates indexes on nested fields
    /// (``IndexDefinition/path``, an expression index) and reads them back in the stored schema;
    /// see the default implementation.
    var indexesNestedFields: Bool { get }

    /// A writer that inserts or replaces records of `collection` laid out as `columns`.
    /// `columns` must include the primary key.
    func makeWriter(for collection: String, columns: [String]) throws -> any RecordWriter

    /// Deletes the record with primary key `key`.
    /// - Returns: whether a record was deleted.
    func delete(from collection: String, key: StorageValue) throws -> Bool

    /// Deletes every record matching `predicate`.
    /// - Returns: the primary keys of the deleted records.
    func deleteAll(from collection: String, where predicate: StoragePredicate?) throws -> [StorageValue]

    /// Removes `collection` with its records, indexes and schema; nothing when it does not exist.
    /// ``ObjectStore`` deletes the records first (to report their keys), so the collection is
    /// usually empty by then.
    func dropCollection(_ collection: String) throws

    /// Raises the next auto-assigned key of `collection` to at least `key`; a lower `key` changes
    /// nothing.
    ///
    /// The default implementation does nothing, so a backend without it still keeps its own
    /// sequence (past every key written to it).
    /// - Parameters:
    ///   - collection: the name of an existing auto-keyed collection.
    ///   - key: the smallest key the backend may assign next.
    /// - Throws: ``StorageError`` with `.io` or `.engine` when it cannot be written.
    func raiseNextAutoKey(in collection: String, to key: Int64) throws
}

extension BackendReadTransaction {
    /// Not known: `nil`. Backends that keep an auto-key sequence override it.
    /// - Parameter collection: the name of an auto-keyed collection.
    /// - Returns: `nil`.
    /// - Throws: never.
    public func nextAutoKey(in collection: String) throws -> Int64? { nil }

    /// Not known.
    /// - Parameter request: the scan about to run.
    /// - Returns: `nil`.
    /// - Throws: never.
    public func expectedRowCount(of request: ScanRequest) throws -> Int? { nil }

    /// Not known: `nil`, so every look-up reads the collection's schema.
    public var schemaStamp: Int64? { nil }
}

extension BackendWriteTransaction {
    /// `false`: the store leaves indexes on nested fields out of the schemas it prepares, so a
    /// backend that knows only column indexes never sees one (it would index the whole column).
    public var indexesNestedFields: Bool { false }

    /// Does nothing. Backends that keep an auto-key sequence override it.
    /// - Parameters:
    ///   - collection: the name of an auto-keyed collection.
    ///   - key: the smallest key the backend may assign next.
    /// - Throws: never.
    public func raiseNextAutoKey(in collection: String, to key: Int64) throws {}
}

/// Inserts or replaces records of one layout, inside one write transaction.
public protocol RecordWriter: AnyObject {
    /// Inserts the record, or replaces the one with the same primary key. In a collection with an
    /// auto-assigned key, a `.null` key gets the next key, never one used before.
    /// - Parameter values: one value per column of the writer, in order.
    /// - Returns: the record's primary key.
    /// - Throws: ``StorageError``: `.constraintViolation` when a unique index already holds the
    ///   values (nothing is written), `.invalidKey` for a key the engine cannot store,
    ///   `.limitExceeded` past an engine's limit, or an engine failure (`.io`, `.busy`, ...).
    @discardableResult
    func put(_ values: [StorageValue]) throws -> StorageValue

    /// Announces that about `count` more records are coming through this writer's transaction,
    /// before the first of them is put, so a backend can make room for them at once (LMDB sizes
    /// its map for the batch) instead of growing step by step. A hint: fewer or more may come.
    /// - Parameter count: how many records the caller expects to put; 0 when it does not know.
    /// - Throws: a `StorageError` the backend chooses; the default does nothing and never throws.
    func expectRecords(_ count: Int) throws
}

extension RecordWriter {
    /// Ignores the hint: a backend that needs no room made in advance.
    /// - Parameter count: how many records are expected.
    /// - Throws: never.
    public func expectRecords(_ count: Int) throws {}
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
    /// How many matching rows to skip (in `ordering`) before the first one returned; never negative.
    public var offset: Int

    /// Creates a scan request.
    /// - Parameters:
    ///   - collection: the collection read.
    ///   - columns: the columns the rows hold, in order.
    ///   - predicate: which records; `nil` for all.
    ///   - ordering: the order; ``ObjectStore`` appends the primary key to break ties.
    ///   - limit: at most this many records; `nil` for all.
    ///   - offset: how many matching records to skip first.
    public init(
        collection: String,
        columns: [String],
        predicate: StoragePredicate? = nil,
        ordering: [Ordering] = [],
        limit: Int? = nil,
        offset: Int = 0
    ) {
        self.collection = collection
        self.columns = columns
        self.predicate = predicate
        self.ordering = ordering
        self.limit = limit
        self.offset = offset
    }
}

/// One record during a scan, read by column position. Valid only during the callback.
///
/// Only `value(at:)` is required. The typed reads (`text(at:)`, `integer(at:)`, `real(at:)`,
/// `blob(at:)`) let the decoder of model values read a column without building a
/// ``StorageValue`` first; their default implementations go through `value(at:)`, and a backend
/// that can read its values in place provides its own. Each must answer exactly what `value(at:)`
/// holds: the payload when the value is of that kind, `nil` when it is of any other kind.
public protocol StorageRow {
    /// The value of the column at `index` of the request's `columns`.
    func value(at index: Int) -> StorageValue

    /// The text of the column at `index`, or `nil` when its value is not text.
    /// - Parameter index: a position in the request's `columns`.
    /// - Returns: the text, or `nil` when `value(at: index)` is not `.text`.
    func text(at index: Int) -> String?

    /// The integer of the column at `index`, or `nil` when its value is not an integer.
    /// - Parameter index: a position in the request's `columns`.
    /// - Returns: the integer, or `nil` when `value(at: index)` is not `.integer`.
    func integer(at index: Int) -> Int64?

    /// The real number of the column at `index`, or `nil` when its value is not a real.
    /// - Parameter index: a position in the request's `columns`.
    /// - Returns: the number, or `nil` when `value(at: index)` is not `.real`.
    func real(at index: Int) -> Double?

    /// The bytes of the column at `index`, or `nil` when its value is not a blob.
    /// - Parameter index: a position in the request's `columns`.
    /// - Returns: the bytes, or `nil` when `value(at: index)` is not `.blob`.
    func blob(at index: Int) -> Data?

    /// Calls `body` with the UTF-8 bytes of the text of the column at `index`, without making a
    /// `String`: the store groups aggregates by them. The bytes are valid only during the call.
    /// - Parameters:
    ///   - index: a position in the request's `columns`.
    ///   - body: called with the text's bytes as stored: those of the `String` `text(at: index)`
    ///     answers, unless they are not valid UTF-8 (which that `String` repairs).
    /// - Returns: what `body` returns, or `nil` (without calling it) when the value is not text.
    /// - Throws: what `body` throws.
    func withText<Result>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result?
}

extension StorageRow {
    /// Reads through `value(at:)`.
    /// - Parameter index: a position in the request's `columns`.
    /// - Returns: the text, or `nil` when the value is not `.text`.
    public func text(at index: Int) -> String? {
        guard case .text(let text) = value(at: index) else { return nil }
        return text
    }

    /// Reads through `value(at:)`.
    /// - Parameter index: a position in the request's `columns`.
    /// - Returns: the integer, or `nil` when the value is not `.integer`.
    public func integer(at index: Int) -> Int64? {
        guard case .integer(let number) = value(at: index) else { return nil }
        return number
    }

    /// Reads through `value(at:)`.
    /// - Parameter index: a position in the request's `columns`.
    /// - Returns: the number, or `nil` when the value is not `.real`.
    public func real(at index: Int) -> Double? {
        guard case .real(let number) = value(at: index) else { return nil }
        return number
    }

    /// Reads through `value(at:)`.
    /// - Parameter index: a position in the request's `columns`.
    /// - Returns: the bytes, or `nil` when the value is not `.blob`.
    public func blob(at index: Int) -> Data? {
        guard case .blob(let data) = value(at: index) else { return nil }
        return data
    }

    /// Reads through `text(at:)`.
    /// - Parameters:
    ///   - index: a position in the request's `columns`.
    ///   - body: called with the text's UTF-8 bytes.
    /// - Returns: what `body` returns, or `nil` when the value is not `.text`.
    /// - Throws: what `body` throws.
    public func withText<Result>(
        at index: Int,
        _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result? {
        guard var text = text(at: index) else { return nil }
        return try text.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}

/// A row that is a stored record seen through a column projection: the value at `index` is the
/// record's value at `positions[index]`, or `.null` where the record lacks that column. For
/// backends that keep records as `[StorageValue]` in their schema's column order.
public struct ProjectedRow: StorageRow {
    let values: [StorageValue]
    let positions: [Int?]

    /// A row of `values` (in schema order) projected by `positions` (a schema index per requested
    /// column, `nil` for a column the schema lacks).
    /// - Parameters:
    ///   - values: a stored record, one value per schema column.
    ///   - positions: for each requested column, its schema index, or `nil`.
    public init(values: [StorageValue], positions: [Int?]) {
        self.values = values
        self.positions = positions
    }

    /// The record's value for requested column `index`, or `.null` where the record lacks it.
    /// - Parameter index: a position in the request's `columns`.
    /// - Returns: the value.
    public func value(at index: Int) -> StorageValue {
        positions[index].map { values[$0] } ?? .null
    }
}

/// Where a writer's columns sit in a schema's column order, for backends that keep records as
/// `[StorageValue]` in that order.
public struct WriterLayout: Sendable {
    /// The schema index of each of the writer's columns.
    public let positions: [Int]
    /// The index, among the writer's columns, of the primary key.
    public let keyPosition: Int

    /// The layout of `columns` in `schema`.
    /// - Parameters:
    ///   - columns: the writer's columns, as `makeWriter(for:columns:)` received them.
    ///   - schema: the collection's stored schema.
    ///   - collection: the collection, named in errors.
    /// - Throws: ``StorageError`` with code `.unknownColumn` for a column the schema lacks, or
    ///   `.invalidKey` when the columns lack the primary key.
    public init(columns: [String], in schema: CollectionSchema, collection: String) throws {
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

/// A ``RecordWriter`` that hands each record to a closure: for backends whose transaction does the
/// writing itself.
public final class ForwardingRecordWriter: RecordWriter {
    private let body: ([StorageValue]) throws -> StorageValue

    /// A writer whose `put` calls `body`.
    /// - Parameter body: inserts or replaces one record and returns its primary key.
    public init(_ body: @escaping ([StorageValue]) throws -> StorageValue) {
        self.body = body
    }

    /// Hands the record to the closure.
    /// - Parameter values: one value per column of the writer, in order.
    /// - Returns: the record's primary key.
    /// - Throws: whatever the closure throws.
    public func put(_ values: [StorageValue]) throws -> StorageValue {
        try body(values)
    }
}
