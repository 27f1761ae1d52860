extension ObjectStore {
    /// The full-text index the store keeps for the collection named `collection`, as a type
    /// declared it (``IndexDefinition/fullText(_:)``) or a copy or migration carried it; `nil`
    /// when the collection has none.
    ///
    /// ```swift
    /// try store.fullTextIndex(of: "films")?.columns   // ["title", "genre"]
    /// ```
    /// - Parameter collection: the collection's name.
    /// - Returns: the index, its fields in the order they were declared; `nil` without one.
    /// - Throws: ``StorageError`` with `.invalidIdentifier` for a bad name, `.closed` after
    ///   ``close()-3koi4``.
    public func fullTextIndex(of collection: String) throws -> IndexDefinition? {
        try Identifier.validateCollection(collection)
        return try withReadSession { session in
            try session.searchEntry(collection).map { IndexDefinition.fullText($0.fields) }
        }
    }

    /// The full-text index of a collection; see `fullTextIndex(of:)`.
    /// - Parameter collection: the collection's name.
    /// - Returns: the index, or `nil` without one.
    /// - Throws: ``StorageError``, or `CancellationError` when the task was cancelled first.
    public func fullTextIndex(of collection: String) async throws -> IndexDefinition? {
        try await perform { try self.fullTextIndex(of: collection) }
    }
}
