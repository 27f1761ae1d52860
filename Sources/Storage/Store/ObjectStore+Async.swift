public import Foundation

/// The `async` overloads: the same calls as the synchronous API, with the same names, so that
/// Swift picks them inside `async` code. Each runs its synchronous twin on the store's own
/// threads (`StoreExecutor`), never blocking a thread of Swift's cooperative pool while it waits
/// for the writer, a lock or the disk. The one-query reads (`fetch(_:id:)`, `fetchAll`, `count`)
/// run on the calling task instead when the backend can run them without waiting for anything
/// but their own work (`StorageBackend.readsWithoutWaiting`: LMDB, SQLite on a file, the file
/// archive), and go to the store's threads when it cannot. A task cancelled before its call
/// begins gets `CancellationError` and nothing is done; a call that has begun (a transaction
/// among them) runs to its end, committing or rolling back as a whole.
extension ObjectStore {
    // The two saves have the generic signatures of their blocking twins, the value handed over
    // (`sending`) instead of required to be `Sendable`; `SendableMetatype` (every type has it
    // but one whose conformances are isolated to an actor) because the store's threads use the
    // type's `Encodable` conformance. With `S: Sendable`, the type checker could still solve
    // `save(contentsOf: (0..<n).lazy.map { Member(…) })` through the async overload, but only
    // with a penalty (a `LazyMapSequence`'s `Sendable` conformance is unavailable), and there it
    // tried the closure's overloads of `Double(_:)`, `%` and `==` in every combination until it
    // gave up after 33 s, in sync and async code alike (issue 32). `sending` also lets async code
    // save values of non-`Sendable` types (it cannot touch them afterwards). The other pairs'
    // extra constraints (`T: Sendable` of a type the caller names, `R: Sendable` and the
    // `@Sendable` closure of `transaction` and `read`) cost nothing measurable: the files of
    // Tests/TypeCheckCorpus, which scripts/typecheck-corpus.sh type-checks in CI, have them all.

    /// Inserts `value`, or replaces the stored value with the same primary key; see `save(_:)`.
    /// - Parameter value: the value, handed over to the store's threads that encode it.
    /// - Returns: the value's primary key.
    /// - Throws: ``StorageError``, e.g. `.constraintViolation` (nothing is written then), or
    ///   `CancellationError` when the task was cancelled before the call began.
    @discardableResult
    public func save<T: Encodable & SendableMetatype>(_ value: sending T) async throws -> StorageValue {
        let handedOver = HandedOver(value)
        return try await perform { try self.save(handedOver.value) }
    }

    /// Saves every value in one transaction; see `save(contentsOf:)`.
    /// - Parameter values: the values, handed over: the store's threads iterate the sequence (a
    ///   lazy `map`'s closure runs there) and encode its elements.
    /// - Returns: the primary keys, in order.
    /// - Throws: ``StorageError``: all of the values are saved or, on any error, none; or
    ///   `CancellationError` when the task was cancelled before the call began.
    @discardableResult
    public func save<S: Sequence & SendableMetatype>(contentsOf values: sending S) async throws -> [StorageValue]
    where S.Element: Encodable {
        let handedOver = HandedOver(values)
        return try await perform { try self.save(contentsOf: handedOver.value) }
    }

