internal import CSQLite
import Foundation
public import Storage
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `StorageBackend` over an SQLite database in WAL mode: one writer connection, and a pool of
/// reader connections that read committed snapshots without waiting for the writer.
///
/// ```swift
/// let store = try ObjectStore(backend: .sqlite(path: "app.sqlite"))
/// ```
///
/// Write transactions of the process run one at a time (`BEGIN IMMEDIATE` on the writer
/// connection). Each read transaction runs on a reader connection of its own, so reads run in
/// parallel with each other and with the writer. Collections are tables; predicates are compiled
/// to `WHERE` clauses with bound parameters; every identifier is quoted.
public final class SQLiteStorageBackend: StorageBackend, StoreEventSource {
    /// The database file, or `nil` for an in-memory database.
    public let path: String?
    /// The configuration the backend was opened with (its `events` set to `eventReporter`).
    public let configuration: Configuration
    /// Where the backend reports waits for another process's lock (`conflict`) and slow
    /// statements: `configuration.events`, or a reporter of its own.
    public var eventReporter: StoreEventReporter { configuration.events ?? Self.silentReporter }
    /// The reporter of an in-memory database, which waits for no lock and times no statement.
    private static let silentReporter = StoreEventReporter()

    /// The read-only connection that answers `externalCommitCount()`, opened on first use; its
    /// own lock, so the check never waits for the writer or a reader. Declared before the writer,
    /// which must be the last connection to close.
    private let counterConnection = Locked<SQLiteConnection?>(nil)
    /// The one writer connection; holding the mutex is holding the right to write. `nil` once
    /// the backend is closed.
    private let writer: Locked<SQLiteConnection?>
    /// The thread holding the writer connection, so that a nested use from that same thread
    /// is refused instead of deadlocking on the writer's lock.
    private let writerOwner = Locked<pthread_t?>(nil)
    /// The idle reader a read takes first, without a lock: a reader connection with the read
    /// transaction object its next read reuses (see `claim`). One thread reading one read after
    /// another finds its reader here every time.
    private let idleReader = AtomicSlot<SQLiteReadTransaction>()
    /// The other idle readers; with `idleReader`, at most `configuration.maximumReaders`.
    private let idleReaders = Locked<[SQLiteReadTransaction]>([])
    /// The path SQLite opens, `nil` in memory (where reads go through the writer).
    private let databasePath: String?
    let schemaCache = SQLiteSchemaCache()
    /// The process that opened the database; SQLite connections must not cross a `fork()`.
    private let owner = OwningProcess()
    /// Set by `close()`; checked before a connection is taken, so none is opened afterwards.
    private let isClosed = Atomic<Bool>(false)

    /// Closes the idle readers before the writer (stored properties go in declaration order),
    /// so that the writer is the database's last connection in this process: the last connection
    /// to close checkpoints the WAL into the database file and removes it, leaving one file.
    /// A WAL left behind holds every commit since the last checkpoint, and damage to one of its
    /// frames silently drops all the commits after it.
    deinit {
        closeIdleReaders()
    }

    /// Opens (creating if needed) the database file at `path`; with `configuration.readOnly`,
    /// opens an existing one to read it, creating nothing.
    ///
    /// The file is created with mode 0600 before SQLite opens it, and SQLite gives its `-wal`
    /// and `-shm` files the same mode. A path that is a symbolic link is refused.
    /// - Parameters:
    ///   - path: the database file's path.
    ///   - configuration: how the database is opened and used.
    /// - Throws: `StorageError` with code `.cannotOpen` when the file cannot be created or opened
    ///   (read-only: when it does not exist), `.corrupt` when it is not a database.
    public init(path: String, configuration: Configuration = .init()) throws {
        // Absolute: SQLite cannot mistake it for ":memory:" or a "file:" URI, and reader
        // connections opened later find the same file even if the working directory changed.
        let databasePath = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var configuration = configuration
        if configuration.events == nil { configuration.events = StoreEventReporter() }
        let connection: SQLiteConnection
        if configuration.readOnly {
            connection = try Self.openReadOnly(path: path, databasePath: databasePath, configuration: configuration)
        } else {
            connection = try Self.openReadWrite(path: path, databasePath: databasePath, configuration: configuration)
        }
        self.path = path
        self.configuration = configuration
        self.databasePath = databasePath
        self.writer = Locked(connection)
    }

