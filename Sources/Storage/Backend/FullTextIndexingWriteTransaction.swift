/// A write transaction that keeps full-text indexes in the engine itself (SQLite's FTS5), rather
/// than have ``ObjectStore`` keep its own postings over ``BackendWriteTransaction``.
///
/// Adopting it is optional: full-text search works on every backend through the store's own
/// collections, and uses this only when the transaction offers it. The store still keeps its
/// registry of indexes (which collection, which fields) in its own collection on every backend,
/// and does all the tokenizing itself: the engine only ever sees the store's folded tokens,
/// so every engine matches the same records.
///
/// ## Implementation requirements
///
/// Everything happens in this transaction: a rollback (or a crash before the commit) leaves
/// the engine's index as it was, in step with the records. The index of a collection holds one
/// entry per record key given to ``FullTextIndexWriter/index(_:fields:)`` (an empty field
/// still counts the record in BM25's N) and answers
/// ``FullTextSearchingReadTransaction/searchFullText(in:matching:where:limit:)`` over them as
/// the store's own index would: the same matches, ranked by BM25 (k1 = 1.2, b = 0.75, over
/// every field alike) with ties broken by primary key ascending. The conformance suite's search
/// checks hold an adopting backend to the answers of the others.
public protocol FullTextIndexingWriteTransaction: BackendWriteTransaction, FullTextSearchingReadTransaction {
    /// Makes an empty full-text index of `collection` over `fields`, replacing any it had.
    /// - Parameters:
    ///   - collection: the collection, as stored; it exists.
    ///   - fields: the indexed fields, in order; at least one.
    /// - Returns: whether the engine keeps the index; `false` when it cannot for this collection,
    ///   and then nothing was changed and the store keeps its own postings.
    /// - Throws: ``StorageError`` for an engine failure.
    func createFullTextIndex(of collection: String, fields: [String]) throws -> Bool

    /// Removes the full-text index of `collection` the engine keeps; nothing when it keeps none.
    /// - Parameter collection: the collection, as stored or as it was stored before a drop.
    /// - Throws: ``StorageError`` for an engine failure.
    func dropFullTextIndex(of collection: String) throws

    /// A writer of the full-text index of `collection`, for the rest of this transaction.
    /// - Parameter collection: the collection, as stored.
    /// - Returns: the writer, or `nil` when the engine keeps no index of `collection`.
    /// - Throws: ``StorageError`` for an engine failure.
    func makeFullTextWriter(for collection: String) throws -> (any FullTextIndexWriter)?
}

/// Puts records into, and takes them out of, one collection's full-text index that the engine
/// keeps (``FullTextIndexingWriteTransaction/makeFullTextWriter(for:)``). Valid only inside
/// the transaction that made it.
public protocol FullTextIndexWriter: AnyObject {
    /// Indexes the record of `key`, replacing what the index held for it.
    /// - Parameters:
    ///   - key: the record's primary key.
    ///   - fields: one string per indexed field, in the index's order: the field's folded tokens
    ///     separated by single spaces, empty when it has none.
    /// - Throws: ``StorageError`` for an engine failure.
    func index(_ key: StorageValue, fields: [String]) throws

    /// Removes the record of `key` from the index; nothing when it is not there.
    /// - Parameter key: the record's primary key.
    /// - Throws: ``StorageError`` for an engine failure.
    func unindex(_ key: StorageValue) throws
}
