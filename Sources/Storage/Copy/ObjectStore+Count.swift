extension ObjectStore {
    /// The number of records of `collection` (reserved ones included) matching `predicate`; 0
    /// when there is no such collection. For tools that work by collection name (the `storage`
    /// command); typed code uses `count(_:where:)`.
    /// - Parameters:
    ///   - collection: the collection's name (compared ignoring ASCII case).
    ///   - predicate: which records; `nil` for all.
    /// - Returns: how many records match.
    /// - Throws: `StorageError`, e.g. `.unknownColumn` for a column the collection lacks.
    package func count(in collection: String, where predicate: StoragePredicate? = nil) throws -> Int {
        try withReadSession { session in
            try Identifier.validateCollection(collection, allowingReserved: true)
            return try session.count(in: collection, where: predicate)
        }
    }
}