    /// Creates the file when missing and opens the writer connection, in WAL mode.
    private static func openReadWrite(
        path: String,
        databasePath: String,
        configuration: Configuration
    ) throws -> SQLiteConnection {
        try StorePath.createPrivateFile(at: path, role: "database file")
        let connection = try SQLiteConnection(
            path: databasePath,
            flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
            busyTimeout: configuration.busyTimeout,
            events: configuration.events
        )
        let mode = try Self.failingToOpen {
            try connection.withStatement("PRAGMA journal_mode = WAL") { statement -> StorageValue in
                guard try statement.step("cannot switch to WAL mode") else { return .null }
                return statement.row.value(at: 0)
            }
        }
        guard case .text(let journalMode) = mode, journalMode.lowercased() == "wal" else {
            throw StorageError(
                .cannotOpen,
                "the database cannot use write-ahead logging (journal mode is \(mode))",
                path: path
            )
        }
        switch configuration.synchronous {
        case .normal: try connection.execute("PRAGMA synchronous = NORMAL")
        case .full: try connection.execute("PRAGMA synchronous = FULL")
        }
        return connection
    }

    /// Opens a connection with `SQLITE_OPEN_READONLY` on an existing database file, and reads
    /// its schema version, so that a file that is not a database fails here.
    private static func openReadOnly(
        path: String,
        databasePath: String,
        configuration: Configuration
    ) throws -> SQLiteConnection {
        try StorePath.existing(path, role: "database file", kind: .file)
        return try Self.failingToOpen {
            let connection = try SQLiteConnection(
                path: databasePath,
                flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                busyTimeout: configuration.busyTimeout,
                events: configuration.events
            )
            _ = try connection.schemaVersion()
            return connection
        }
    }

