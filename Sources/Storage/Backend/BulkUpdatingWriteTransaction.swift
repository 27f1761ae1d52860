/// A write transaction that can set columns of every record matching a predicate itself, in one
/// statement (SQLite's and PostgreSQL's `UPDATE … SET … WHERE … RETURNING`), rather than have
/// ``ObjectStore`` read the matching keys and replace each record through a ``RecordWriter``.
///
/// Adopting it is optional: `ObjectStore.update(_:set:where:)` works on every backend through
/// ``BackendWriteTransaction`` alone, and uses this only when the transaction offers it.
///
/// ## Implementation requirements
///
/// `ObjectStore` has already checked everything before the call: the collection exists, every
/// column named is a stored column (spelt as stored) other than the primary key, every value is
/// of a kind its column holds (converted with the column's affinity, no NaN), and the predicate
/// names stored columns only and is simplified. The transaction must change exactly the records a
/// scan with `predicate` would return, set exactly the columns named and keep every other column,
/// and leave nothing changed when it throws (a unique index violated is `.constraintViolation`).
/// It reports no change itself: `ObjectStore` tells observers of the keys it returns. The
/// conformance suite's update checks hold an adopting backend to the answers of the others.
public protocol BulkUpdatingWriteTransaction: BackendWriteTransaction {
    /// Sets `columns` to `values` in every record of `collection` matching `predicate`.
    /// - Parameters:
    ///   - collection: the collection, as stored.
    ///   - columns: the columns set, spelt as stored, never the primary key; at least one.
    ///   - values: one value per column, of a kind the column holds.
    ///   - predicate: which records; `nil` for all.
    /// - Returns: the primary keys of the records changed, in no particular order; `nil` when this
    ///   transaction cannot run this update itself (a predicate it cannot compile, say), and then
    ///   nothing was changed and `ObjectStore` rewrites the records one by one instead.
    /// - Throws: ``StorageError``: `.constraintViolation` when the new values would break a unique
    ///   index, or an engine failure; nothing is changed then.
    func updateAll(
        in collection: String,
        columns: [String],
        values: [StorageValue],
        where predicate: StoragePredicate?
    ) throws -> [StorageValue]?

    /// The same update when no one needs the keys (the store's change streams have no
    /// subscriber): only how many records changed, which an engine may count more cheaply than
    /// it returns keys (SQLite's `RETURNING` costs about as much again as the update itself).
    /// - Parameters:
    ///   - collection: the collection, as stored.
    ///   - columns: the columns set, spelt as stored, never the primary key; at least one.
    ///   - values: one value per column, of a kind the column holds.
    ///   - predicate: which records; `nil` for all.
    /// - Returns: how many records changed, or `nil` as ``updateAll(in:columns:values:where:)``.
    /// - Throws: as ``updateAll(in:columns:values:where:)``.
    func countingUpdateAll(
        in collection: String,
        columns: [String],
        values: [StorageValue],
        where predicate: StoragePredicate?
    ) throws -> Int?
}

extension BulkUpdatingWriteTransaction {
    /// ``updateAll(in:columns:values:where:)``'s keys, counted.
    /// - Parameters:
    ///   - collection: the collection, as stored.
    ///   - columns: the columns set.
    ///   - values: one value per column.
    ///   - predicate: which records; `nil` for all.
    /// - Returns: how many records changed, or `nil`.
    /// - Throws: as ``updateAll(in:columns:values:where:)``.
    public func countingUpdateAll(
        in collection: String,
        columns: [String],
        values: [StorageValue],
        where predicate: StoragePredicate?
    ) throws -> Int? {
        try updateAll(in: collection, columns: columns, values: values, where: predicate)?.count
    }
}
