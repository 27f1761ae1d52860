import Foundation

/// The handle `ObjectStore.read(_:)` passes to its closure: the read calls of the store, all
/// on one snapshot. Valid only inside the closure, on the thread running it.
///
/// ``StoreTransaction``, the handle of `ObjectStore.transaction(_:)`, has these calls too, and
/// its reads see its own writes.
public class StoreReadTransaction {
    private let session: Session
    private let thread = pthread_self()
    private var isOpen = true

    init(session: Session) {
        self.session = session
    }

    func close() { isOpen = false }

    func open() throws -> Session {
        guard isOpen, pthread_equal(thread, pthread_self()) != 0 else {
            throw StorageError(
                .misuse,
                "a transaction handle was used outside its transaction closure, or from another thread"
            )
        }
        return session
    }

    /// The value with primary key `id`; see `ObjectStore.fetch(_:id:)`.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - id: the primary key.
    /// - Returns: the value, or `nil` when there is none.
    /// - Throws: ``StorageError`` when the store fails or the stored value does not fit `type`.
    public func fetch<T: Decodable>(_ type: T.Type, id: some StorageValueConvertible) throws -> T? {
        try open().fetch(type, id: id.storageValue)
    }

    /// The matching values; see `ObjectStore.fetchAll(_:where:orderBy:limit:offset:)`.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - limit: at most this many values; `nil` for all.
    ///   - offset: how many matching values to skip first.
    /// - Returns: the values.
    /// - Throws: ``StorageError``, e.g. `.unknownColumn` for a column the collection lacks.
    public func fetchAll<T: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        limit: Int? = nil,
        offset: Int = 0
    ) throws -> [T] {
        try open().fetchAll(type, where: predicate, orderBy: ordering, limit: limit, offset: offset)
    }

    /// The number of matching values.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - predicate: which values; `nil` for all.
    /// - Returns: how many there are.
    /// - Throws: ``StorageError``, e.g. `.unknownColumn` for a column the collection lacks.
    public func count<T>(_ type: T.Type, where predicate: StoragePredicate? = nil) throws -> Int {
        try open().count(type, where: predicate)
    }

    /// Calls `body` with each matching value; see `ObjectStore.forEach(_:where:orderBy:_:)`.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - body: called with each value.
    /// - Throws: what `body` throws, or a ``StorageError``.
    public func forEach<T: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        _ body: (T) throws -> Void
    ) throws {
        try open().scan(type, where: predicate, orderBy: ordering, limit: nil) { value in
            try body(value)
            return true
        }
    }

    /// The records of `collection` as dictionaries; see
    /// `ObjectStore.fetchDictionaries(from:where:orderBy:limit:offset:)`.
    /// - Parameters:
    ///   - collection: the collection read.
    ///   - predicate: which records; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - limit: at most this many records; `nil` for all.
    ///   - offset: how many matching records to skip first.
    /// - Returns: one dictionary of every stored column per record.
    /// - Throws: ``StorageError``, e.g. `.unknownColumn` for a column the collection lacks.
    public func fetchDictionaries(
        from collection: String,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        limit: Int? = nil,
        offset: Int = 0
    ) throws -> [[String: StorageValue]] {
        try open().fetchDictionaries(
            from: collection,
            where: predicate,
            orderBy: ordering,
            limit: limit,
            offset: offset
        )
    }

    /// The number of records of the collection named `collection` matching `predicate`; see
    /// `ObjectStore.count(in:where:)`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - predicate: the records to count; nil counts them all.
    /// - Returns: the count, 0 for a collection that was never created.
    /// - Throws: ``StorageError`` with `.invalidIdentifier` for a bad name, `.unknownColumn` for a
    ///   predicate naming a column the collection does not have.
    public func count(in collection: String, where predicate: StoragePredicate? = nil) throws -> Int {
        try Identifier.validateCollection(collection)
        return try open().count(in: collection, where: predicate)
    }

    /// The names of the collections; see `ObjectStore.collectionNames()`.
    /// - Returns: the names, sorted.
    /// - Throws: ``StorageError`` when the store fails.
    public func collectionNames() throws -> [String] {
        try open().collectionNames()
    }

    /// The stored schema of `collection`; see `ObjectStore.schema(of:)`.
    /// - Parameter collection: the collection's name.
    /// - Returns: the schema, or `nil` when there is no such collection.
    /// - Throws: ``StorageError`` with `.invalidIdentifier` for a name that is not allowed.
    public func schema(of collection: String) throws -> CollectionSchema? {
        try open().schema(of: collection)
    }
}

