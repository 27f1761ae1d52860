public import Storage

extension SQLiteStorageBackend {
    /// How the SQLite backend opens and uses its database.
    ///
    /// ```swift
    /// let backend = try SQLiteStorageBackend(path: "app.sqlite", configuration: .init(synchronous: .full))
    /// ```
    public struct Configuration: Sendable, Hashable {
        /// How hard a commit pushes data to the disk.
        public enum Synchronous: Sendable, Hashable {
            /// `PRAGMA synchronous = NORMAL`: in WAL mode a commit survives a process crash, and
            /// the database stays consistent after a power loss, which may lose the last commits.
            case normal
            /// `PRAGMA synchronous = FULL`: a commit also survives a power loss.
            case full
        }

        /// How long a transaction waits for a lock held by another process before failing with
        /// `StorageError.Code.busy`. Default: 5 seconds.
        public var busyTimeout: Duration
        /// How many idle reader connections are kept open. More readers than this may run at
        /// once; the extra connections are closed after use. Default: 4.
        public var maximumReaders: Int
        /// The durability of commits. Default: `.normal`.
        public var synchronous: Synchronous
        /// Whether the database is opened read-only: every connection is opened with
        /// `SQLITE_OPEN_READONLY`, a missing file is `StorageError.Code.cannotOpen` (nothing is
        /// created), and every write throws `StorageError.Code.readOnly`. The database file is
        /// never written. SQLite reads a database in WAL mode through its `-wal` and `-shm`
        /// files: when another connection has it open they exist and are shared, so a read-only
        /// store reads while another process writes; when they do not exist, SQLite creates
        /// them beside the file (the folder must be writable, or the open fails with
        /// `.cannotOpen`) and, read-only, leaves them there (an empty `-wal`) when it closes.
        /// Default: `false`.
        public var readOnly: Bool
        /// Where the store reports its events (`StoreEvent`: a lock held by another process
        /// waited for, slow statements), to this reporter's handler and to
        /// `ObjectStore.events(bufferingNewest:)`; `nil` for a reporter of the store's own (streams
        /// only, no statement timed). Default: `nil`.
        public var events: StoreEventReporter?

        /// Creates a configuration.
        /// - Parameters:
        ///   - busyTimeout: how long to wait for another process's lock.
        ///   - maximumReaders: how many idle reader connections to keep.
        ///   - synchronous: the durability of commits.
        ///   - readOnly: whether the database is only read.
        ///   - events: where the store reports its events, or `nil` for a reporter of its own.
        public init(
            busyTimeout: Duration = .seconds(5),
            maximumReaders: Int = 4,
            synchronous: Synchronous = .normal,
            readOnly: Bool = false,
            events: StoreEventReporter? = nil
        ) {
            self.events = events
            self.busyTimeout = busyTimeout
            self.maximumReaders = maximumReaders
            self.synchronous = synchronous
            self.readOnly = readOnly
        }
    }
}
