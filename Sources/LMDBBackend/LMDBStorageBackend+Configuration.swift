public import Storage

extension LMDBStorageBackend {
    /// How the LMDB backend opens and uses its environment.
    ///
    /// ```swift
    /// let backend = try LMDBStorageBackend(path: "app.lmdb", configuration: .init(initialMapSize: 1 << 30))
    /// ```
    ///
    /// When a file is already open in the process, the configuration it was first opened with
    /// stays in force: one environment serves every backend on the same file.
    public struct Configuration: Sendable, Hashable {
        /// The map size a new store starts with, in bytes. The map grows (doubling) when it fills
        /// up, and in one step to fit a large batch, so this only needs to be a good guess.
        /// Default: 64 MiB.
        public var initialMapSize: Int
        /// The map never grows past this many bytes; a write that needs more fails with
        /// `StorageError.Code.io`. Default: 1 TiB (address space, not disk: the file only grows
        /// as data is written).
        public var maximumMapSize: Int
        /// How many named databases the store may have: one per collection, one per index, one
        /// for metadata. Default: 1024.
        public var maximumDatabases: Int
        /// How many read transactions may be open at once, in all processes. Default: 126.
        public var maximumReaders: Int
        /// How long growing the map waits for the process's open transactions to end before
        /// failing with `StorageError.Code.busy`. Default: 30 seconds.
        public var mapResizeTimeoutSeconds: Int
        /// Whether the store is opened read-only: the environment is opened with `MDB_RDONLY`, a
        /// missing store file is `StorageError.Code.cannotOpen` (nothing is created), every write
        /// throws `StorageError.Code.readOnly`, and the map never grows. The store file is never
        /// written; LMDB still registers the store's readers in its lock file (`path` + `-lock`,
        /// created when missing), which is how a writer in another process knows which pages
        /// they read. A file the process already has open read-write is shared (this store still
        /// refuses writes); one it has open read-only cannot also be opened read-write until
        /// every store on it is closed. Default: `false`.
        public var readOnly: Bool
        /// Where the store reports its events (`StoreEvent`: the map grown, by this process or
        /// adopted from another), to this reporter's handler and to
        /// `ObjectStore.events(bufferingNewest:)`; `nil` for a reporter of the store's own. Unlike
        /// the other settings it is the store's own, not the file's first opener's. Default: `nil`.
        public var events: StoreEventReporter?

        /// Creates a configuration.
        /// - Parameters:
        ///   - initialMapSize: the starting map size, in bytes.
        ///   - maximumMapSize: the largest map size, in bytes.
        ///   - maximumDatabases: the number of named databases.
        ///   - maximumReaders: the number of concurrent read transactions.
        ///   - mapResizeTimeoutSeconds: how long a map resize waits for open transactions.
        ///   - readOnly: whether the store is only read.
        ///   - events: where the store reports its events, or `nil` for a reporter of its own.
        public init(
            initialMapSize: Int = 64 << 20,
            maximumMapSize: Int = 1 << 40,
            maximumDatabases: Int = 1024,
            maximumReaders: Int = 126,
            mapResizeTimeoutSeconds: Int = 30,
            readOnly: Bool = false,
            events: StoreEventReporter? = nil
        ) {
            self.events = events
            self.initialMapSize = initialMapSize
            self.maximumMapSize = maximumMapSize
            self.maximumDatabases = maximumDatabases
            self.maximumReaders = maximumReaders
            self.mapResizeTimeoutSeconds = mapResizeTimeoutSeconds
            self.readOnly = readOnly
        }
    }
}