/// The handle `ObjectStore.transaction(_:)` passes to its closure: the same calls as the store,
/// all inside one write transaction, seeing its own writes. Valid only inside the closure, on
/// the thread running it.
public class StoreTransaction: StoreReadTransaction {
    /// The store's change streams, which an update asks whether anyone observes.
    var changeHub: ChangeHub?

    /// Inserts or replaces `value`; see `ObjectStore.save(_:)`.
    /// - Parameter value: the value.
    /// - Returns: its primary key.
    /// - Throws: ``StorageError``, e.g. `.constraintViolation`.
    @discardableResult
    public func save<T: Encodable>(_ value: T) throws -> StorageValue {
        try open().save(one: value)
    }

    /// Inserts or replaces every value; see `ObjectStore.save(contentsOf:)`.
    /// - Parameter values: the values.
    /// - Returns: their primary keys, in order.
    /// - Throws: ``StorageError``, e.g. `.constraintViolation`.
    @discardableResult
    public func save<S: Sequence>(contentsOf values: S) throws -> [StorageValue] where S.Element: Encodable {
        try open().save(values)
    }

    /// Stores dictionaries in `collection`; see `ObjectStore.insert(dictionaries:into:primaryKey:)`.
    /// - Parameters:
    ///   - rows: the records.
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the key every row carries that identifies it, or nil.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError``, e.g. `.invalidIdentifier` for a key that is no valid column name,
    ///   `.invalidKey` for a row without its `primaryKey`.
    @discardableResult
    public func insert(
        dictionaries rows: [[String: Any]],
        into collection: String,
        primaryKey: String? = nil
    ) throws -> Int {
        try open().insert(dictionaries: rows, into: collection, primaryKey: primaryKey).count
    }

    /// Deletes the records of the collection named `collection` matching `predicate`; see
    /// `ObjectStore.deleteAll(from:where:)`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - predicate: the records to delete; nil deletes them all (the collection remains).
    /// - Returns: the number of records deleted.
    /// - Throws: ``StorageError`` with `.invalidIdentifier` for a bad name, `.unknownColumn` for a
    ///   predicate naming a column the collection does not have.
    @discardableResult
    public func deleteAll(from collection: String, where predicate: StoragePredicate? = nil) throws -> Int {
        try Identifier.validateCollection(collection)
        return try open().deleteAll(from: collection, where: predicate).count
    }

    /// Deletes the value with primary key `id`.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - id: the primary key.
    /// - Returns: whether there was one.
    /// - Throws: ``StorageError`` when the store fails.
    @discardableResult
    public func delete<T>(_ type: T.Type, id: some StorageValueConvertible) throws -> Bool {
        try open().delete(type, id: id.storageValue)
    }

    /// Deletes the matching values.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - predicate: which values; `nil` for all.
    /// - Returns: the number deleted.
    /// - Throws: ``StorageError`` when the store fails.
    @discardableResult
    public func deleteAll<T>(_ type: T.Type, where predicate: StoragePredicate? = nil) throws -> Int {
        try open().deleteAll(type, where: predicate).count
    }

    /// Removes `collection`; see `ObjectStore.drop(collection:)`.
    /// - Parameter collection: the collection's name.
    /// - Returns: whether it existed.
    /// - Throws: ``StorageError`` with `.invalidIdentifier` for a name that is not allowed.
    @discardableResult
    public func drop(collection: String) throws -> Bool {
        try open().drop(collection: collection)
    }
}
