public import Storage

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
        /// Whether the store is opened read-only: no file or folder is created, changed or
        /// removed (not even the lock file, which is opened read-only and locked shared, with
        /// `flock`, only while the store is loaded, so that no commit of another process is read
        /// half-done), and every write throws `StorageError.Code.readOnly`. A missing store
        /// folder, or a folder without the store's lock file, is `StorageError.Code.cannotOpen`;
        /// so is a store whose last commit a crash interrupted (its journal is there): opening it
        /// read-write once completes it. Default: `false`.
        public var readOnly: Bool
        /// Where the store reports its events (`StoreEvent`: a lock file held by another
        /// process waited for, as `conflict`), to this reporter's handler and to
        /// `ObjectStore.events(bufferingNewest:)`; `nil` for a reporter of the store's own.
        /// Default: `nil`.
        public var events: StoreEventReporter?

        /// Creates a configuration.
        /// - Parameters:
        ///   - lockTimeout: how long to wait for another process's lock.
        ///   - readOnly: whether the store is only read.
        ///   - events: where the store reports its events, or `nil` for a reporter of its own.
        public init(lockTimeout: Duration = .seconds(10), readOnly: Bool = false, events: StoreEventReporter? = nil) {
            self.events = events
            self.lockTimeout = lockTimeout
            self.readOnly = readOnly
        }
    }
}
