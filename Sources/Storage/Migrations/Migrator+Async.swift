extension Migrator {
    /// Runs the pending migrations on the store's threads; see `migrate(_:)`.
    /// - Parameter store: the store to migrate.
    /// - Returns: the names of the migrations this call ran, in order.
    /// - Throws: what `migrate(_:)` throws, or `CancellationError` when the task was cancelled
    ///   before it began.
    @discardableResult
    public func migrate(_ store: ObjectStore) async throws -> [String] {
        try await store.perform { try self.migrate(store) }
    }

    /// The names of the migrations applied to `store`, read on the store's threads; see
    /// `appliedMigrations(in:)`.
    /// - Parameter store: the store.
    /// - Returns: the names, in the order they were applied.
    /// - Throws: what `appliedMigrations(in:)` throws, or `CancellationError`.
    public func appliedMigrations(in store: ObjectStore) async throws -> [String] {
        try await store.perform { try self.appliedMigrations(in: store) }
    }
}
