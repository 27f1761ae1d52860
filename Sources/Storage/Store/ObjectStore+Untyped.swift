extension ObjectStore {
    /// The number of records of the collection named `collection` matching `predicate`, without
    /// a Swift type for its records (a collection filled by `insert(jsonArray:into:)`, say).
    ///
    /// ```swift
    /// let rated = try store.count(in: "films", where: Column("IMDB Rating") >= 8)
    /// ```
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - predicate: the records to count; nil counts them all.
    /// - Returns: the count, 0 for a collection that was never created.
    /// - Throws: ``StorageError`` with `.invalidIdentifier` for a bad name, `.unknownColumn` for a
    ///   predicate naming a column the collection does not have.
    public func count(in collection: String, where predicate: StoragePredicate? = nil) throws -> Int {
        try Identifier.validateCollection(collection)
        return try withReadSession(singleQuery: predicate.isSingleQuery) {
            try $0.count(in: collection, where: predicate)
        }
    }

    /// Deletes the records of the collection named `collection` matching `predicate`, in one
    /// transaction, without a Swift type for its records.
    ///
    /// ```swift
    /// try store.deleteAll(from: "films", where: Column("Title") == nil)
    /// ```
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - predicate: the records to delete; nil deletes them all (the collection remains).
    /// - Returns: the number of records deleted.
    /// - Throws: ``StorageError`` with `.invalidIdentifier` for a bad name, `.unknownColumn` for a
    ///   predicate naming a column the collection does not have.
    @discardableResult
    public func deleteAll(from collection: String, where predicate: StoragePredicate? = nil) throws -> Int {
        try Identifier.validateCollection(collection)
        return try withWriteSession { try $0.deleteAll(from: collection, where: predicate).count }
    }
}
