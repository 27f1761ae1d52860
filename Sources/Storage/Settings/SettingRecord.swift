import Foundation

/// A model the store keeps for itself, in a collection whose name starts with `_` (a prefix user
/// types may not use).
protocol InternalModel {}

/// One setting as stored: the namespace and key, and the value as JSON text. Keeping the value
/// as JSON lets one column hold any `Codable` value, and keeps the store readable by other tools.
struct SettingRecord: Codable, StorableModel, InternalModel {
    static let collectionName = "_settings"
    /// The collection's folded name, as change logs are keyed.
    static let collection = Identifier.folded(collectionName)

    /// The namespace and the key, as the JSON array `["Namespace","key"]`: unambiguous whatever
    /// characters either contains.
    var id: String
    var namespace: String
    var key: String
    var value: String

    static func id(namespace: String, key: String) -> String {
        // Two strings always encode; the result is ASCII-safe JSON.
        let data = (try? JSONEncoder().encode([namespace, key])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
