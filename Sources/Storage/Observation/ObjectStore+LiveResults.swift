extension ObjectStore {
    /// The values of `type` matching `predicate`, kept current: the results as they are first,
    /// then again after each commit that may have changed them (see ``LiveResults``).
    ///
    /// ```swift
    /// for try await sales in store.observe(Sale.self, where: Column("amount") >= 10, orderBy: [.ascending("id")]) {
    ///     show(sales)   // [Sale]
    /// }
    /// ```
    /// Each run is `fetchAll(_:where:orderBy:limit:offset:)` with the same arguments, on the store's
    /// threads. Commits in quick succession are coalesced: a consumer that falls behind gets the
    /// latest results, not one per commit. Rolled-back transactions and commits to other
    /// collections deliver nothing; results equal to the last ones are not delivered again when
    /// `T` is `Equatable`. The sequence ends when the consuming task is cancelled or the store
    /// closes. Nothing is read before the first `next()`, and a store nobody observes pays nothing.
    /// - Parameters:
    ///   - type: the type stored (`Sendable`: the results cross from the store's threads).
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - limit: at most this many values; `nil` for all.
    ///   - offset: how many matching values to skip first.
    /// - Returns: the results, as an `AsyncSequence` of arrays.
    public func observe<T: Decodable & Sendable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        limit: Int? = nil,
        offset: Int = 0
    ) -> LiveResults<[T]> {
        LiveResults(
            store: self,
            collection: { try self.collectionName(for: type) },
            query: { try self.fetchAll(type, where: predicate, orderBy: ordering, limit: limit, offset: offset) }
        )
    }

    /// The records of the collection named `collection` matching `predicate`, as dictionaries of
    /// every stored column, kept current; see `observe(_:where:orderBy:limit:offset:)`.
    ///
    /// ```swift
    /// for try await rows in store.observe(in: "movies", where: Column("Major Genre") == "Drama") {
    ///     print(rows.count)
    /// }
    /// ```
    /// Results equal to the last ones delivered are not delivered again.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - predicate: which records; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - limit: at most this many records; `nil` for all.
    ///   - offset: how many matching records to skip first.
    /// - Returns: the results, as an `AsyncSequence` of arrays of dictionaries; an invalid
    ///   collection name is thrown by its first `next()` (`.invalidIdentifier`).
    public func observe(
        in collection: String,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        limit: Int? = nil,
        offset: Int = 0
    ) -> LiveResults<[[String: StorageValue]]> {
        let name = collection
        return LiveResults(
            store: self,
            collection: {
                try Identifier.validateCollection(name)
                return name
            },
            query: {
                try self.fetchDictionaries(
                    from: name,
                    where: predicate,
                    orderBy: ordering,
                    limit: limit,
                    offset: offset
                )
            }
        )
    }
}
