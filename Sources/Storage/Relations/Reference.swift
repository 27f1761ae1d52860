/// A column of a model that holds the primary key of a record in another collection (or its
/// own), and what a delete of that record does to the records that point at it.
///
/// ```swift
/// struct Book: Codable, StorableModel {
///     var id: Int64
///     var title: String
///     var authorID: Int64?
///     static let references: [Reference] = [Reference("authorID", to: Author.self, onDelete: .cascade)]
/// }
/// ```
///
/// A save whose reference names no record (neither stored nor saved earlier in the same
/// transaction) is refused with ``StorageError/Code/constraintViolation``; a null reference is
/// allowed. The referencing column gets an index. The store keeps the references it was told of
/// in the store itself, so a delete by any process applies the rule, also through the untyped
/// path by one that never saw the referencing type.
public struct Reference: Sendable, Hashable {
    /// What deleting a referenced record does to the records that reference it.
    public enum DeleteRule: String, Sendable, Hashable, CaseIterable {
        /// The delete is refused with ``StorageError/Code/constraintViolation`` while a record
        /// that is not deleted with it references it; nothing is deleted.
        case restrict
        /// The referencing records are deleted too, in the same transaction, and the records
        /// referencing those, transitively.
        case cascade
        /// The referencing column of the referencing records is set to null.
        case setNull
    }

    /// The referencing column, in the model's collection.
    public let column: String
    /// The name of the collection whose primary key the column holds.
    public let targetCollection: String
    /// What a delete of a referenced record does.
    public let onDelete: DeleteRule

    /// A reference from `column` to the primary key of `target`'s collection.
    /// - Parameters:
    ///   - column: the referencing column (a property of the model).
    ///   - target: the referenced model type; its ``StorableModel/collectionName`` is used.
    ///   - onDelete: what a delete of a referenced record does; `.restrict` by default.
    public init<Target: StorableModel>(_ column: String, to target: Target.Type, onDelete: DeleteRule = .restrict) {
        self.column = column
        self.targetCollection = Target.collectionName
        self.onDelete = onDelete
    }

    /// A reference from `column` to the primary key of the collection named `collection`, for
    /// a target known only by name (the untyped path).
    /// - Parameters:
    ///   - column: the referencing column.
    ///   - collection: the referenced collection's name.
    ///   - onDelete: what a delete of a referenced record does; `.restrict` by default.
    public init(_ column: String, toCollection collection: String, onDelete: DeleteRule = .restrict) {
        self.column = column
        self.targetCollection = collection
        self.onDelete = onDelete
    }
}
