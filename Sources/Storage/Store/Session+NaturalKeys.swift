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
}
