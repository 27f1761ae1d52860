/// Eager loading, on the store and in transactions: each record with the record it references,
/// or with the records referencing it, in one query per level.
extension ObjectStore {
    /// Each value of `type` matching `predicate`, with the value of `related` that its column
    /// `column` references: two queries in all (the values, then every referenced record at once),
    /// never one per value.
    ///
    /// ```swift
    /// let pairs: [(Book, Author?)] = try store.fetchAll(Book.self, including: Author.self, via: "authorID")
    /// ```
    /// - Parameters:
    ///   - type: the referencing model.
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - related: the referenced model, whose primary key `column` holds.
    ///   - column: the referencing column of `type`'s collection.
    /// - Returns: each value with its referenced value, `nil` when the column is null or names no
    ///   record.
    /// - Throws: ``StorageError`` with `.unknownColumn` when `type`'s collection has no column
    ///   `column`, or as `fetchAll(_:where:orderBy:limit:offset:)` does.
    public func fetchAll<T: Decodable, Related: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        including related: Related.Type,
        via column: String
    ) throws -> [(T, Related?)] {
        try withReadSession {
            try $0.fetchAll(type, where: predicate, orderBy: ordering, including: related, via: column)
        }
    }

    /// Each value of `type` matching `predicate`, with the values of `related` whose column
    /// `column` references it: two queries in all, never one per value.
    ///
    /// ```swift
    /// let groups: [(Author, [Book])] = try store.fetchAll(Author.self, includingAll: Book.self, via: "authorID")
    /// ```
    /// - Parameters:
    ///   - type: the referenced model.
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - related: the referencing model.
    ///   - column: the column of `related`'s collection that holds `type`'s primary key.
    /// - Returns: each value with the values referencing it, in primary-key order.
    /// - Throws: ``StorageError`` with `.unknownColumn` when `related`'s collection has no column
    ///   `column`, or as `fetchAll(_:where:orderBy:limit:offset:)` does.
    public func fetchAll<T: Decodable, Related: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        includingAll related: Related.Type,
        via column: String
    ) throws -> [(T, [Related])] {
        try withReadSession {
            try $0.fetchAll(type, where: predicate, orderBy: ordering, includingAll: related, via: column)
        }
    }

    /// Each value of `type` with the value of `related` it references; see
    /// `fetchAll(_:where:orderBy:including:via:)`.
    /// - Parameters:
    ///   - type: the referencing model.
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - related: the referenced model.
    ///   - column: the referencing column.
    /// - Returns: each value with its referenced value.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    public func fetchAll<T: Decodable & Sendable, Related: Decodable & Sendable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        including related: Related.Type,
        via column: String
    ) async throws -> [(T, Related?)] {
        try await perform {
            try self.fetchAll(type, where: predicate, orderBy: ordering, including: related, via: column)
        }
    }

    /// Each value of `type` with the values of `related` referencing it; see
    /// `fetchAll(_:where:orderBy:includingAll:via:)`.
    /// - Parameters:
    ///   - type: the referenced model.
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - related: the referencing model.
    ///   - column: the column of `related`'s collection that holds `type`'s primary key.
    /// - Returns: each value with the values referencing it.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    public func fetchAll<T: Decodable & Sendable, Related: Decodable & Sendable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        includingAll related: Related.Type,
        via column: String
    ) async throws -> [(T, [Related])] {
        try await perform {
            try self.fetchAll(type, where: predicate, orderBy: ordering, includingAll: related, via: column)
        }
    }
    /// The references stored for the collection named `collection`: those its model declared
    /// (``StorableModel/references``) when it was saved, as the store keeps them for every process.
    ///
    /// ```swift
    /// try store.references(of: "books")   // [Reference("authorID", toCollection: "authors", onDelete: .cascade)]
    /// ```
    /// - Parameter collection: the referencing collection's name.
    /// - Returns: its references, by column name; empty when it has none.
    /// - Throws: ``StorageError`` with `.invalidIdentifier` for a bad name, `.closed` after
    ///   ``close()-3koi4``.
    public func references(of collection: String) throws -> [Reference] {
        try Identifier.validateCollection(collection)
        return try withReadSession { session in
            let folded = Identifier.folded(collection)
            return try session.storedReferences().filter { Identifier.folded($0.collection) == folded }
                .sorted { $0.column < $1.column }.map(\.reference)
        }
    }

    /// The references stored for a collection; see `references(of:)`.
    /// - Parameter collection: the referencing collection's name.
    /// - Returns: its references, by column name.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    public func references(of collection: String) async throws -> [Reference] {
        try await perform { try self.references(of: collection) }
    }
}

extension StoreReadTransaction {
    /// Each value of `type` with the value of `related` it references; see
    /// `ObjectStore.fetchAll(_:where:orderBy:including:via:)`.
    /// - Parameters:
    ///   - type: the referencing model.
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - related: the referenced model.
    ///   - column: the referencing column.
    /// - Returns: each value with its referenced value.
    /// - Throws: ``StorageError`` as the store's call does.
    public func fetchAll<T: Decodable, Related: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        including related: Related.Type,
        via column: String
    ) throws -> [(T, Related?)] {
        try open().fetchAll(type, where: predicate, orderBy: ordering, including: related, via: column)
    }

    /// Each value of `type` with the values of `related` referencing it; see
    /// `ObjectStore.fetchAll(_:where:orderBy:includingAll:via:)`.
    /// - Parameters:
    ///   - type: the referenced model.
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - related: the referencing model.
    ///   - column: the column of `related`'s collection that holds `type`'s primary key.
    /// - Returns: each value with the values referencing it.
    /// - Throws: ``StorageError`` as the store's call does.
    public func fetchAll<T: Decodable, Related: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        includingAll related: Related.Type,
        via column: String
    ) throws -> [(T, [Related])] {
        try open().fetchAll(type, where: predicate, orderBy: ordering, includingAll: related, via: column)
    }
}
