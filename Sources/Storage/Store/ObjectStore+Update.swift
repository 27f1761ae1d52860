extension ObjectStore {
    /// Sets the columns named in `assignments` to their values in every value of `type` matching
    /// `predicate`, in one transaction, and returns how many records it changed.
    ///
    /// ```swift
    /// let moved = try store.update(Sale.self, set: ["city": "moved", "price": 2.25], where: Column("id") < 10)
    /// ```
    /// Every other column keeps its value. A record counts as changed when `predicate` matches
    /// it, whether or not its values were already the new ones (as SQL's `UPDATE` counts), and
    /// observers of the collection (`changes(of:bufferingPolicy:)`) are told of the key of each one, once the
    /// transaction commits; nothing when no record matched. Inside
    /// `transaction(_:)` the update is part of that transaction and is rolled back with it.
    ///
    /// The values are checked as a save checks them, before anything is written: each must be of a
    /// kind its stored column holds (integers in integer, real or text columns, reals in real or
    /// text columns, text in text columns, blobs in blob columns; an update never changes a
    /// column's type), and a record of `type` must still be readable with them (`nil` only in an
    /// optional property, a raw value an enum has).
    /// - Parameters:
    ///   - type: the model type.
    ///   - assignments: the new value of each column, by the stored column's name; at least one.
    ///     `nil` sets a column to null.
    ///   - predicate: which values; `nil` for all.
    /// - Returns: the number of records changed; 0 when the collection does not exist yet.
    /// - Throws: ``StorageError``, and nothing is changed then: `.unknownColumn` for a column to
    ///   set or one in `predicate` that the collection lacks; `.invalidKey` for the primary key in
    ///   `assignments`; `.schemaMismatch` for a value its column or `type` cannot hold, or a column
    ///   spelt otherwise than the stored one (ASCII case, Unicode normalization); `.misuse` for an
    ///   empty `assignments`; `.constraintViolation` when the new values break a unique index;
    ///   `.readOnly` on a store opened read-only.
    @discardableResult
    public func update<T: Decodable>(
        _ type: T.Type,
        set assignments: [String: StorageValue],
        where predicate: StoragePredicate? = nil
    ) throws -> Int {
        let observed = changeHub.subscriberCount > 0
        return try withWriteSession { try $0.update(type, set: assignments, where: predicate, observed: observed) }
    }

    /// Sets the columns named in `assignments` to their values in every record of the collection
    /// named `collection` matching `predicate`, in one transaction, without a Swift type for its
    /// records; see `update(_:set:where:)`.
    ///
    /// ```swift
    /// try store.update(in: "movies", set: ["Distributor": "x"], where: Column("Title") == "y")
    /// ```
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - assignments: the new value of each column, by the stored column's name; at least one.
    ///     `nil` sets a column (any but the primary key) to null.
    ///   - predicate: which records; `nil` for all.
    /// - Returns: the number of records changed; 0 for a collection that was never created.
    /// - Throws: ``StorageError`` as `update(_:set:where:)` does, and `.invalidIdentifier` for a
    ///   bad name; nothing is changed then.
    @discardableResult
    public func update(
        in collection: String,
        set assignments: [String: StorageValue],
        where predicate: StoragePredicate? = nil
    ) throws -> Int {
        try Identifier.validateCollection(collection)
        let observed = changeHub.subscriberCount > 0
        return try withWriteSession {
            try $0.update(in: collection, set: assignments, where: predicate, observed: observed)
        }
    }

    /// Sets columns of every value of `type` matching `predicate`, on the store's threads; see
    /// `update(_:set:where:)`.
    /// - Parameters:
    ///   - type: the model type.
    ///   - assignments: the new value of each column, by the stored column's name; at least one.
    ///   - predicate: which values; `nil` for all.
    /// - Returns: the number of records changed.
    /// - Throws: ``StorageError`` as the synchronous call does, or `CancellationError` when the
    ///   task was cancelled first (nothing is changed then).
    @discardableResult
    public func update<T: Decodable & SendableMetatype>(
        _ type: T.Type,
        set assignments: [String: StorageValue],
        where predicate: StoragePredicate? = nil
    ) async throws -> Int {
        try await perform { try self.update(type, set: assignments, where: predicate) }
    }

    /// Sets columns of every record of `collection` matching `predicate`, on the store's threads;
    /// see `update(in:set:where:)`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - assignments: the new value of each column, by the stored column's name; at least one.
    ///   - predicate: which records; `nil` for all.
    /// - Returns: the number of records changed.
    /// - Throws: ``StorageError`` as the synchronous call does, or `CancellationError` when the
    ///   task was cancelled first (nothing is changed then).
    @discardableResult
    public func update(
        in collection: String,
        set assignments: [String: StorageValue],
        where predicate: StoragePredicate? = nil
    ) async throws -> Int {
        try await perform { try self.update(in: collection, set: assignments, where: predicate) }
    }
}
