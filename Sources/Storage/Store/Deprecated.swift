public import Foundation

// Spellings renamed before the first release (CHANGELOG.md, "Renamed"), kept as deprecated
// aliases for one release so a backend written against the old names still builds, with a warning.

/// The old name of ``BackendReadTransaction``: it read like ``StoreReadTransaction``, the user's
/// handle, though it is the backend's side.
@available(*, deprecated, renamed: "BackendReadTransaction")
public typealias StorageReadTransaction = BackendReadTransaction

/// The old name of ``BackendWriteTransaction``, renamed with ``BackendReadTransaction``.
@available(*, deprecated, renamed: "BackendWriteTransaction")
public typealias StorageWriteTransaction = BackendWriteTransaction

// Bulk writes return a count (as `insert(csv:)`, typed `deleteAll` and `update` do); these three
// returned the keys. The old forms stay for one release, disfavoured so that a call that does not
// ask for `[StorageValue]` gets the count without a warning.

extension ObjectStore {
    /// The form of `insert(jsonArray:into:primaryKey:)` that returned the stored keys.
    @available(*, deprecated, message: "insert(jsonArray:into:primaryKey:) returns the number of records stored")
    @_disfavoredOverload
    public func insert(
        jsonArray data: Data,
        into collection: String,
        primaryKey: String? = nil
    ) throws -> [StorageValue] {
        let rows = try Self.jsonRows(data, for: collection)
        return try withWriteSession { try $0.insert(dictionaries: rows, into: collection, primaryKey: primaryKey) }
    }

    /// The form of `insert(dictionaries:into:primaryKey:)` that returned the stored keys.
    @available(*, deprecated, message: "insert(dictionaries:into:primaryKey:) returns the number of records stored")
    @_disfavoredOverload
    public func insert(
        dictionaries rows: [[String: Any]],
        into collection: String,
        primaryKey: String? = nil
    ) throws -> [StorageValue] {
        try withWriteSession { try $0.insert(dictionaries: rows, into: collection, primaryKey: primaryKey) }
    }

    /// The form of `deleteAll(from:where:)` that returned the deleted keys.
    @available(*, deprecated, message: "deleteAll(from:where:) returns the number of records deleted")
    @_disfavoredOverload
    public func deleteAll(from collection: String, where predicate: StoragePredicate? = nil) throws -> [StorageValue] {
        try Identifier.validateCollection(collection)
        return try withWriteSession { try $0.deleteAll(from: collection, where: predicate) }
    }

    /// The form of the async `insert(jsonArray:into:primaryKey:)` that returned the stored keys.
    @available(*, deprecated, message: "insert(jsonArray:into:primaryKey:) returns the number of records stored")
    @_disfavoredOverload
    public func insert(
        jsonArray data: Data,
        into collection: String,
        primaryKey: String? = nil
    ) async throws -> [StorageValue] {
        try await perform {
            let rows = try Self.jsonRows(data, for: collection)
            return try self.withWriteSession {
                try $0.insert(dictionaries: rows, into: collection, primaryKey: primaryKey)
            }
        }
    }

    /// The form of the async `insert(dictionaries:into:primaryKey:)` that returned the stored keys.
    @available(*, deprecated, message: "insert(dictionaries:into:primaryKey:) returns the number of records stored")
    @_disfavoredOverload
    public func insert(
        dictionaries rows: sending [[String: Any]],
        into collection: String,
        primaryKey: String? = nil
    ) async throws -> [StorageValue] {
        let handedOver = HandedOver(rows)
        return try await perform {
            try self.withWriteSession {
                try $0.insert(dictionaries: handedOver.value, into: collection, primaryKey: primaryKey)
            }
        }
    }

    /// The form of the async `deleteAll(from:where:)` that returned the deleted keys.
    @available(*, deprecated, message: "deleteAll(from:where:) returns the number of records deleted")
    @_disfavoredOverload
    public func deleteAll(
        from collection: String,
        where predicate: StoragePredicate? = nil
    ) async throws -> [StorageValue] {
        try await perform {
            try Identifier.validateCollection(collection)
            return try self.withWriteSession { try $0.deleteAll(from: collection, where: predicate) }
        }
    }
}

extension StoreTransaction {
    /// The form of `insert(dictionaries:into:primaryKey:)` that returned the stored keys.
    @available(*, deprecated, message: "insert(dictionaries:into:primaryKey:) returns the number of records stored")
    @_disfavoredOverload
    public func insert(
        dictionaries rows: [[String: Any]],
        into collection: String,
        primaryKey: String? = nil
    ) throws -> [StorageValue] {
        try open().insert(dictionaries: rows, into: collection, primaryKey: primaryKey)
    }

    /// The form of `deleteAll(from:where:)` that returned the deleted keys.
    @available(*, deprecated, message: "deleteAll(from:where:) returns the number of records deleted")
    @_disfavoredOverload
    public func deleteAll(from collection: String, where predicate: StoragePredicate? = nil) throws -> [StorageValue] {
        try Identifier.validateCollection(collection)
        return try open().deleteAll(from: collection, where: predicate)
    }
}
