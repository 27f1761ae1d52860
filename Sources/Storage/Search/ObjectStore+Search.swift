/// Full-text search over the fields of a ``IndexDefinition/fullText(_:)`` index, with the same
/// matches and the same order on every engine.
extension ObjectStore {
    /// The values of `type` whose indexed fields match `query`, best first (BM25, ties by primary
    /// key ascending), among those matching `predicate`.
    ///
    /// ```swift
    /// let hits = try store.search(Film.self, matching: "star wars", where: Column("year") >= 1977, limit: 20)
    /// ```
    ///
    /// The query language: words (each must match, in any indexed field), `"a phrase"` (its
    /// words consecutively within one field), `prefix*`, `a OR b` (binding tighter than the
    /// words' AND), `-excluded` (a word or a phrase). Words are runs of letters and digits,
    /// folded for case and diacritics (`Café` finds `cafe`); no stemming, no stop words.
    /// - Parameters:
    ///   - type: the type stored; its ``StorableModel/indexes`` declare the full-text index.
    ///   - query: what to find.
    ///   - predicate: which records may match; `nil` for all.
    ///   - limit: at most this many values; `nil` for all.
    /// - Returns: the matching values, best first; none when nothing was ever stored.
    /// - Throws: ``StorageError`` with `.invalidQuery` for a query the language does not allow
    ///   (the message names the position, counting characters from 1) or a collection without a
    ///   full-text index, `.unknownColumn` for a predicate naming a column the collection lacks,
    ///   `.misuse` for a negative limit.
    public func search<T: Decodable>(
        _ type: T.Type,
        matching query: String,
        where predicate: StoragePredicate? = nil,
        limit: Int? = nil
    ) throws -> [T] {
        try withReadSession { try $0.search(type, matching: query, where: predicate, limit: limit) }
    }

    /// The records of `collection` whose indexed fields match `query`, best first, as
    /// dictionaries of every stored column; see `search(_:matching:where:limit:)`.
    ///
    /// ```swift
    /// let rows = try store.search(in: "films", matching: "lov*")
    /// ```
    /// - Parameters:
    ///   - collection: the collection searched.
    ///   - query: what to find.
    ///   - predicate: which records may match; `nil` for all.
    ///   - limit: at most this many records; `nil` for all.
    /// - Returns: one dictionary per matching record, best first.
    /// - Throws: ``StorageError`` as `search(_:matching:where:limit:)` does, and
    ///   `.invalidIdentifier` for a collection name that is not valid.
    public func search(
        in collection: String,
        matching query: String,
        where predicate: StoragePredicate? = nil,
        limit: Int? = nil
    ) throws -> [[String: StorageValue]] {
        try withReadSession { try $0.search(in: collection, matching: query, where: predicate, limit: limit) }
    }

    /// The values of `type` matching `query`, best first; see `search(_:matching:where:limit:)`.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - query: what to find.
    ///   - predicate: which records may match; `nil` for all.
    ///   - limit: at most this many values; `nil` for all.
    /// - Returns: the matching values, best first.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    public func search<T: Decodable & Sendable>(
        _ type: T.Type,
        matching query: String,
        where predicate: StoragePredicate? = nil,
        limit: Int? = nil
    ) async throws -> [T] {
        try await perform { try self.search(type, matching: query, where: predicate, limit: limit) }
    }

    /// The records of `collection` matching `query`, best first; see
    /// `search(in:matching:where:limit:)`.
    /// - Parameters:
    ///   - collection: the collection searched.
    ///   - query: what to find.
    ///   - predicate: which records may match; `nil` for all.
    ///   - limit: at most this many records; `nil` for all.
    /// - Returns: one dictionary per matching record, best first.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    public func search(
        in collection: String,
        matching query: String,
        where predicate: StoragePredicate? = nil,
        limit: Int? = nil
    ) async throws -> [[String: StorageValue]] {
        try await perform { try self.search(in: collection, matching: query, where: predicate, limit: limit) }
    }
}

extension StoreReadTransaction {
    /// The values of `type` matching `query`, best first, in this transaction's snapshot (a
    /// ``StoreTransaction`` sees its own writes); see `ObjectStore.search(_:matching:where:limit:)`.
    /// - Parameters:
    ///   - type: the type stored.
    ///   - query: what to find.
    ///   - predicate: which records may match; `nil` for all.
    ///   - limit: at most this many values; `nil` for all.
    /// - Returns: the matching values, best first.
    /// - Throws: ``StorageError`` as `ObjectStore.search(_:matching:where:limit:)` does.
    public func search<T: Decodable>(
        _ type: T.Type,
        matching query: String,
        where predicate: StoragePredicate? = nil,
        limit: Int? = nil
    ) throws -> [T] {
        try open().search(type, matching: query, where: predicate, limit: limit)
    }

    /// The records of `collection` matching `query`, best first, as dictionaries; see
    /// `ObjectStore.search(in:matching:where:limit:)`.
    /// - Parameters:
    ///   - collection: the collection searched.
    ///   - query: what to find.
    ///   - predicate: which records may match; `nil` for all.
    ///   - limit: at most this many records; `nil` for all.
    /// - Returns: one dictionary per matching record, best first.
    /// - Throws: ``StorageError`` as `ObjectStore.search(in:matching:where:limit:)` does.
    public func search(
        in collection: String,
        matching query: String,
        where predicate: StoragePredicate? = nil,
        limit: Int? = nil
    ) throws -> [[String: StorageValue]] {
        try open().search(in: collection, matching: query, where: predicate, limit: limit)
    }
}
