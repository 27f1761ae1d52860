extension StoreTransaction {
    /// Whether the store's change streams have a subscriber now (see `Session.update`); `true`
    /// for a handle that was not told of its store's streams.
    private var isObserved: Bool { changeHub.map { $0.subscriberCount > 0 } ?? true }

    /// Sets columns of every matching value inside this transaction; see
    /// `ObjectStore.update(_:set:where:)`. Rolled back with the transaction.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - assignments: the new value of each column, by the stored column's name; at least one.
    ///   - predicate: which values; `nil` for all.
    /// - Returns: the number of records changed.
    /// - Throws: ``StorageError`` as `ObjectStore.update(_:set:where:)` does.
    @discardableResult
    public func update<T: Decodable>(
        _ type: T.Type,
        set assignments: [String: StorageValue],
        where predicate: StoragePredicate? = nil
    ) throws -> Int {
        try open().update(type, set: assignments, where: predicate, observed: isObserved)
    }

    /// Sets columns of every matching record of the collection named `collection` inside this
    /// transaction; see `ObjectStore.update(in:set:where:)`. Rolled back with the transaction.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - assignments: the new value of each column, by the stored column's name; at least one.
    ///   - predicate: which records; `nil` for all.
    /// - Returns: the number of records changed.
    /// - Throws: ``StorageError`` as `ObjectStore.update(in:set:where:)` does.
    @discardableResult
    public func update(
        in collection: String,
        set assignments: [String: StorageValue],
        where predicate: StoragePredicate? = nil
    ) throws -> Int {
        try Identifier.validateCollection(collection)
        return try open().update(in: collection, set: assignments, where: predicate, observed: isObserved)
    }
}
