/// Natural keys for the untyped path: rows keyed by a value they carry (`iata`, `isbn`), so that
/// importing the same file again replaces its records instead of adding them twice.
extension Session {
    /// Checks a requested key against the key the collection was created with.
    /// - Throws: ``StorageError`` with `.schemaMismatch` when they differ.
    static func checkPrimaryKey(_ requested: String?, against stored: CollectionSchema) throws {
        guard let requested, Identifier.folded(requested) != Identifier.folded(stored.primaryKey) else { return }
        throw StorageError(
            .schemaMismatch,
            "collection \(Identifier.quoted(stored.name)) is keyed by \(Identifier.quoted(stored.primaryKey)),"
                + " not \(Identifier.quoted(requested))",
            collection: stored.name,
            column: requested
        )
    }

    /// Records that row `row` has key `key`, refusing a second row of the batch with the same
    /// key and different content.
    /// - Throws: ``StorageError`` with `.constraintViolation` naming both rows and the key.
    static func checkDuplicate(
        _ key: StorageValue,
        row: Int,
        in records: [[StorageValue]],
        _ rowByKey: inout [StorageValue: Int],
        _ collection: String,
        _ column: String
    ) throws {
        guard let first = rowByKey[key] else {
            rowByKey[key] = row
            return
        }
        guard records[first] != records[row] else { return }
        throw StorageError(
            .constraintViolation,
            "rows \(first) and \(row) both have \(Identifier.quoted(column)) = \(key) but differ;"
                + " nothing was stored",
            collection: collection,
            column: column,
            key: key
        )
    }
}
