import Foundation

/// The handle a migration's body receives (`m` in the examples): every call of a
/// ``StoreTransaction`` (fetch, save, delete, the untyped calls), all inside the migration's one
/// write transaction, plus the schema changes that apps outgrow additive evolution with.
///
/// ```swift
/// migrator.register("1-rename") { m in try m.renameColumn("name", to: "fullName", in: "people") }
/// ```
///
/// Valid only inside the body, on the thread running it. Schema changes are done in place where
/// the backend can (``SchemaAlteringWriteTransaction``: SQLite's `ALTER TABLE`), or else by
/// copying the collection's records; either way they keep every record, index and setting, and
/// they are undone with the rest of the migration when it throws. They publish no change to the
/// store's change streams; ``transform(_:to:_:)`` and the writes of the context do.
public final class MigrationContext: StoreTransaction {
    /// The name the running migration was registered with.
    public let name: String

    init(session: Session, name: String) {
        self.name = name
        super.init(session: session)
    }

    /// Renames column `column` of `collection` to `newName`, keeping its values and the indexes
    /// that use it (which then name `newName`).
    ///
    /// A model whose property still has the old name adds that column again on its next save:
    /// rename the property in the same release.
    /// - Parameters:
    ///   - column: the column's name (ignoring ASCII case).
    ///   - newName: its new name.
    ///   - collection: the collection's name.
    /// - Throws: ``StorageError``: `.schemaMismatch` when there is no such collection, the column is
    ///   the primary key or `newName` is taken; `.unknownColumn` when there is no such column;
    ///   `.invalidIdentifier` for a name that is not allowed.
    public func renameColumn(_ column: String, to newName: String, in collection: String) throws {
        try open().renameColumn(column, to: newName, in: collection)
    }

    /// Removes column `column` of `collection`: its values, and the indexes that use it.
    /// - Parameters:
    ///   - column: the column's name (ignoring ASCII case).
    ///   - collection: the collection's name.
    /// - Throws: ``StorageError``: `.schemaMismatch` when there is no such collection or the
    ///   column is the primary key, `.unknownColumn` when there is no such column.
    public func dropColumn(_ column: String, from collection: String) throws {
        try open().dropColumn(column, from: collection)
    }

    /// Renames collection `collection` to `newName`, with its records, indexes and auto-key
    /// sequence. Models then name it with `collectionName`.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - newName: its new name.
    /// - Throws: ``StorageError``: `.schemaMismatch` when there is no such collection or the store
    ///   has one named `newName`; `.invalidIdentifier` for a name that is not allowed.
    public func renameCollection(_ collection: String, to newName: String) throws {
        try open().renameCollection(collection, to: newName)
    }

    /// Rewrites every record of `Old`'s collection as a `New`: reads each as an `Old`, stores what
    /// `body` makes of it, and removes the old records. When `New` names the same collection its
    /// schema becomes `New`'s (columns `Old` had and `New` has not are gone), and the indexes a
    /// migration added that `New`'s records can hold are kept.
    ///
    /// ```swift
    /// try m.transform(PersonV1.self, to: PersonV2.self) { old in
    ///     PersonV2(id: old.id, fullName: old.first + " " + old.last)
    /// }
    /// ```
    /// Records keep their keys when the models carry them; in a collection whose keys the store
    /// assigns (`_key`), the new records get new keys. The records are held in memory at once.
    /// - Parameters:
    ///   - old: the type the records are stored as now.
    ///   - new: the type they become.
    ///   - body: makes the new value of each old one; what it throws is rethrown.
    /// - Returns: how many records were rewritten (0 when `Old`'s collection does not exist).
    /// - Throws: what `body` throws, or a ``StorageError`` (a stored value that does not decode as
    ///   `Old`, say).
    @discardableResult
    public func transform<Old: Decodable, New: Encodable>(
        _ old: Old.Type,
        to new: New.Type,
        _ body: (Old) throws -> New
    ) throws -> Int {
        try open().transform(old, to: new, body)
    }

    /// Adds `index` to `collection`, built from the records already there.
    /// - Parameters:
    ///   - index: the index (its columns, whether unique).
    ///   - collection: the collection's name.
    /// - Returns: whether it was added (`false`: the collection had it already).
    /// - Throws: ``StorageError``: `.schemaMismatch` when there is no such collection,
    ///   `.unknownColumn` for a column it lacks, `.constraintViolation` when a unique index
    ///   would be broken by records already stored.
    @discardableResult
    public func addIndex(_ index: IndexDefinition, to collection: String) throws -> Bool {
        try open().addIndex(index, to: collection)
    }

    /// Removes `index` from `collection`. A model whose `indexes` still lists it adds it again on
    /// its next save.
    /// - Parameters:
    ///   - index: the index (its columns, whether unique).
    ///   - collection: the collection's name.
    /// - Returns: whether it was removed (`false`: the collection did not have it).
    /// - Throws: ``StorageError``: `.schemaMismatch` when there is no such collection,
    ///   `.unknownColumn` for a column it lacks.
    @discardableResult
    public func dropIndex(_ index: IndexDefinition, from collection: String) throws -> Bool {
        try open().dropIndex(index, from: collection)
    }

    /// Adds `reference` from `collection` (as ``StorableModel/references`` declares one), after
    /// checking that every value stored in its column names a record of the target, and an index
    /// on the column when none starts with it. A reference already there with another rule takes
    /// the new rule. A model's declared references replace its collection's on its next save:
    /// declare the reference in the model too.
    /// - Parameters:
    ///   - reference: the referencing column, the referenced collection and the delete rule.
    ///   - collection: the referencing collection.
    /// - Returns: whether the store's references changed (`false`: it had this one already).
    /// - Throws: ``StorageError``: `.schemaMismatch` when there is no such collection,
    ///   `.unknownColumn` when it has no such column, `.constraintViolation` (naming the record)
    ///   when a stored value names no record of the target.
    @discardableResult
    public func addReference(_ reference: Reference, to collection: String) throws -> Bool {
        try open().addReference(reference, to: collection)
    }
}