    /// The value of `type` with primary key `id`, or nil; see `fetch(_:id:)`.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - id: the primary key.
    /// - Returns: the value, or `nil` when there is none.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    public func fetch<T: Decodable & Sendable>(_ type: T.Type, id: some StorageValueConvertible) async throws -> T? {
        let key = id.storageValue
        return try await performRead { try self.fetch(type, id: key) }
    }

    /// The values of `type` matching `predicate`; see `fetchAll(_:where:orderBy:limit:offset:)`.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - limit: at most this many values; `nil` for all.
    ///   - offset: how many matching values to skip first.
    /// - Returns: the values.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    public func fetchAll<T: Decodable & Sendable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        limit: Int? = nil,
        offset: Int = 0
    ) async throws -> [T] {
        try await performRead {
            try self.fetchAll(type, where: predicate, orderBy: ordering, limit: limit, offset: offset)
        }
    }

    /// The number of values of `type` matching `predicate`; see `count(_:where:)`.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - predicate: which values; `nil` for all.
    /// - Returns: how many there are.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    public func count<T: SendableMetatype>(_ type: T.Type, where predicate: StoragePredicate? = nil) async throws -> Int
    {
        try await performRead { try self.count(type, where: predicate) }
    }

    /// Deletes the value of `type` with primary key `id`; see `delete(_:id:)`.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - id: the primary key.
    /// - Returns: whether there was one.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    @discardableResult
    public func delete<T: SendableMetatype>(_ type: T.Type, id: some StorageValueConvertible) async throws -> Bool {
        let key = id.storageValue
        return try await perform { try self.delete(type, id: key) }
    }

    /// Deletes every value of `type` matching `predicate`; see `deleteAll(_:where:)`.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - predicate: which values; `nil` for all.
    /// - Returns: the number of values deleted.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    @discardableResult
    public func deleteAll<T: SendableMetatype>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil
    ) async throws
        -> Int
    {
        try await perform { try self.deleteAll(type, where: predicate) }
    }

    /// Runs `body` in one write transaction on the store's threads; see `transaction(_:)`.
    ///
    /// ```swift
    /// try await store.transaction { tx in
    ///     try tx.save(order)
    ///     try tx.delete(Cart.self, id: cartID)
    /// }
    /// ```
    /// `body` is synchronous: no `await` can happen while the engine's transaction is open.
    /// Once begun, it runs to its end even if the task is cancelled meanwhile.
    /// - Parameter body: the reads and writes.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws (nothing is committed then), a ``StorageError``, or
    ///   `CancellationError` when the task was cancelled before the transaction began.
    public func transaction<R: Sendable>(_ body: @escaping @Sendable (StoreTransaction) throws -> R) async throws -> R {
        try await perform { try self.transaction(body) }
    }

    /// Runs `body` in one read-only transaction on one snapshot, on the store's threads; see
    /// `read(_:)`.
    /// - Parameter body: the reads.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, a ``StorageError``, or `CancellationError` when the task was
    ///   cancelled before the transaction began.
    public func read<R: Sendable>(_ body: @escaping @Sendable (StoreReadTransaction) throws -> R) async throws -> R {
        try await perform { try self.read(body) }
    }

    /// Stores a JSON array of objects in `collection`, in one transaction; see
    /// `insert(jsonArray:into:primaryKey:)`.
    /// - Parameters:
    ///   - data: the JSON text.
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the member every object carries that identifies it (`"iata"`), or nil.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError``, e.g. `.invalidJSON`, `.invalidKey`, `.schemaMismatch` (nothing is
    ///   stored then), or `CancellationError` when the task was cancelled first.
    @discardableResult
    public func insert(
        jsonArray data: Data,
        into collection: String,
        primaryKey: String? = nil
    ) async throws -> Int {
        try await perform { try self.insert(jsonArray: data, into: collection, primaryKey: primaryKey) }
    }

    /// Stores dictionaries in `collection`, in one transaction; see
    /// `insert(dictionaries:into:primaryKey:)`.
    /// - Parameters:
    ///   - rows: the records (handed over: the caller keeps no access to them).
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the key every row carries that identifies it, or nil.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` (nothing is stored then), or `CancellationError` when the task
    ///   was cancelled first.
    @discardableResult
    public func insert(
        dictionaries rows: sending [[String: Any]],
        into collection: String,
        primaryKey: String? = nil
    ) async throws -> Int {
        let handedOver = HandedOver(rows)
        return try await perform {
            try self.insert(dictionaries: handedOver.value, into: collection, primaryKey: primaryKey)
        }
    }

    /// Stores the records of a CSV file in `collection`, in one transaction; see
    /// `insert(csv:into:primaryKey:progress:)`. Both passes over the file run on the store's
    /// threads.
    /// - Parameters:
    ///   - url: the CSV file.
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the column that identifies a record (default: `id` or an auto key).
    ///   - progress: called every few thousand records of each pass, on one of the store's threads.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` (`.invalidCSV` naming the line for malformed CSV; nothing is
    ///   stored then), or `CancellationError` when the task was cancelled first.
    @discardableResult
    public func insert(
        csv url: URL,
        into collection: String,
        primaryKey: String? = nil,
        progress: (@Sendable (StoreCopyProgress) -> Void)? = nil
    ) async throws -> Int {
        try await perform { try self.insert(csv: url, into: collection, primaryKey: primaryKey, progress: progress) }
    }

    /// Stores the records of CSV text in `collection`, in one transaction; see
    /// `insert(csv:into:primaryKey:progress:)`.
    /// - Parameters:
    ///   - data: the CSV text, UTF-8.
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the column that identifies a record (default: `id` or an auto key).
    ///   - progress: called every few thousand records of each pass, on one of the store's threads.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` (`.invalidCSV` naming the line for malformed CSV; nothing is
    ///   stored then), or `CancellationError` when the task was cancelled first.
    @discardableResult
    public func insert(
        csv data: Data,
        into collection: String,
        primaryKey: String? = nil,
        progress: (@Sendable (StoreCopyProgress) -> Void)? = nil
    ) async throws -> Int {
        try await perform { try self.insert(csv: data, into: collection, primaryKey: primaryKey, progress: progress) }
    }

    /// The number of records of the collection named `collection` matching `predicate`; see
    /// `count(in:where:)`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - predicate: the records to count; nil counts them all.
    /// - Returns: the count, 0 for a collection that was never created.
    /// - Throws: ``StorageError`` (`.invalidIdentifier`, `.unknownColumn`), or `CancellationError`
    ///   when the task was cancelled first.
    public func count(in collection: String, where predicate: StoragePredicate? = nil) async throws -> Int {
        try await performRead { try self.count(in: collection, where: predicate) }
    }

    /// Deletes the records of the collection named `collection` matching `predicate`, in one
    /// transaction; see `deleteAll(from:where:)`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - predicate: the records to delete; nil deletes them all (the collection remains).
    /// - Returns: the number of records deleted.
    /// - Throws: ``StorageError`` (`.invalidIdentifier`, `.unknownColumn`), or `CancellationError`
    ///   when the task was cancelled first.
    @discardableResult
    public func deleteAll(
        from collection: String,
        where predicate: StoragePredicate? = nil
    ) async throws -> Int {
        try await perform { try self.deleteAll(from: collection, where: predicate) }
    }

    /// The records of `collection` as dictionaries; see
    /// `fetchDictionaries(from:where:orderBy:limit:offset:)`.
    /// - Parameters:
    ///   - collection: the collection read.
    ///   - predicate: which records; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - limit: at most this many records; `nil` for all.
    ///   - offset: how many matching records to skip first.
    /// - Returns: one dictionary per record.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    public func fetchDictionaries(
        from collection: String,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        limit: Int? = nil,
        offset: Int = 0
    ) async throws -> [[String: StorageValue]] {
        try await perform {
            try self.fetchDictionaries(
                from: collection,
                where: predicate,
                orderBy: ordering,
                limit: limit,
                offset: offset
            )
        }
    }

    /// The names of the store's collections; see `collectionNames()`.
    /// - Returns: the names, sorted, reserved ones (such as `_settings`) left out.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    public func collectionNames() async throws -> [String] {
        try await perform { try self.collectionNames() }
    }

    /// The stored schema of `collection`; see `schema(of:)`.
    /// - Parameter collection: the collection's name.
    /// - Returns: the schema, or `nil` when there is no such collection.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    public func schema(of collection: String) async throws -> CollectionSchema? {
        try await perform { try self.schema(of: collection) }
    }

    /// Removes `collection` with its records, indexes and schema; see `drop(collection:)`.
    /// - Parameter collection: the collection's name.
    /// - Returns: whether there was such a collection.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    @discardableResult
    public func drop(collection: String) async throws -> Bool {
        try await perform { try self.drop(collection: collection) }
    }

    /// Closes the store, waiting (off the cooperative pool) for the calls in flight; see
    /// `close()`.
    /// - Throws: ``StorageError`` when the engine fails to close.
    public func close() async throws {
        // Not through `perform`: a closing store's executor refuses work, and cancellation
        // must not leave a store half closed.
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread { continuation.resume(with: Result { try self.close() }) }
            thread.name = "ObjectStore close"
            thread.start()
        }
    }
}

/// A value handed over with `sending` to the one job that uses it. `@unchecked Sendable`: the
/// caller gave up access to `value` (`sending`), and only that job reads it.
struct HandedOver<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: sending Value) { self.value = value }
}
