import Foundation
public import Storage
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `StorageBackend` that keeps each collection in a folder and each record in a file of its
/// own, a keyed binary archive readable without a database (docs/ARCHIVE_FORMAT.md).
///
/// ```swift
/// let store = try ObjectStore(backend: .fileArchive(directory: "Profiles"))
/// ```
///
/// The committed store is held in memory, loaded when the backend opens. Read transactions run
/// on a snapshot of it and never wait for the writer. Write transactions of the process run one
/// at a time, and those of several processes are serialized by `flock` on the store's lock file.
/// A commit writes its files durably (temporary file, fsync, rename, fsync of the folder) and
/// is all-or-nothing across a crash, through a journal rolled forward or back at the next use.
///
/// A process notices the commits of other processes through a generation counter in the lock
/// file, and reloads the store before its next transaction.
///
/// Waits for the lock file are bounded by `Configuration.lockTimeout`: when another process
/// holds it longer (it is hung, or stopped), opening, writing or reloading fails with
/// `StorageError.Code.busy` before changing anything.
public final class FileArchiveStorageBackend: StorageBackend, StoreEventSource {
    /// The store folder.
    public let directory: String
    /// The configuration the backend was opened with (its `events` set to `eventReporter`).
    public let configuration: Configuration
    /// Where the backend reports waits for another process's lock file (`conflict`):
    /// `configuration.events`, or a reporter of its own.
    public let eventReporter: StoreEventReporter

    /// The record files left out when the store was opened (or last reloaded after another
    /// process committed), with the reason: files written by older versions under names that
    /// no longer match their keys. The rest of the store is served; such a file stays on disk
    /// until its key is written or deleted, which replaces or removes it. Empty for a sound
    /// store. See docs/ARCHIVE_FORMAT.md, "Damaged records".
    public var damagedRecords: [DamagedRecord] {
        committed.withLock { $0.database.damage }
    }

    private let files: StoreFiles
    /// The lock file, open for the backend's lifetime; `flock`ed exclusively by writers.
    private let lockDescriptor: Int32
    /// The committed store and the generation it reflects.
    private let committed: Locked<Committed>
    /// Held for the whole of a write transaction: writers of the process run one at a time. It
    /// counts the write transactions begun (a sized value: see `Locked` on zero-sized ones).
    private let writerLock = Locked<UInt64>(0)
    /// The thread running a write transaction, so that a nested one is refused instead of
    /// deadlocking.
    private let writerThread = Locked<pthread_t?>(nil)
    /// The process that opened the store: a child made by `fork()` shares `lockDescriptor`, so
    /// its `flock` would succeed while the parent holds the lock.
    private let owner = OwningProcess()
    /// Set by `close()`: the lock file's descriptor is closed, and its number may already name
    /// another file, so nothing may use it again.
    private let isClosed = Atomic<Bool>(false)

    private struct Committed: Sendable {
        var database: ArchiveDatabase
        var generation: Int64
        /// Set when a commit failed half-way: the store must be read again from disk.
        var isStale = false
    }

    /// Opens the store in `directory`, creating the folder (mode 0700) when missing, and
    /// completes or undoes a commit a crash interrupted; with `configuration.readOnly`, opens an
    /// existing store and changes nothing.
    /// - Parameters:
    ///   - directory: the store folder; its parent must exist.
    ///   - configuration: how the store is used, such as how long to wait for another
    ///     process's lock.
    /// - Throws: `StorageError` with code `.cannotOpen` when the folder cannot be created or
    ///   opened (read-only: when it is missing, has no lock file, or holds an interrupted
    ///   commit), `.corrupt` when a file of the store is damaged (the error names it), `.busy`
    ///   when another process holds the store's lock longer than `configuration.lockTimeout`.
    public init(directory: String, configuration: Configuration = .init()) throws {
        try StorePath.check(directory, role: "store folder")
        let absolute =
            directory.hasPrefix("/") ? directory : FileManager.default.currentDirectoryPath + "/" + directory
        let readOnly = configuration.readOnly
        let eventReporter = configuration.events ?? StoreEventReporter()
        var configuration = configuration
        configuration.events = eventReporter
        let files: StoreFiles
        let descriptor: Int32
        if readOnly {
            files = try Self.existingStore(absolute)
            descriptor = try files.root.openFile(FileNames.lockFile, flags: O_RDONLY, code: .cannotOpen)
        } else {
            try FileSystem.makeDirectory(absolute, code: .cannotOpen)
            files = StoreFiles(root: try Folder(path: absolute, code: .cannotOpen))
            descriptor = try files.root.openFile(FileNames.lockFile, flags: O_RDWR | O_CREAT, code: .cannotOpen)
        }
        do {
            try Self.lock(
                descriptor,
                path: files.lockPath,
                timeout: configuration.lockTimeout,
                shared: readOnly,
                events: eventReporter
            )
            defer { _ = flock(descriptor, LOCK_UN) }
            if readOnly {
                try Self.checkNoInterruptedCommit(files)
            } else {
                if try files.recover() { try files.setGeneration(files.generation(descriptor) + 1, descriptor) }
                try files.removeTemporaryFiles()
            }
            let database = try files.load()
            committed = Locked(Committed(database: database, generation: files.generation(descriptor)))
        } catch {
            closeDescriptor(descriptor)
            throw error
        }
        self.directory = directory
        self.configuration = configuration
        self.eventReporter = eventReporter
        self.files = files
        self.lockDescriptor = descriptor
    }