    /// Runs `body`, a step of opening the database: SQLite's refusal to write there (a file or
    /// folder the process may not write, the `-wal` and `-shm` files of a read-only open that
    /// cannot be made) is a failure to open the store, not a refused write.
    private static func failingToOpen<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as StorageError
            where error.code == .readOnly || SQLiteResultCode.readOnly ~= error
        {
            error.code = .cannotOpen
            error.message +=
                " (the database file cannot be written, or its -wal and -shm files, which SQLite reads a WAL"
                + " database through, are missing and the folder does not let them be made)"
            throw error
        }
    }

    private init(inMemoryWith connection: SQLiteConnection) {
        self.path = nil
        self.configuration = Configuration()
        self.databasePath = nil
        self.writer = Locked(connection)
    }

    /// Opens a private in-memory database. Reads and writes share its one connection.
    /// - Returns: the backend.
    /// - Throws: `StorageError` when SQLite cannot open it.
    public static func inMemory() throws -> SQLiteStorageBackend {
        let connection = try SQLiteConnection(
            path: ":memory:",
            flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
            busyTimeout: .zero
        )
        return SQLiteStorageBackend(inMemoryWith: connection)
    }

    /// Closes every connection: the idle readers, then the writer, the database's last connection
    /// in this process, which checkpoints the WAL into the database file and removes it (unless
    /// another process still has the database open). Later transactions throw `StorageError`
    /// with code `.closed`; closing twice does nothing.
    ///
    /// Waits for a write transaction running on another thread; a reader connection in use is
    /// closed when its read ends.
    /// - Throws: nothing today; declared for the protocol.
    public func close() throws {
        // Sequentially consistent, as `checkIn`'s look at it after filling the idle slot: either
        // this emptying of the slot sees that reader, or `checkIn` sees the store closed.
        guard !isClosed.exchange(true, ordering: .sequentiallyConsistent) else { return }
        // Taken out under the locks (the writer's waits for a running write), released outside
        // them: the readers close first, the writer last.
        var connection = writer.withLock { writer in
            defer { writer = nil }
            return writer
        }
        closeIdleReaders()
        var counter = counterConnection.withLock { counter in
            defer { counter = nil }
            return counter
        }
        counter = nil
        _ = counter
        connection = nil
        _ = connection
    }

    private func checkOpen() throws {
        try owner.check(path: path)
        guard !isClosed.load(ordering: .acquiring) else {
            throw StorageError(.closed, "the database was closed", path: path)
        }
    }

    /// Runs `body` in a read transaction over one committed snapshot, on a reader connection of
    /// its own (in memory: on the one connection, after any running write).
    /// - Parameter body: the reads; the transaction is valid only during the call.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or a `StorageError` for an engine failure.
    public func read<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result {
        try checkOpen()
        guard let databasePath else {
            // In memory there is one connection, so reads wait for the writer.
            var result: Result?
            try withWriterConnection { connection in
                var reader = SQLiteReadTransaction(connection: connection, schemaCache: schemaCache)
                result = try Self.runRead(on: &reader, body)
            }
            return result!
        }
        var reader = try checkOutReader(databasePath)
        defer { checkIn(reader) }
        return try Self.runRead(on: &reader, body)
    }

    /// Runs `body`, which makes at most one query after its schema look-ups, without pinning a
    /// snapshot first when it can: a key look-up (`get`) runs its one statement in autocommit,
    /// its own snapshot, on the assumption that the schema is still the version the connection
    /// last saw, and the statement proves it (it was compiled for that version, and SQLite
    /// compiles it again by itself when the schema it starts on differs, which the statement
    /// counts; see `SQLiteStatement.verified`). A pinned read costs a statement of its own (the
    /// schema version's), a third of a key look-up.
    ///
    /// Anything else (a scan, a count, a schema not cached for that version, a collection that
    /// did not exist, a statement compiled again) stops before reading, and `body` runs again in
    /// a pinned read (`read(_:)`): `body` may run twice, the first time without reading records.
    /// In memory, it is `read(_:)`.
    /// - Parameter body: the reads; the transaction is valid only during the call.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or a `StorageError` for an engine failure.
    public func readSingleQuery<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result {
        try checkOpen()
        guard let databasePath else { return try read(body) }
        var reader = try checkOutReader(databasePath)
        defer { checkIn(reader) }
        return try readSingleQuery(on: &reader, body)
    }

    /// `true` for a database in a file, whose readers (WAL) wait for no writer; in memory the
    /// one connection is the writer's.
    public var readsWithoutWaiting: Bool { databasePath != nil }

    /// `configuration.readOnly`: whether the database was opened read-only.
    public var isReadOnly: Bool { configuration.readOnly }

    /// Runs `body` as `readSingleQuery` does, on an idle reader connection whose busy handler
    /// is off for the call: `nil` in memory (reads wait for the writer there), when no reader
    /// connection is idle (opening one reads the file's header and schema), or when SQLite
    /// answers `SQLITE_BUSY` (a WAL being recovered or reset by another connection), where
    /// `readSingleQuery` would wait up to the busy timeout.
    /// - Parameter body: the reads; the transaction is valid only during the call.
    /// - Returns: what `body` returns, or `nil` when the read would have waited.
    /// - Throws: what `body` throws, or a `StorageError` for an engine failure.
    public func readSingleQueryWithoutWaiting<Result>(
        _ body: (any BackendReadTransaction) throws -> Result
    ) throws -> Result? {
        try checkOpen()
        guard databasePath != nil, var reader = takeIdleReader() else { return nil }
        defer { checkIn(reader) }
        let connection = reader.connection
        connection.waitsWhenBusy(false)
        defer { connection.waitsWhenBusy(true) }
        do {
            return try readSingleQuery(on: &reader, body)
        } catch let error as StorageError where error.code == .busy {
            return nil
        }
    }

    private func readSingleQuery<Result>(
        on reader: inout SQLiteReadTransaction,
        _ body: (any BackendReadTransaction) throws -> Result
    ) throws -> Result {
        if let assumed = reader.connection.lastSchemaVersion {
            Self.claim(&reader)
            let transaction = reader
            transaction.begin(schemaVersion: assumed, unpinned: true)
            do {
                defer { transaction.invalidate() }
                let result = try body(transaction)
                // (A closure that caught the refusal and returned anyway answered from nothing.)
                if !transaction.needsPinnedRead { return result }
            } catch  where transaction.needsPinnedRead {
                // Nothing was read: run it again on a pinned snapshot.
            }
        }
        return try Self.runRead(on: &reader, body)
    }

    /// An idle reader from the pool, or a new read-only connection on `databasePath` with a read
    /// transaction object of its own.
    private func checkOutReader(_ databasePath: String) throws -> SQLiteReadTransaction {
        if let idle = takeIdleReader() { return idle }
        let connection = try SQLiteConnection(
            path: databasePath,
            flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
            busyTimeout: configuration.busyTimeout,
            events: configuration.events
        )
        return SQLiteReadTransaction(connection: connection, schemaCache: schemaCache)
    }

    /// An idle reader from the pool, if any: the pool hands each one to one caller.
    private func takeIdleReader() -> SQLiteReadTransaction? {
        if let idle = idleReader.take() { return idle }
        return idleReaders.withLock { $0.popLast() }
    }

    /// Returns a reader to the pool, or lets its connection close when the pool is full or the
    /// connection is unusable.
    private func checkIn(_ reader: SQLiteReadTransaction) {
        guard !reader.connection.isInTransaction, !isClosed.load(ordering: .acquiring) else { return }
        let maximum = configuration.maximumReaders
        guard maximum > 0 else { return }
        if idleReader.put(reader) {
            // `close()` may have emptied the slot between the check above and now: empty it again.
            if isClosed.load(ordering: .sequentiallyConsistent) { idleReader.empty() }
            return
        }
        let surplus = idleReaders.withLock { idle -> SQLiteReadTransaction? in
            guard idle.count < maximum - 1 else { return reader }
            idle.append(reader)
            return nil
        }
        if surplus == nil && isClosed.load(ordering: .sequentiallyConsistent) {
            // Appended after `close()` emptied the pool: closed now, not when the backend goes.
            closeIdleReaders()
        }
        // Closed here, outside the lock.
        _ = surplus
    }

    /// Empties the idle slot and the pool, taking the readers out under the pool's lock and
    /// letting them go (their connections close unless a read still holds one) outside it.
    private func closeIdleReaders() {
        idleReader.empty()
        let readers = idleReaders.withLock { idle in
            defer { idle.removeAll() }
            return idle
        }
        _ = readers
    }

    /// Makes `reader` an object nobody else holds before it is made valid for a read: a closure
    /// that kept its transaction past its end holds the object, which must stay invalid, so the
    /// connection goes on with a new one.
    private static func claim(_ reader: inout SQLiteReadTransaction) {
        if !isKnownUniquelyReferenced(&reader) {
            reader = SQLiteReadTransaction(connection: reader.connection, schemaCache: reader.schemaCache)
        }
    }

    private static func runRead<Result>(
        on reader: inout SQLiteReadTransaction,
        _ body: (any BackendReadTransaction) throws -> Result
    ) throws -> Result {
        let connection = reader.connection
        // An implicit read transaction rather than BEGIN ... COMMIT: SQLite keeps an implicit
        // transaction, and its snapshot, for as long as any statement is active. The schema
        // version is read first and its statement is left on its row until the closure returns,
        // so every statement of the closure reads that one snapshot, and resetting it ends the
        // transaction. That is two statements fewer per read (a key look-up ran four).
        let pin = try connection.schemaVersionStatement()
        pin.isInUse = true
        defer {
            pin.reset()
            pin.isInUse = false
        }
        guard try pin.step("cannot begin a read transaction"), case .integer(let version) = pin.row.value(at: 0)
        else {
            throw StorageError(.engine, "the database did not report its schema version", path: connection.path)
        }
        connection.lastSchemaVersion = version
        claim(&reader)
        let transaction = reader
        transaction.begin(schemaVersion: version, unpinned: false)
        defer { transaction.invalidate() }
        return try body(transaction)
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`) that commits when it returns and
    /// rolls back when it throws. Write transactions of the process run one at a time; one from
    /// another process is waited for up to `configuration.busyTimeout`.
    ///
    /// Do not start a transaction of this backend inside `body` on the same thread: the writer
    /// is not reentrant.
    /// - Parameter body: the reads and writes; the transaction is valid only during the call.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws (unchanged), or a `StorageError` for an engine failure,
    ///   including a failed commit; `.readOnly` (before anything runs) for a database opened
    ///   read-only.
    public func write<Result>(_ body: (any BackendWriteTransaction) throws -> Result) throws -> Result {
        try checkOpen()
        if configuration.readOnly {
            throw StorageError(
                .readOnly,
                "the database was opened read-only (readOnly: true); nothing was written",
                path: path
            )
        }
        var result: Result?
        try withWriterConnection { connection in
            try connection.execute("BEGIN IMMEDIATE", cached: true)
            let transaction = SQLiteWriteTransaction(connection: connection, schemaCache: schemaCache)
            defer { transaction.invalidate() }
            do {
                let value = try body(transaction)
                guard connection.isInTransaction else {
                    // SQLite rolls back by itself after some failures (a full disk, for one).
                    throw StorageError(.engine, "the transaction was rolled back by the engine after an error")
                }
                let changed = transaction.changedSchemas
                let newVersion = changed.isEmpty ? nil : try connection.schemaVersion()
                try connection.execute("COMMIT", cached: true)
                if let newVersion, let baseVersion = transaction.baseSchemaVersion {
                    schemaCache.publish(
                        changed,
                        dropped: transaction.droppedCollections,
                        from: baseVersion,
                        to: newVersion
                    )
                }
                result = value
            } catch {
                connection.rollbackIfNeeded()
                throw error
            }
        }
        return result!
    }

    /// Runs `body` holding the writer connection.
    /// - Throws: `StorageError` with code `.misuse` when this thread already holds it: a write
    ///   (or, in memory, any transaction) started inside another one on the same thread would
    ///   wait for itself forever.
    private func withWriterConnection(_ body: (SQLiteConnection) throws -> Void) throws {
        let me = pthread_self()
        let nested = writerOwner.withLock { owner in owner.map { pthread_equal($0, me) != 0 } ?? false }
        if nested {
            throw StorageError(
                .misuse,
                "a transaction was started inside another one on the same thread; SQLite has one writer"
                    + (databasePath == nil ? " (and an in-memory database one connection)" : ""),
                path: path
            )
        }
        try writer.withLock { connection in
            guard let connection else { throw StorageError(.closed, "the database was closed", path: path) }
            writerOwner.withLock { $0 = me }
            defer { writerOwner.withLock { $0 = nil } }
            try body(connection)
        }
    }
}

extension SQLiteStorageBackend: ExternalCommitCounter {
    /// `PRAGMA data_version` on a read-only connection of its own, which never writes: SQLite
    /// changes it whenever another connection (the writer of this process or of another one)
    /// has committed. One cached statement, no transaction of the writer's, no snapshot kept.
    /// A database in memory is only reached through this backend, so it answers 0.
    /// - Returns: the connection's data version.
    /// - Throws: `StorageError` when the database cannot be opened or read, or `.closed`.
    public func externalCommitCount() throws -> UInt64 {
        try checkOpen()
        guard let databasePath else { return 0 }
        return try counterConnection.withLock { connection in
            if connection == nil {
                connection = try SQLiteConnection(
                    path: databasePath,
                    flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                    busyTimeout: configuration.busyTimeout,
                    events: configuration.events
                )
            }
            return UInt64(bitPattern: try connection!.integer("PRAGMA data_version") ?? 0)
        }
    }
}
