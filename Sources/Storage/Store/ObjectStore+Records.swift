extension ObjectStore {
    /// Inserts `value`, or replaces the stored value with the same primary key.
    ///
    /// The first save of a type creates its collection; a type that gained properties gets
    /// new columns. A type without an `id` property (and no `StorableModel.primaryKey`) gets an
    /// auto-assigned Int64 key.
    /// - Parameter value: the value; its type's properties are the columns.
    /// - Returns: the value's primary key.
    /// - Throws: ``StorageError``, e.g. `.constraintViolation` when a unique index would be violated
    ///   (nothing is written then).
    @discardableResult
    public func save<T: Encodable>(_ value: T) throws -> StorageValue {
        try withWriteSession { try $0.save(one: value) }
    }

    /// Saves every value in one transaction: all of them or, on any error, none.
    /// - Parameter values: the values, all of one type.
    /// - Returns: the primary keys, in order.
    /// - Throws: ``StorageError`` as ``save(_:)-2pxrv`` does; nothing is written then.
    @discardableResult
    public func save<S: Sequence>(contentsOf values: S) throws -> [StorageValue] where S.Element: Encodable {
        try withWriteSession { try $0.save(values) }
    }

    /// The value of `type` with primary key `id`, or nil.
    ///
    /// `id` may be the ``StorageValue`` that `save` returned, or a plain `Int`, `Int64`, `String`
    /// or `UUID`.
    /// - Parameters:
    ///   - type: the model type.
    ///   - id: the primary key.
    /// - Returns: the value, or `nil` when there is none (or the collection does not exist yet).
    /// - Throws: ``StorageError``: `.typeMismatch`, `.valueOutOfRange` or `.missingValue` naming the
    ///   column when a stored value does not fit `T`; `.closed` after ``close()-3koi4``.
    public func fetch<T: Decodable>(_ type: T.Type, id: some StorageValueConvertible) throws -> T? {
        // Through a slot, not `T?`: see `Session.fetch(_:id:into:)`.
        let key = id.storageValue
        // The type's look-up plan, if it has one, lends the memory of the slot: no allocation and
        // free a look-up (scripts/count-check.py holds the count).
        let kept = catalog.typeReadPlan(for: T.self)
        let slot = kept?.takeSlot(for: T.self) ?? UnsafeMutablePointer<T>.allocate(capacity: 1)
        var filled = false
        defer {
            if filled { slot.deinitialize(count: 1) }
            if let kept { kept.keepSlot(slot) } else { slot.deallocate() }
        }
        _ = try withReader(singleQuery: true) { reader, session in
            filled = try Session.fetch(
                type,
                id: key,
                into: slot,
                reader: reader,
                session: session,
                catalog: catalog,
                kept: kept
            )
            return filled
        }
        guard filled else { return nil }
        filled = false
        return slot.move()
    }

    /// The values of `type` matching `predicate`, sorted by `orderBy` (then by primary key).
    ///
    /// ```swift
    /// try store.fetchAll(Person.self, where: Column("age") >= 30, orderBy: [.ascending("name")], limit: 10)
    /// ```
    /// - Parameters:
    ///   - type: the type stored.
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - limit: at most this many values; `nil` for all.
    ///   - offset: how many matching values to skip first (a page's start). Deep pages cost the
    ///     skipped rows; `stream(_:where:orderBy:)` reads everything without that cost.
    /// - Returns: the values.
    /// - Throws: ``StorageError`` with `.unknownColumn` when the query names a column the
    ///   collection does not have, `.typeMismatch` when a stored value does not fit `type`, or
    ///   `.misuse` for a negative limit or offset.
    public func fetchAll<T: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        limit: Int? = nil,
        offset: Int = 0
    ) throws -> [T] {
        try withReadSession(singleQuery: predicate.isSingleQuery) {
            try $0.fetchAll(type, where: predicate, orderBy: ordering, limit: limit, offset: offset)
        }
    }

    /// Calls `body` with each value of `type` matching `predicate`, one at a time, in bounded
    /// memory (the values are streamed from the engine, not collected first).
    /// - Parameters:
    ///   - type: the model type.
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - body: called with each value, in order.
    /// - Throws: what `body` throws, or ``StorageError`` as ``fetch(_:id:)-2or27`` does, and
    ///   `.unknownColumn` for a column the collection lacks.
    public func forEach<T: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        _ body: (T) throws -> Void
    ) throws {
        try withReadSession(singleQuery: predicate.isSingleQuery) { session in
            try session.scan(type, where: predicate, orderBy: ordering, limit: nil) { value in
                try body(value)
                return true
            }
        }
    }

    /// The number of values of `type` matching `predicate`.
    /// - Parameters:
    ///   - type: the model type.
    ///   - predicate: which values; `nil` for all.
    /// - Returns: the number of matching values; 0 when the collection does not exist yet.
    /// - Throws: ``StorageError``: `.unknownColumn` for a column the collection lacks, `.closed`
    ///   after ``close()-3koi4``.
    public func count<T>(_ type: T.Type, where predicate: StoragePredicate? = nil) throws -> Int {
        try withReadSession(singleQuery: predicate.isSingleQuery) { try $0.count(type, where: predicate) }
    }

    /// Deletes the value of `type` with primary key `id`.
    /// - Parameters:
    ///   - type: the model type.
    ///   - id: the primary key.
    /// - Returns: whether there was one.
    /// - Throws: ``StorageError``, e.g. `.closed` after ``close()-3koi4``, or the engine's failure
    ///   (`.busy`, `.io`); nothing is deleted then.
    @discardableResult
    public func delete<T>(_ type: T.Type, id: some StorageValueConvertible) throws -> Bool {
        try withWriteSession { try $0.delete(type, id: id.storageValue) }
    }

    /// Deletes every value of `type` matching `predicate` (all of them when it is nil).
    /// - Parameters:
    ///   - type: the model type.
    ///   - predicate: which values; `nil` for all.
    /// - Returns: the number of values deleted.
    /// - Throws: ``StorageError``: `.unknownColumn` for a column the collection lacks, or the
    ///   engine's failure; nothing is deleted then.
    @discardableResult
    public func deleteAll<T>(_ type: T.Type, where predicate: StoragePredicate? = nil) throws -> Int {
        try withWriteSession { try $0.deleteAll(type, where: predicate).count }
    }
}