    deinit {
        if !isClosed.load(ordering: .acquiring) { closeDescriptor(lockDescriptor) }
    }

    /// The store folder at `absolute` for a read-only open: it must exist and hold the store's
    /// lock file, and nothing is created.
    /// - Throws: `StorageError` with code `.cannotOpen` naming what is missing.
    private static func existingStore(_ absolute: String) throws -> StoreFiles {
        try StorePath.existing(absolute, role: "store folder", kind: .folder)
        let files = StoreFiles(root: try Folder(path: absolute, code: .cannotOpen))
        guard files.root.exists(FileNames.lockFile) else {
            throw StorageError(
                .cannotOpen,
                "\(absolute) is not a file archive store: it has no '\(FileNames.lockFile)' file (a store opened"
                    + " read-only is never created)",
                path: absolute
            )
        }
        return files
    }

    /// Refuses, for a read-only store, a commit that a crash interrupted: completing it writes,
    /// and the files without it are neither the commit before it nor the commit itself.
    /// - Throws: `StorageError` with code `.cannotOpen` naming the journal.
    private static func checkNoInterruptedCommit(_ files: StoreFiles) throws {
        guard files.root.exists(FileNames.journalFile) else { return }
        throw StorageError(
            .cannotOpen,
            "the store's last commit was interrupted by a crash and is not completed yet (\(files.journalPath)"
                + " is there): a store opened read-only never completes it; open the store read-write once",
            path: files.journalPath
        )
    }

    /// Closes the lock file and drops the store held in memory; later transactions throw
    /// `StorageError` with code `.closed`. Closing twice does nothing.
    /// - Throws: nothing today; declared for the protocol.
    public func close() throws {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        closeDescriptor(lockDescriptor)
        files.root.close()
        committed.withLock { $0 = Committed(database: ArchiveDatabase(), generation: .max) }
    }

    private func checkOpen() throws {
        try owner.check(path: directory)
        guard !isClosed.load(ordering: .acquiring) else {
            throw StorageError(.closed, "the store was closed", path: directory)
        }
    }

