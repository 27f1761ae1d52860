/// A write transaction that can rename and drop columns, rename collections and drop indexes in
/// place (SQLite's and PostgreSQL's `ALTER TABLE … RENAME`, a catalog change), rather than have
/// ``ObjectStore`` copy every record of the collection into a new one.
///
/// Adopting it is optional: the schema changes of a ``MigrationContext`` work on every backend
/// through ``BackendWriteTransaction`` alone (the copy reads every record, drops the collection,
/// prepares it again with the new schema, writes the records back and carries the auto-key
/// sequence over), and use this only when the transaction offers it.
///
/// ## Implementation requirements
///
/// `ObjectStore` has already checked everything before the call: the collection exists, the
/// columns named are stored columns (spelt as stored), a new name is a valid identifier that no
/// other column (or collection) of the store has, ignoring ASCII case, and no call touches the
/// primary key. Each call must keep every record, every other column, every index (an index on a
/// renamed column names the new column; an index on a dropped column goes with it) and the
/// auto-key sequence, change nothing when it throws, and return the stored schema afterwards as
/// `schema(of:)` will answer it, in this transaction and in later ones. A backend that caches
/// schemas or statements made from them keeps those caches right for its own transaction and,
/// after the commit, for other connections and processes. A call that returns `nil` changed
/// nothing, and `ObjectStore` copies the records instead.
public protocol SchemaAlteringWriteTransaction: BackendWriteTransaction {
    /// Renames column `column` of `collection` to `newName`.
    /// - Parameters:
    ///   - column: a stored column other than the primary key, spelt as stored.
    ///   - newName: the new name, used by no other column of the collection.
    ///   - collection: the collection, as stored.
    /// - Returns: the stored schema afterwards, or `nil` when this transaction cannot do it.
    /// - Throws: ``StorageError`` for an engine failure; nothing is changed then.
    func renameColumn(_ column: String, to newName: String, in collection: String) throws -> CollectionSchema?

    /// Removes column `column` of `collection`, its values and the indexes that use it.
    /// - Parameters:
    ///   - column: a stored column other than the primary key, spelt as stored.
    ///   - collection: the collection, as stored.
    /// - Returns: the stored schema afterwards, or `nil` when this transaction cannot do it.
    /// - Throws: ``StorageError`` for an engine failure; nothing is changed then.
    func dropColumn(_ column: String, from collection: String) throws -> CollectionSchema?

    /// Renames `collection` to `newName`, with its records, indexes and auto-key sequence.
    /// - Parameters:
    ///   - collection: the collection, as stored.
    ///   - newName: the new name, used by no other collection of the store.
    /// - Returns: the stored schema of `newName` afterwards, or `nil` when this transaction cannot
    ///   do it.
    /// - Throws: ``StorageError`` for an engine failure; nothing is changed then.
    func renameCollection(_ collection: String, to newName: String) throws -> CollectionSchema?

    /// Removes the index `index` of `collection`, which the stored schema has.
    /// - Parameters:
    ///   - index: one of the stored schema's indexes, its columns spelt as stored.
    ///   - collection: the collection, as stored.
    /// - Returns: the stored schema afterwards, or `nil` when this transaction cannot do it.
    /// - Throws: ``StorageError`` for an engine failure; nothing is changed then.
    func dropIndex(_ index: IndexDefinition, from collection: String) throws -> CollectionSchema?
}
