import Foundation

/// One reference as the store keeps it, in the hidden collection `_references`: the referencing
/// collection and column, the referenced collection and the delete rule. Written when a model
/// with ``StorableModel/references`` is first saved in a transaction, read by every delete, so
/// that a process that never saw the referencing type (an untyped `deleteAll(from:)`, the
/// `storage` command) applies the same rules.
struct ReferenceRecord: Codable, StorableModel, InternalModel, Hashable {
    static let collectionName = "_references"

    /// The referencing collection and column, as the JSON array `["books","authorID"]`.
    var id: String
    var collection: String
    var column: String
    var target: String
    var onDelete: String

    init(collection: String, reference: Reference) {
        self.collection = collection
        column = reference.column
        target = reference.targetCollection
        onDelete = reference.onDelete.rawValue
        id = Self.id(collection: collection, column: reference.column)
    }

    init(collection: String, column: String, target: String, rule: Reference.DeleteRule) {
        self.init(collection: collection, reference: Reference(column, toCollection: target, onDelete: rule))
    }

    static func id(collection: String, column: String) -> String {
        let data = (try? JSONEncoder().encode([collection, column])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The rule, `.restrict` for a spelling this version does not know (the safest reading).
    var rule: Reference.DeleteRule { Reference.DeleteRule(rawValue: onDelete) ?? .restrict }

    /// The reference as the public type describes it.
    var reference: Reference { Reference(column, toCollection: target, onDelete: rule) }
}
