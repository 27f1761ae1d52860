import Foundation

/// The handle `ObjectStore.transaction(_:)` passes to its closure: the same calls as the store,
/// all inside one write transaction, seeing its own writes. Valid only inside the closure, on
/// the thread running it.
public final class StoreTransaction {
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

    /// Inserts or replaces `value`; see `ObjectStore.save(_:)`.
    @discardableResult
    public func save<T: Encodable>(_ value: T) throws -> StorageValue {
        try open().save(CollectionOfOne(value))[0]
    }

    /// Inserts or replaces every value; see `ObjectStore.save(contentsOf:)`.
    @discardableResult
    public func save<S: Sequence>(contentsOf values: S) throws -> [StorageValue] where S.Element: Encodable {
        try open().save(values)
    }

    /// The value with primary key `id`, including this transaction's own writes.
    public func fetch<T: Decodable>(_ type: T.Type, id: some StorageValueConvertible) throws -> T? {
        try open().fetch(type, id: id.storageValue)
    }

    /// The matching values; see `ObjectStore.fetchAll(_:where:orderBy:limit:)`.
    public func fetchAll<T: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        limit: Int? = nil
    ) throws -> [T] {
        try open().fetchAll(type, where: predicate, orderBy: ordering, limit: limit)
    }

    /// The number of matching values.
    public func count<T>(_ type: T.Type, where predicate: StoragePredicate? = nil) throws -> Int {
        try open().count(type, where: predicate)
    }

    /// Calls `body` with each matching value; see `ObjectStore.forEach(_:where:orderBy:_:)`.
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

    /// Stores dictionaries in `collection`; see `ObjectStore.insert(dictionaries:into:)`.
    @discardableResult
    public func insert(dictionaries rows: [[String: Any]], into collection: String) throws -> [StorageValue] {
        try open().insert(dictionaries: rows, into: collection)
    }

    /// The records of `collection` as dictionaries; see `ObjectStore.fetchDictionaries(from:where:orderBy:limit:)`.
    public func fetchDictionaries(
        from collection: String,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        limit: Int? = nil
    ) throws -> [[String: StorageValue]] {
        try open().fetchDictionaries(from: collection, where: predicate, orderBy: ordering, limit: limit)
    }

    /// Deletes the value with primary key `id`.
    /// - Returns: whether there was one.
    @discardableResult
    public func delete<T>(_ type: T.Type, id: some StorageValueConvertible) throws -> Bool {
        try open().delete(type, id: id.storageValue)
    }

    /// Deletes the matching values.
    /// - Returns: the number deleted.
    @discardableResult
    public func deleteAll<T>(_ type: T.Type, where predicate: StoragePredicate? = nil) throws -> Int {
        try open().deleteAll(type, where: predicate).count
    }
}
