/// A read transaction that answers full-text queries from an index the engine keeps itself
/// (``FullTextIndexingWriteTransaction``).
///
/// Adopting it is optional; see ``FullTextIndexingWriteTransaction`` for what the answers must
/// be. `ObjectStore` has parsed and folded the query and checked the predicate before the call.
public protocol FullTextSearchingReadTransaction: BackendReadTransaction {
    /// Whether the engine keeps a full-text index of `collection` (else the store reads its own
    /// postings).
    /// - Parameter collection: the collection, as stored.
    /// - Returns: whether ``searchFullText(in:matching:where:limit:)`` answers for it.
    /// - Throws: ``StorageError`` for an engine failure.
    func hasFullTextIndex(of collection: String) throws -> Bool

    /// The keys of the records of `collection` matching `query` and `predicate`, best first
    /// (BM25, ties by primary key ascending), at most `limit`.
    /// - Parameters:
    ///   - collection: the collection, as stored; the engine keeps its index.
    ///   - query: the parsed query, its words folded as the store folds the indexed fields.
    ///   - predicate: which records may match, naming stored columns only; `nil` for all.
    ///   - limit: at most this many keys; `nil` for all.
    /// - Returns: the keys, best first; `nil` when this transaction cannot apply `predicate`
    ///   itself, and then the store asks again without it and filters the keys itself.
    /// - Throws: ``StorageError`` for an engine failure.
    func searchFullText(
        in collection: String,
        matching query: SearchQuery,
        where predicate: StoragePredicate?,
        limit: Int?
    ) throws -> [StorageValue]?
}
