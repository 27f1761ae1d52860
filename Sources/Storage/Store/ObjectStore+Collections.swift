extension ObjectStore {
    /// The names of the store's collections, sorted. Reserved collections (names starting with
    /// `_`, such as `_settings`, where ``Settings`` keep their values) are left out.
    /// - Returns: the names, as the collections were created.
    /// - Throws: ``StorageError`` when the store fails.
    public func collectionNames() throws -> [String] {
        try withReadSession { try $0.collectionNames() }
    }

    /// The stored schema of `collection`: its columns, primary key and indexes.
    /// - Parameter collection: the collection's name (compared ignoring ASCII case).
    /// - Returns: the schema, or `nil` when there is no such collection.
    /// - Throws: ``StorageError`` with `.invalidIdentifier` for a name that is not allowed.
    public func schema(of collection: String) throws -> CollectionSchema? {
        try withReadSession { try $0.schema(of: collection) }
    }

    /// Removes `collection`: its records, indexes and schema, in one transaction (all of it or,
    /// on an error, nothing). Observers of the collection get one change listing every deleted
    /// key. Saving a value of its type afterwards creates it again.
    /// - Parameter collection: the collection's name (compared ignoring ASCII case).
    /// - Returns: whether there was such a collection.
    /// - Throws: ``StorageError`` with `.invalidIdentifier` for a name that is not allowed
    ///   (reserved collections cannot be dropped), or when the store fails.
    @discardableResult
    public func drop(collection: String) throws -> Bool {
        try withWriteSession { try $0.drop(collection: collection) }
    }

    /// Closes the store: waits for the calls running on other threads to return, then frees the
    /// engine's connections, file descriptors and maps, so its files can be deleted or opened
    /// again. Every later call throws ``StorageError`` with code `.closed`, and so do `async`
    /// calls queued but not yet begun. Closing again does nothing (a close running on another
    /// thread is waited for). Record streams end with `.closed` at their next batch; change
    /// streams (`changes(of:)`) end.
    ///
    /// Blocks for as long as the calls in flight take, then for the engine's close (SQLite
    /// checkpoints its write-ahead log into the database file).
    /// - Throws: ``StorageError`` with `.misuse` when called inside a `transaction` closure of this
    ///   store on the same thread (it would wait for itself, as it would inside a `read`
    ///   closure, which must not call it either), or when the engine fails to close.
    public func close() throws {
        guard !isWritingOnCurrentThread else {
            throw StorageError(.misuse, "close() was called inside a transaction of the store it closes")
        }
        guard lifecycle.beginClose() else { return }
        defer { lifecycle.didClose() }
        executor.shutDown()
        changeHub.finishAll()
        finishEventStreams()
        try backend.close()
    }
}
