extension ObjectStore {
    /// Counts, sums, averages, minima and maxima of the values of `type` matching `predicate`,
    /// one row per group of `groupBy`'s values, with SQL's semantics on every engine.
    ///
    /// ```swift
    /// let rows = try store.aggregate(Sale.self, [.count, .sum("amount"), Aggregate.average("price").named("price")],
    ///                                where: Column("amount") > 10, groupBy: [Column("city")])
    /// for row in rows { print(row["city"]!, row["count"]!, row["sum(amount)"]!, row["price"]!) }
    /// ```
    /// Each row holds each group column under its own name and each aggregate under its name
    /// (``Aggregate/name``). Groups come in ascending order of their values (nulls first, text in
    /// byte order, as `orderBy` sorts), and nulls form a group of their own; without `groupBy`
    /// there is exactly one row, also over no records. SQLite and PostgreSQL compute it in SQL,
    /// the other engines in one pass over the matching records.
    /// - Parameters:
    ///   - type: the model type whose collection is read.
    ///   - aggregates: the results of each row.
    ///   - predicate: which values; `nil` for all.
    ///   - groupBy: the columns whose values make a group; empty for one row.
    /// - Returns: one dictionary per group.
    /// - Throws: ``StorageError``: `.unknownColumn` for a column the collection lacks,
    ///   `.valueOutOfRange` for an integer sum beyond `Int64`, `.invalidQuery` for a sum or
    ///   average of a column that is not numeric, or two results with one name.
    public func aggregate<T>(
        _ type: T.Type,
        _ aggregates: [Aggregate],
        where predicate: StoragePredicate? = nil,
        groupBy: [Column] = []
    ) throws -> [[String: StorageValue]] {
        try withReadSession(singleQuery: predicate.isSingleQuery) {
            try $0.aggregate(type, aggregates, where: predicate, groupBy: groupBy)
        }
    }

    /// Aggregates of the records of the collection named `collection`, without a Swift type for
    /// them; see `aggregate(_:_:where:groupBy:)`.
    ///
    /// ```swift
    /// let perGenre = try store.aggregate(in: "movies", [.count, .average("IMDB Rating")],
    ///                                    where: nil, groupBy: [Column("Major Genre")])
    /// ```
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - aggregates: the results of each row.
    ///   - predicate: which records; `nil` for all.
    ///   - groupBy: the columns whose values make a group; empty for one row.
    /// - Returns: one dictionary per group; for a collection that was never created, no rows
    ///   with groups, else one row of zero counts and null values.
    /// - Throws: ``StorageError`` as `aggregate(_:_:where:groupBy:)` does, and
    ///   `.invalidIdentifier` for a bad collection name.
    public func aggregate(
        in collection: String,
        _ aggregates: [Aggregate],
        where predicate: StoragePredicate? = nil,
        groupBy: [Column] = []
    ) throws -> [[String: StorageValue]] {
        try withReadSession(singleQuery: predicate.isSingleQuery) {
            try $0.aggregate(in: collection, aggregates, where: predicate, groupBy: groupBy)
        }
    }

    /// Aggregates of the values of `type`, on the store's threads; see
    /// `aggregate(_:_:where:groupBy:)`.
    /// - Parameters:
    ///   - type: the model type whose collection is read.
    ///   - aggregates: the results of each row.
    ///   - predicate: which values; `nil` for all.
    ///   - groupBy: the columns whose values make a group; empty for one row.
    /// - Returns: one dictionary per group.
    /// - Throws: ``StorageError`` as the synchronous call does, or `CancellationError` when the
    ///   task was cancelled before the call began.
    public func aggregate<T: SendableMetatype>(
        _ type: T.Type,
        _ aggregates: [Aggregate],
        where predicate: StoragePredicate? = nil,
        groupBy: [Column] = []
    ) async throws -> [[String: StorageValue]] {
        try await performRead { try self.aggregate(type, aggregates, where: predicate, groupBy: groupBy) }
    }

    /// Aggregates of the records of the collection named `collection`, on the store's threads;
    /// see `aggregate(in:_:where:groupBy:)`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - aggregates: the results of each row.
    ///   - predicate: which records; `nil` for all.
    ///   - groupBy: the columns whose values make a group; empty for one row.
    /// - Returns: one dictionary per group.
    /// - Throws: ``StorageError`` as the synchronous call does, or `CancellationError` when the
    ///   task was cancelled before the call began.
    public func aggregate(
        in collection: String,
        _ aggregates: [Aggregate],
        where predicate: StoragePredicate? = nil,
        groupBy: [Column] = []
    ) async throws -> [[String: StorageValue]] {
        try await performRead { try self.aggregate(in: collection, aggregates, where: predicate, groupBy: groupBy) }
    }
}

extension StoreReadTransaction {
    /// Aggregates of the values of `type` in this transaction's snapshot (a write transaction's
    /// own writes included); see `ObjectStore.aggregate(_:_:where:groupBy:)`.
    /// - Parameters:
    ///   - type: the model type whose collection is read.
    ///   - aggregates: the results of each row.
    ///   - predicate: which values; `nil` for all.
    ///   - groupBy: the columns whose values make a group; empty for one row.
    /// - Returns: one dictionary per group.
    /// - Throws: ``StorageError`` as `ObjectStore.aggregate(_:_:where:groupBy:)` does.
    public func aggregate<T>(
        _ type: T.Type,
        _ aggregates: [Aggregate],
        where predicate: StoragePredicate? = nil,
        groupBy: [Column] = []
    ) throws -> [[String: StorageValue]] {
        try open().aggregate(type, aggregates, where: predicate, groupBy: groupBy)
    }

    /// Aggregates of the records of the collection named `collection` in this transaction's
    /// snapshot; see `ObjectStore.aggregate(in:_:where:groupBy:)`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - aggregates: the results of each row.
    ///   - predicate: which records; `nil` for all.
    ///   - groupBy: the columns whose values make a group; empty for one row.
    /// - Returns: one dictionary per group.
    /// - Throws: ``StorageError`` as `ObjectStore.aggregate(in:_:where:groupBy:)` does.
    public func aggregate(
        in collection: String,
        _ aggregates: [Aggregate],
        where predicate: StoragePredicate? = nil,
        groupBy: [Column] = []
    ) throws -> [[String: StorageValue]] {
        try open().aggregate(in: collection, aggregates, where: predicate, groupBy: groupBy)
    }
}
