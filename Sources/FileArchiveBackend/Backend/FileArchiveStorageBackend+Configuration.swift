extension FileArchiveStorageBackend {
    /// How the file archive backend uses its store.
    ///
    /// ```swift
    /// let backend = try FileArchiveStorageBackend(
    ///     directory: "Profiles",
    ///     configuration: .init(lockTimeout: .seconds(2))
    /// )
    /// ```
    public struct Configuration: Sendable, Hashable {
        /// How long opening the store, a write transaction, or a reload after another process's
        /// commit waits for the store's lock file while another process holds it, before failing
        /// with `StorageError.Code.busy` (nothing is changed then). Default: 10 seconds.
        public var lockTimeout: Duration

        /// Creates a configuration.
        /// - Parameter lockTimeout: how long to wait for another process's lock.
        public init(lockTimeout: Duration = .seconds(10)) {
            self.lockTimeout = lockTimeout
        }
    }
}