    /// Locks the lock file `descriptor` exclusively (or, `shared`, beside other shared locks: a
    /// read-only store loading), waiting at most `timeout` for another process to release it: a
    /// non-blocking attempt is retried after sleeps growing from 1 ms to 50 ms until the deadline,
    /// measured on the monotonic clock.
    /// - Throws: `StorageError` with code `.busy` naming the lock file when the deadline passes.
    private static func lock(
        _ descriptor: Int32,
        path: String,
        timeout: Duration,
        shared: Bool = false,
        events: StoreEventReporter
    ) throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var pause = Duration.milliseconds(1)
        while flock(descriptor, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0 {
            let number = errno
            if number == EINTR { continue }
            guard number == EWOULDBLOCK else { throw FileSystem.error(.busy, "lock", path, errno: number) }
            let remaining = deadline - clock.now
            guard remaining > .zero else {
                throw StorageError(
                    .busy,
                    "another process holds the store's lock file \(path) (waited \(timeout))",
                    path: path,
                    underlying: POSIXError(.EWOULDBLOCK)
                )
            }
            if pause == .milliseconds(1) {
                events.report(
                    StoreEvent(
                        .conflict,
                        backend: "FileArchive",
                        attempt: 1,
                        code: .busy,
                        reason: "lock file held by another process, waiting up to \(timeout)",
                        location: path
                    )
                )
            }
            Self.sleep(for: min(pause, remaining))
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    /// Blocks the thread for `duration` (or less, when a signal interrupts the sleep).
    private static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        _ = nanosleep(&request, nil)
    }

    private var isWriterThread: Bool {
        let current = pthread_self()
        return writerThread.withLock { owner in owner.map { pthread_equal($0, current) != 0 } ?? false }
    }

    /// Runs `body` on a snapshot of the committed store. When another process has committed
    /// since the store was loaded, it is loaded again first.
    /// - Parameter body: the reads; the transaction is valid only during the call.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or `StorageError` when the store cannot be read, `.busy`
    ///   when a reload waits for another process's lock longer than `lockTimeout`.
    public func read<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result {
        try checkOpen()
        let transaction = FileArchiveTransaction(database: try currentDatabase(), isWritable: false)
        defer { transaction.isOpen = false }
        return try body(transaction)
    }

    /// `true`: a read runs on the snapshot in memory; only a reload waits (for the lock file).
    public var readsWithoutWaiting: Bool { true }

    /// `configuration.readOnly`: whether the store was opened read-only.
    public var isReadOnly: Bool { configuration.readOnly }

    /// Runs `body` on the snapshot in memory as `read` does, unless another process committed
    /// since it was loaded: `nil` then, since the reload waits for the store's lock file (up to
    /// `lockTimeout`) and reads every file.
    /// - Parameter body: the reads; the transaction is valid only during the call.
    /// - Returns: what `body` returns, or `nil` when the read would have waited.
    /// - Throws: what `body` throws, or `StorageError` when the store is closed.
    public func readSingleQueryWithoutWaiting<Result>(
        _ body: (any BackendReadTransaction) throws -> Result
    ) throws -> Result? {
        try checkOpen()
        let snapshot = committed.withLock { $0 }
        let reloads = snapshot.isStale || files.generation(lockDescriptor) > snapshot.generation
        guard !reloads || isWriterThread else { return nil }
        let transaction = FileArchiveTransaction(database: snapshot.database, isWritable: false)
        defer { transaction.isOpen = false }
        return try body(transaction)
    }

    private func currentDatabase() throws -> ArchiveDatabase {
        let snapshot = committed.withLock { $0 }
        guard snapshot.isStale || files.generation(lockDescriptor) > snapshot.generation, !isWriterThread else {
            return snapshot.database
        }
        // A descriptor of its own: flock on the shared one would convert the writer's lock.
        let readOnly = configuration.readOnly
        let descriptor = try files.root.openFile(FileNames.lockFile, flags: readOnly ? O_RDONLY : O_RDWR, code: .io)
        defer { closeDescriptor(descriptor) }
        try Self.lock(
            descriptor,
            path: files.lockPath,
            timeout: configuration.lockTimeout,
            shared: readOnly,
            events: eventReporter
        )
        defer { _ = flock(descriptor, LOCK_UN) }
        if readOnly {
            try Self.checkNoInterruptedCommit(files)
        } else if try files.recover() {
            try files.setGeneration(files.generation(descriptor) + 1, descriptor)
        }
        let loaded = Committed(database: try files.load(), generation: files.generation(descriptor))
        committed.withLock { current in
            if current.isStale || loaded.generation >= current.generation { current = loaded }
        }
        return loaded.database
    }

    /// Runs `body` in a write transaction and commits its changes durably when it returns.
    /// - Parameter body: the changes; the transaction is valid only during the call.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws (nothing is written), or `StorageError` when the commit
    ///   fails, `.misuse` when called from inside a write transaction on the same thread,
    ///   `.busy` (before `body` runs) when another process holds the store's lock longer than
    ///   `lockTimeout`, or `.readOnly` (before anything runs) for a store opened read-only.
    public func write<Result>(_ body: (any BackendWriteTransaction) throws -> Result) throws -> Result {
        try checkOpen()
        if configuration.readOnly {
            throw StorageError(
                .readOnly,
                "the store was opened read-only (readOnly: true); nothing was written",
                path: directory
            )
        }
        guard !isWriterThread else {
            throw StorageError(.misuse, "a write transaction is already open on this thread", path: directory)
        }
        return try writerLock.withLock { begun in
            begun &+= 1
            writerThread.withLock { $0 = pthread_self() }
            defer { writerThread.withLock { $0 = nil } }
            try Self.lock(
                lockDescriptor,
                path: files.lockPath,
                timeout: configuration.lockTimeout,
                events: eventReporter
            )
            defer { _ = flock(lockDescriptor, LOCK_UN) }
            var snapshot = committed.withLock { $0 }
            var generation = files.generation(lockDescriptor)
            if try files.recover() {
                generation += 1
                try files.setGeneration(generation, lockDescriptor)
            }
            if snapshot.isStale || generation != snapshot.generation {
                snapshot = Committed(database: try files.load(), generation: generation)
                committed.withLock { $0 = snapshot }
            }
            let transaction = FileArchiveTransaction(database: snapshot.database, isWritable: true)
            defer { transaction.isOpen = false }
            let result = try body(transaction)
            transaction.isOpen = false
            let plan = try makePlan(transaction)
            guard !plan.isEmpty else { return result }
            // The counter moves before the files do, so that a counter that cannot be written
            // fails the commit before it happens: another process never misses a commit. It
            // moves in this process first, so that readers of this process, which keep the
            // committed state until the commit is done, never reload for their own commit.
            let next = snapshot.generation + 1
            do {
                committed.withLock { $0.generation = next }
                try files.setGeneration(next, lockDescriptor)
                try files.commit(plan)
            } catch {
                committed.withLock { $0.isStale = true }
                throw error
            }
            var database = transaction.database
            if !database.damage.isEmpty {
                // A damaged file written or removed by the commit is damaged no more.
                let touched = Set(plan.writes.map { files.root.path($0.path) } + plan.removals.map(files.root.path))
                database.damage.removeAll { touched.contains($0.path) }
            }
            committed.withLock { $0 = Committed(database: database, generation: next) }
            return result
        }
    }

    /// The files a transaction's changes rewrite and remove.
    private func makePlan(_ transaction: FileArchiveTransaction) throws -> StoreFiles.Plan {
        var plan = StoreFiles.Plan()
        for name in transaction.changedSchemas.sorted() {
            let table = transaction.database.tables[name]!
            let file = SchemaArchive(table.schema, lastAssignedKey: table.lastAssignedKey)
            let bytes = try ArchiveEncoder().encodeBytes(file, kind: .schema)
            plan.writes.append((table.folder + "/" + FileNames.schemaFile, bytes))
            if transaction.base.tables[name] == nil { plan.newFolders.append(table.folder) }
        }
        for (name, keys) in transaction.changedKeys {
            // A dropped collection's files are named after the table the transaction started from.
            let table = transaction.database.tables[name]
            guard let named = table ?? transaction.base.tables[name] else { continue }
            let existing = transaction.base.tables[name]
            for key in keys {
                let file = named.folder + "/" + (try FileNames.record(for: key.value, in: named.schema.name))
                // Files of an older version's names that hold the key go, so that none of them
                // comes back at the next load.
                if let strays = existing?.strayFiles[key] {
                    plan.removals += strays.map { named.folder + "/" + $0 }
                }
                if let table, let record = table.records[key] {
                    guard let bytes = RecordArchive.encode(record, columns: table.schema.columns) else {
                        // `put` refuses such a record first; kept so that nothing unreadable is written.
                        throw StorageError(
                            .limitExceeded,
                            "the record's file would be more than the 2 GiB an archive file may be",
                            collection: table.schema.name,
                            key: key.value
                        )
                    }
                    plan.writes.append((file, bytes))
                } else if existing?.records[key] != nil {
                    plan.removals.append(file)
                }
            }
        }
        // The schema file of a dropped collection goes, unless the collection was created again
        // (its folder is in use) or never committed (there is no file).
        let folders = Set(transaction.database.tables.values.map(\.folder))
        let committedFolders = Set(transaction.base.tables.values.map(\.folder))
        for folder in transaction.droppedFolders.sorted()
        where !folders.contains(folder) && committedFolders.contains(folder) {
            plan.removals.append(folder + "/" + FileNames.schemaFile)
        }
        return plan
    }
}

extension FileArchiveStorageBackend: ExternalCommitCounter {
    /// The commit counter in the lock file's first 8 bytes, which every commit of any process
    /// advances while holding the file lock: one `pread`, without taking the lock.
    /// - Returns: the number of commits made to the store.
    /// - Throws: `StorageError` with code `.closed` once the store is closed.
    public func externalCommitCount() throws -> UInt64 {
        try checkOpen()
        return UInt64(bitPattern: files.generation(lockDescriptor))
    }
}
