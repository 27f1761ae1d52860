internal import CLMDB
import Foundation
import Storage
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One LMDB environment (one store file), shared by every backend of the process opened on the
/// same file: LMDB forbids opening one environment twice in a process.
///
/// It owns the locks that make LMDB's rules hold inside the process:
/// - `writerLock`: one write transaction at a time;
/// - `mapGate`: every transaction passes it, and a change of the map size waits there for the
///   live ones to end while keeping new ones out (LMDB remaps only while no transaction of the
///   process is live); see `LMDBMapGate`;
/// - `handleLock`: `mdb_dbi_open` is never called from two transactions at once, and a write
///   transaction that opened a database handle holds it until it ends (the handle is private to
///   it until then).
///
/// `@unchecked Sendable`: `env` is an LMDB environment opened with `MDB_NOTLS`, which LMDB allows
/// to be used from any thread; the mutable state (handles, collection cache, known generation)
/// is guarded by `Locked`.
final class LMDBEnvironment: @unchecked Sendable {
    let env: OpaquePointer
    let path: String
    let configuration: LMDBStorageBackend.Configuration
    let metadata: MDB_dbi
    let maximumKeySize: Int

    let writerLock = LMDBMutex()
    let mapGate = LMDBMapGate()
    /// Set after a commit that left more than half of the map in use, cleared by a growth: the
    /// next transaction begun outside any other grows the map first, so a write started inside
    /// a read (which cannot grow it) finds room.
    private let isNearlyFull = Atomic<Bool>(false)
    let handleLock = LMDBMutex()
    /// The process that opened the environment: LMDB forbids using it after `fork()`.
    var owner: OwningProcess { fileID.process }

    /// Reset read transactions kept for reuse with their objects (each holds a reader slot): a
    /// look-up renews one and allocates nothing.
    private let idleReaders = Locked<[LMDBReadTransaction]>([])
    /// At most this many kept read transactions, `idleReader` included.
    static let idleReaderLimit = 8
    /// One more kept read transaction, taken first and handed over without a lock (the lock of
    /// `idleReaders`, taken twice a read, cost more than the rest of a look-up's bookkeeping:
    /// docs/BENCHMARKS.md); `closeEnvironment()` aborts it with the others.
    private let idleReader = AtomicSlot<LMDBReadTransaction>()

    /// Moves on by one as a write transaction of this process starts to commit and by one as its
    /// commit returns (`LMDBStorageBackend`), so that a read can tell whether one commit ended and
    /// another began while it was beginning (see `startRead`).
    let commitSequence = Atomic<UInt64>(0)
    /// How many read transactions were begun again because commits of this process overlapped
    /// their beginning (see `startRead`).
    let snapshotRetries = Atomic<Int>(0)
    /// Called by `startRead` between reading `commitSequence` and beginning the transaction; set
    /// only by tests, before any read of the environment, to commit in that window.
    nonisolated(unsafe) var beforeReadBegins: (() -> Void)?
    /// Called by `startRead` between beginning the transaction and checking it, as a reader held
    /// up there (or inside LMDB's begin, after it read the newest commit's id) would be; set only
    /// by tests, as `beforeReadBegins`.
    nonisolated(unsafe) var afterReadBegins: (() -> Void)?

    /// Database handles by name, every one valid in transactions begun after it was published.
    private let handles = Locked<[String: MDB_dbi]>([:])
    /// The catalog generation the handles are complete for.
    private let knownGeneration = Locked<UInt64>(0)
    /// Decoded metadata entries, by folded collection name, with the bytes they were decoded from.
    let collectionCache = Locked<[String: (bytes: [UInt8], info: LMDBCollectionInfo)]>([:])
    /// What read transactions have already checked in one committed snapshot (see `SnapshotMemo`).
    private let snapshotMemo = Locked(SnapshotMemo())

    /// Facts about one committed snapshot, named by its transaction id (`mdb_txn_id`): every
    /// commit, by any process, gives the next snapshot a new id, and an id is never reused while
    /// the file exists, so what a read transaction found in snapshot N holds for every read
    /// transaction of snapshot N. A look-up that repeats one in the same snapshot skips reading
    /// the catalog generation and the collection's metadata entry (and comparing it with the
    /// cached schema), which cost as much as the raw look-up's whole transaction.
    ///
    /// Only read-only transactions use it: a write transaction's id is that of the snapshot it
    /// would commit, which an abort gives to the next writer with other contents.
    private struct SnapshotMemo {
        var snapshot: Int = -1
        /// The collections looked up in the snapshot, by the name they were asked for; `nil` for
        /// one that does not exist. A short list: a store has few collections.
        var collections: [(name: String, info: LMDBCollectionInfo?)] = []
    }

    static let snapshotMemoLimit = 16

    /// The committed snapshot in which the store's registry of full-text indexes
    /// (`_search_indexes`) was known not to exist, or -1. Every write asks for it, and a write
    /// transaction based on that snapshot (its id one more) answers from here instead of a
    /// look-up of the catalog: a commit by any process moves the snapshot on.
    private let searchRegistryAbsence = Locked(-1)

    /// Whether the registry of full-text indexes did not exist in committed snapshot `snapshot`.
    func isSearchRegistryAbsent(in snapshot: Int) -> Bool {
        searchRegistryAbsence.withLock { $0 == snapshot }
    }

    /// Records that the registry of full-text indexes does not exist in committed snapshot
    /// `snapshot` (a write transaction that found none and made none committed it).
    func noteSearchRegistryAbsent(in snapshot: Int) {
        searchRegistryAbsence.withLock { $0 = snapshot }
    }

    /// Whether a read transaction already checked the catalog generation of `snapshot`.
    func isCheckedSnapshot(_ snapshot: Int) -> Bool {
        snapshotMemo.withLock { $0.snapshot == snapshot }
    }

    /// Records that the handles are complete for the catalog of `snapshot`.
    func markCheckedSnapshot(_ snapshot: Int) {
        snapshotMemo.withLock { memo in
            if memo.snapshot != snapshot { memo = SnapshotMemo(snapshot: snapshot, collections: []) }
        }
    }

    /// The metadata a read transaction of `snapshot` found for `collection`: `.some(nil)` when it
    /// does not exist, `nil` when not known.
    func memoizedInfo(_ collection: String, snapshot: Int) -> LMDBCollectionInfo?? {
        snapshotMemo.withLock { memo -> LMDBCollectionInfo?? in
            guard memo.snapshot == snapshot else { return nil }
            for entry in memo.collections where entry.name == collection { return .some(entry.info) }
            return nil
        }
    }

    /// Records what a read transaction of `snapshot` found for `collection`.
    func memoize(_ info: LMDBCollectionInfo?, for collection: String, snapshot: Int) {
        snapshotMemo.withLock { memo in
            guard memo.snapshot == snapshot, memo.collections.count < Self.snapshotMemoLimit else { return }
            memo.collections.append((collection, info))
        }
    }

    static let metadataName = "_storage_meta"
    static let generationKey = Array("generation".utf8)

    /// A store file, in one process: a child made by `fork()` inherits the parent's registry,
    /// whose environments it must neither use nor close, and opens environments of its own.
    private struct FileID: Hashable {
        let device: UInt64
        let inode: UInt64
        let process: OwningProcess
    }

    private final class WeakEnvironment {
        weak var environment: LMDBEnvironment?
        /// The backends that opened the environment and have not closed it (guarded by the
        /// registry's lock).
        var users = 1
        init(_ environment: LMDBEnvironment) { self.environment = environment }
    }

    /// The number of read transactions open on the current thread: a map resize waits for them
    /// to end, so one asked for by a write nested in a read would wait for itself.
    private let readDepthKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    var readDepth: Int {
        get { Int(bitPattern: pthread_getspecific(readDepthKey)) }
        set { pthread_setspecific(readDepthKey, UnsafeRawPointer(bitPattern: newValue)) }
    }

    /// Whether the current thread holds `writerLock`: a thread-local, so a top-level read (the
    /// hot path) decides whether it is nested without taking a lock shared by every thread.
    private let writerKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    var holdsWriterLock: Bool {
        get { pthread_getspecific(writerKey) != nil }
        set { pthread_setspecific(writerKey, newValue ? UnsafeRawPointer(bitPattern: 1) : nil) }
    }

    private static let registry = Locked<[FileID: WeakEnvironment]>([:])
    /// How many environments of each file are open (until `mdb_env_close` has returned).
    private static let liveEnvironments = Locked<[FileID: Int]>([:])
    /// Signalled whenever an environment has finished closing, for an `open` waiting on it.
    private static let closings = NSCondition()
    /// How long `open` waits for an environment of the same file that another thread is closing.
    static let closingTimeout: Double = 30
    private let fileID: FileID
    /// Set once `mdb_env_close` has run (by `release()` or `deinit`).
    private let isClosed = Locked(false)

    /// The environment of the file at `path`, opened (and created with mode 0600) when no backend
    /// of the process has it open. Each call must be balanced by one `release()`.
    /// - Throws: `StorageError` with code `.busy` when an environment of the same file, released
    ///   on another thread, is still closing after `closingTimeout` seconds.
    static func open(path: String, configuration: LMDBStorageBackend.Configuration) throws -> LMDBEnvironment {
        let fileID = try configuration.readOnly ? existingFile(at: path) : createFile(at: path)
        let deadline = Date(timeIntervalSinceNow: closingTimeout)
        while true {
            let opened = try registry.withLock { registry -> LMDBEnvironment? in
                if let entry = registry[fileID], let existing = entry.environment {
                    // A read-only environment cannot write for a store that would.
                    if existing.isReadOnly && !configuration.readOnly {
                        throw StorageError(
                            .cannotOpen,
                            "the store file is open read-only in this process (readOnly: true), and LMDB opens"
                                + " one environment a file per process: close the read-only stores on it first",
                            path: path
                        )
                    }
                    entry.users += 1
                    return existing
                }
                // An environment released on another thread may still be closing; a second one
                // opened meanwhile would lose its locks when the first closes its lock file.
                guard liveEnvironments.withLock({ $0[fileID] ?? 0 }) == 0 else { return nil }
                // LMDB opens its lock file following symbolic links; it is created (or checked)
                // here first, while the process has no environment on the file (closing a
                // descriptor of the lock file drops the process's locks on it).
                _ = try createFile(at: path + "-lock", role: "lock file")
                let environment = try LMDBEnvironment(path: path, fileID: fileID, configuration: configuration)
                registry[fileID] = WeakEnvironment(environment)
                return environment
            }
            if let opened { return opened }
            // Woken by the close, or at the deadline; the check above decides, so a signal sent
            // before this wait began is not lost (the wait is short-sliced).
            closings.lock()
            _ = closings.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.05)))
            closings.unlock()
            guard Date() < deadline else {
                throw StorageError(
                    .busy,
                    "another store on this file is still closing (waited \(Int(closingTimeout)) s)",
                    path: path
                )
            }
        }
    }

    /// Gives up one `open`: the last one closes the environment now, freeing its map, its file
    /// descriptors and its reader slots, instead of when the last reference goes away.
    func release() {
        let fileID = fileID
        let isLast = Self.registry.withLock { registry -> Bool in
            guard let entry = registry[fileID], entry.environment === self else { return false }
            entry.users -= 1
            guard entry.users == 0 else { return false }
            registry[fileID] = nil
            return true
        }
        if isLast { closeEnvironment() }
    }

    /// Closes the LMDB environment once, and wakes the opens waiting for it.
    private func closeEnvironment() {
        // In a child made by fork(), the parent's environment is left alone: closing it there
        // would drop the child's own locks on the lock file (POSIX locks belong to the process)
        // and free reader slots of the parent's.
        guard owner.isCurrent else { return }
        guard
            isClosed.withLock({ closed in
                defer { closed = true }
                return !closed
            })
        else { return }
        if let transaction = idleReader.take() {
            mdb_txn_abort(transaction.txn)
        }
        for transaction in idleReaders.withLock({ idle in
            defer { idle.removeAll() }
            return idle
        }) {
            mdb_txn_abort(transaction.txn)
        }
        mdb_env_close(env)
        let fileID = fileID
        Self.liveEnvironments.withLock { open in
            open[fileID, default: 1] -= 1
            if open[fileID] == 0 { open[fileID] = nil }
        }
        Self.closings.lock()
        Self.closings.broadcast()
        Self.closings.unlock()
    }

    /// Creates the file with mode 0600 unless it exists, refusing symbolic links and anything
    /// that is not a regular file (`StorePath.createPrivateFile`).
    private static func createFile(at path: String, role: String = "store file") throws -> FileID {
        let file = try StorePath.createPrivateFile(at: path, role: role)
        return FileID(device: file.device, inode: file.inode, process: OwningProcess())
    }

    /// The existing store file at `path`, for a read-only open: a missing file is not created,
    /// and a symbolic link or anything but a regular file is refused.
    /// - Throws: `StorageError` with code `.cannotOpen` naming the reason.
    private static func existingFile(at path: String) throws -> FileID {
        let file = try StorePath.existing(path, role: "store file", kind: .file)
        return FileID(device: file.device, inode: file.inode, process: OwningProcess())
    }

    /// Whether the environment was opened with `MDB_RDONLY` (`Configuration.readOnly`).
    var isReadOnly: Bool { configuration.readOnly }

    private init(path: String, fileID: FileID, configuration: LMDBStorageBackend.Configuration) throws {
        var created: OpaquePointer?
        var rc = mdb_env_create(&created)
        guard LMDBResultCode(rc) == .success, let env = created else {
            throw StorageError.lmdb(rc, "cannot create an environment", path: path)
        }
        do {
            rc = mdb_env_set_maxdbs(env, MDB_dbi(clamping: configuration.maximumDatabases))
            guard LMDBResultCode(rc) == .success else {
                throw StorageError.lmdb(rc, "cannot set the number of databases", path: path)
            }
            rc = mdb_env_set_maxreaders(env, UInt32(clamping: configuration.maximumReaders))
            guard LMDBResultCode(rc) == .success else {
                throw StorageError.lmdb(rc, "cannot set the number of readers", path: path)
            }
            rc = mdb_env_set_mapsize(env, max(configuration.initialMapSize, 64 << 10))
            guard LMDBResultCode(rc) == .success else {
                throw StorageError.lmdb(rc, "cannot set the map size", path: path)
            }
            // NOTLS: Swift tasks move between threads, so a reader slot must belong to the
            // transaction, not to the thread. NOSUBDIR: the store is one file (plus "-lock").
            let readOnly = configuration.readOnly ? MDB_RDONLY : 0
            rc = mdb_env_open(env, path, UInt32(MDB_NOTLS | MDB_NOSUBDIR | readOnly), 0o600)
            guard LMDBResultCode(rc) == .success else {
                throw StorageError.lmdb(rc, "cannot open the store", path: path)
            }
            try Self.checkLength(env, path: path)
            // Reader slots left by processes that died would pin old pages forever.
            var dead: Int32 = 0
            rc = mdb_reader_check(env, &dead)
            guard LMDBResultCode(rc) == .success else {
                throw StorageError.lmdb(rc, "cannot check the reader table", path: path)
            }
            metadata = try Self.openMetadata(env, path: path, readOnly: configuration.readOnly)
        } catch {
            mdb_env_close(env)
            throw error
        }
        self.env = env
        self.path = path
        self.fileID = fileID
        self.configuration = configuration
        self.maximumKeySize = Int(mdb_env_get_maxkeysize(env))
        Self.liveEnvironments.withLock { $0[fileID, default: 0] += 1 }
        try refreshHandles()
        noteUsageAfterCommit()  // a store reopened nearly full grows before its first transaction
    }

    deinit {
        closeEnvironment()
        if owner.isCurrent {
            pthread_key_delete(readDepthKey)
            pthread_key_delete(writerKey)
        }
    }

    /// Refuses a file shorter than its meta page says it is (cut short, or a damaged meta page):
    /// LMDB maps the file and trusts the meta page, so reading a page past the end of the file
    /// would kill the process with SIGBUS instead of failing.
    private static func checkLength(_ env: OpaquePointer, path: String) throws {
        var info = MDB_envinfo()
        var pages = MDB_stat()
        var status = stat()
        guard LMDBResultCode(mdb_env_info(env, &info)) == .success,
            LMDBResultCode(mdb_env_stat(env, &pages)) == .success, lstat(path, &status) == 0
        else {
            throw StorageError(.io, "cannot read the size of the store file", path: path)
        }
        let (count, overflow) = info.me_last_pgno.addingReportingOverflow(1)
        let (needed, tooLarge) = count.multipliedReportingOverflow(by: Int(pages.ms_psize))
        guard !overflow, !tooLarge, Int(status.st_size) >= needed else {
            throw StorageError(
                .corrupt,
                "the store file is damaged: it has \(status.st_size) bytes, but its last page"
                    + " (\(info.me_last_pgno), \(pages.ms_psize) bytes a page) needs \(overflow || tooLarge ? "more" : String(needed))",
                path: path
            )
        }
    }

    /// Opens the handle of the metadata database, created when missing; read-only, in a read
    /// transaction, and a store without one (never opened read-write) cannot be opened.
    private static func openMetadata(_ env: OpaquePointer, path: String, readOnly: Bool) throws -> MDB_dbi {
        var transaction: OpaquePointer?
        var rc = mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &transaction)
        guard LMDBResultCode(rc) == .success, let transaction else {
            throw StorageError.lmdb(rc, "cannot begin a transaction", path: path)
        }
        var dbi: MDB_dbi = 0
        rc = mdb_dbi_open(transaction, metadataName, readOnly ? 0 : UInt32(MDB_CREATE), &dbi)
        if readOnly && LMDBResultCode(rc) == .notFound {
            mdb_txn_abort(transaction)
            throw StorageError(
                .cannotOpen,
                "the file has no catalog (\(metadataName)): it is not a store, or one never opened read-write",
                path: path
            )
        }
        guard LMDBResultCode(rc) == .success else {
            mdb_txn_abort(transaction)
            throw StorageError.lmdb(rc, "cannot open the metadata database", path: path)
        }
        rc = mdb_txn_commit(transaction)
        guard LMDBResultCode(rc) == .success else {
            throw StorageError.lmdb(rc, "cannot create the metadata database", path: path)
        }
        return dbi
    }

    // MARK: Transactions and the map

    /// Thrown by `begin` to the thread holding the writer lock when another process grew the
    /// map: the writer lets go of its lock before adopting the new size, since the adoption
    /// waits for every transaction of the process and a read may be waiting for the writer lock.
    struct MapGrownElsewhere: Error {}

    /// Whether the calling thread has a live transaction or holds the writer lock: a map growth
    /// asked for by it would wait for itself, and the gate lets its transactions through.
    var holdsTransaction: Bool { readDepth > 0 || holdsWriterLock }

    /// Begins a transaction; on return it has passed the map gate, until `end`. A read-only
    /// one begun here is not kept for reuse (`refreshHandles` commits it); `beginRead` gives one
    /// that is.
    /// Adopts a map grown by another process (`MDB_MAP_RESIZED`) and begins again.
    /// - Throws: `MapGrownElsewhere` to the writer's thread when the map must be adopted first.
    func begin(readOnly: Bool) throws -> OpaquePointer {
        try passingGate(readOnly: readOnly) {
            var transaction: OpaquePointer?
            let rc = mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &transaction)
            return (rc, LMDBResultCode(rc) == .success ? transaction : nil)
        }
    }

    /// Begins a read transaction, renewing a kept one when there is one: a reset read transaction
    /// keeps its reader slot (`MDB_NOTLS`), and its object what it found in its last snapshot
    /// (see `LMDBReadTransaction.renewed()`). On return it has passed the map gate, until
    /// `endRead`. Renewing always starts on the newest committed snapshot, as a new one would.
    /// - Throws: as `begin(readOnly:)`.
    func beginRead() throws -> LMDBReadTransaction {
        try passingGate(readOnly: true) { startRead() }
    }

    /// Begins a read transaction as `beginRead()` does, unless that would wait: `nil` when a map
    /// growth is asked for or running (the gate would hold it back) or another process grew the
    /// map (adopting it waits for every transaction of the process, the writer's among them). On
    /// return it has passed the map gate, until `endRead`.
    /// - Throws: a `StorageError` for another failure to begin.
    func beginReadWithoutWaiting() throws -> LMDBReadTransaction? {
        guard mapGate.tryEnter(nested: holdsTransaction) else { return nil }
        let (rc, started) = startRead()
        if let started { return started }
        mapGate.leave(write: false)
        guard LMDBResultCode(rc) == .mapResized else {
            throw StorageError.lmdb(rc, "cannot begin a transaction", path: path)
        }
        return nil
    }

    /// Renews a kept read transaction, or begins a new one: the transaction, or LMDB's code.
    ///
    /// LMDB (0.9) begins a read by reading the id of the newest commit and then copying the
    /// database roots from that commit's meta page, without checking the page again. There are
    /// two meta pages, used in turn: when a reader is held up between the two steps while the
    /// writer finishes the next commit and writes the one after it, that write goes to the page
    /// the reader is copying, and the transaction holds a newer snapshot's roots (or a mix of
    /// two) under the older id; the next read then sees an older snapshot than this one
    /// (`ConcurrencyTests` saw it once: "a read saw 2756 moves after one that saw 2758"). A
    /// commit of this process moves `commitSequence` on by one as it starts and by one as it
    /// ends, so a begin during which one commit ended and another began may have raced, and is
    /// begun again. A commit of another process is seen by the meta pages themselves: a begin
    /// after which the newest meta page is two or more commits past the snapshot is begun again
    /// too (`metaPageWasRewritten`).
    private func startRead() -> (Int32, LMDBReadTransaction?) {
        var reader =
            idleReader.take() ?? idleReaders.withLock({ $0.popLast() })
        var renewed = reader != nil
        // Each retry needs two more commits inside a window of a few instructions; far more than
        // a handful means the checks themselves are wrong about this file (a lock file whose
        // newest id lags its meta pages), and a read that never begins would hang the caller.
        var retries = 0
        while true {
            let commitsBefore = commitSequence.load(ordering: .sequentiallyConsistent)
            beforeReadBegins?()
            let begun: LMDBReadTransaction
            if let reader {
                let rc = mdb_txn_renew(reader.txn)
                guard LMDBResultCode(rc) == .success else {
                    mdb_txn_abort(reader.txn)
                    return (rc, nil)
                }
                begun = reader
            } else {
                var transaction: OpaquePointer?
                let rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &transaction)
                guard LMDBResultCode(rc) == .success, let transaction else { return (rc, nil) }
                begun = LMDBReadTransaction(environment: self, txn: transaction, readOnly: true)
                reader = begun
            }
            afterReadBegins?()
            if retries == 100 || !mayHaveRaced(begun.txn, commitsBefore: commitsBefore) {
                if renewed { begun.renewed() }
                return (0, begun)
            }
            mdb_txn_reset(begun.txn)
            renewed = true
            retries += 1
            snapshotRetries.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Whether `txn`, just begun, may hold another snapshot's roots than its id's (see
    /// `startRead`): this process's commit sequence moved on from `commitsBefore` by a commit's
    /// end and the next one's start (three moves from between commits, two from inside one), or
    /// the meta pages show the page it copied from written again.
    private func mayHaveRaced(_ txn: OpaquePointer, commitsBefore: UInt64) -> Bool {
        let moved = commitSequence.load(ordering: .sequentiallyConsistent) &- commitsBefore
        return moved >= 3 || (moved == 2 && commitsBefore & 1 == 1) || metaPageWasRewritten(after: txn)
    }

    /// Whether a commit two or more after the snapshot of `txn` has written its meta page, which
    /// is the page `txn` copied its roots from: commits of any process, read from the meta pages
    /// themselves (`mdb_env_info` reports the larger of their ids). A commit writes its page's id
    /// last, so one caught half-way through writing it is not seen; `commitSequence` covers that
    /// for this process's commits.
    private func metaPageWasRewritten(after txn: OpaquePointer) -> Bool {
        var info = MDB_envinfo()
        guard LMDBResultCode(mdb_env_info(env, &info)) == .success else { return false }
        return info.me_last_txnid >= mdb_txn_id(txn) &+ 2
    }

    /// Passes the map gate and runs `start`, which begins a transaction (its result) or returns
    /// LMDB's code; adopts a map grown by another process and tries again.
    private func passingGate<T>(readOnly: Bool, _ start: () -> (Int32, T?)) throws -> T {
        while true {
            let nested = !readOnly || holdsTransaction
            mapGate.enter(write: !readOnly, nested: nested)
            let (rc, started) = start()
            if let started { return started }
            mapGate.leave(write: !readOnly)
            if !readOnly && rc == EACCES && isReadOnly {
                // LMDB's refusal of a write transaction in an `MDB_RDONLY` environment.
                throw StorageError(
                    .readOnly,
                    "the store was opened read-only (readOnly: true); nothing was written",
                    path: path,
                    underlying: LMDBResultCode(rc)
                )
            }
            guard LMDBResultCode(rc) == .mapResized else {
                throw StorageError.lmdb(rc, "cannot begin a transaction", path: path)
            }
            if nested && readDepth == 0 { throw MapGrownElsewhere() }
            try adoptGrownMap()
        }
    }

    /// Ends a read transaction begun with `beginRead()`, keeping it for reuse, and leaves the map
    /// gate. The transaction object throws `.misuse` from then on, until it is begun again.
    func endRead(_ transaction: LMDBReadTransaction) {
        transaction.invalidate()
        mdb_txn_reset(transaction.txn)
        var kept = idleReader.put(transaction)
        if !kept {
            kept = idleReaders.withLock { idle in
                guard idle.count < Self.idleReaderLimit - 1 else { return false }
                idle.append(transaction)
                return true
            }
        }
        if !kept { mdb_txn_abort(transaction.txn) }
        mapGate.leave(write: false)
    }

    /// Takes the map size another process grew the map to.
    func adoptGrownMap() throws {
        try withExclusiveMap(for: "adopt the map grown by another process") {
            let rc = mdb_env_set_mapsize(env, 0)
            guard LMDBResultCode(rc) == .success else {
                throw StorageError.lmdb(rc, "cannot adopt the grown map", path: path)
            }
        }
        reportMapGrown(reason: "grown by another process")
    }

    /// The event reporters of the backends sharing this environment (one each; a map growth is
    /// rare, so a lock is cheap enough).
    private let reporters = Locked<[StoreEventReporter]>([])

    /// Adds the reporter of a backend that opened the environment.
    func addReporter(_ reporter: StoreEventReporter) {
        reporters.withLock { $0.append(reporter) }
    }

    /// Removes the reporter of a backend that closed (one occurrence: backends may share one).
    func removeReporter(_ reporter: StoreEventReporter) {
        reporters.withLock { reporters in
            if let index = reporters.firstIndex(where: { $0 === reporter }) { reporters.remove(at: index) }
        }
    }

    /// Reports the map's new size (`mapGrown`) to every backend sharing the environment, after
    /// the growth (the map no longer held exclusively).
    private func reportMapGrown(reason: String) {
        let listening = reporters.withLock { $0.filter(\.isListening) }
        guard !listening.isEmpty else { return }
        let size = mapUsage().mapSize
        for reporter in listening {
            reporter.report(StoreEvent(.mapGrown, backend: "LMDB", reason: reason, size: size, location: path))
        }
    }

    /// Runs `body` while no transaction of the process is live.
    /// - Throws: `StorageError.Code.busy` at once when the calling thread has a transaction open
    ///   (the change would wait for it forever), or after `mapResizeTimeoutSeconds` naming the
    ///   transactions that stayed open.
    private func withExclusiveMap(for purpose: String, _ body: () throws -> Void) throws {
        if readDepth > 0 {
            throw StorageError(
                .busy,
                "cannot \(purpose) while this thread has a read transaction open: LMDB changes the map only"
                    + " when no transaction of the process is live, and this thread's read (a forEach or read"
                    + " that the write was started in) ends only after the write; write outside the read, or"
                    + " open the store with a larger initialMapSize",
                path: path
            )
        }
        do {
            try mapGate.exclusively(waitingAtMost: configuration.mapResizeTimeoutSeconds, body)
        } catch let stalled as LMDBMapGate.Stalled {
            throw StorageError(
                .busy,
                "cannot \(purpose): waited \(configuration.mapResizeTimeoutSeconds) s for the transactions of"
                    + " this process that were open when it was asked for to end, and \(stalled.reads) read"
                    + " transaction(s) and \(stalled.writes) write transaction(s) were still open"
                    + " (mapResizeTimeoutSeconds)",
                path: path
            )
        }
    }

    /// The map size and the bytes in use.
    func mapUsage() -> (mapSize: Int, used: Int) {
        mapGate.enter(write: false, nested: holdsTransaction)
        defer { mapGate.leave(write: false) }
        return mapUsageLocked()
    }

    /// `mapUsage()` for a caller that is inside the map gate (has a live transaction).
    func mapUsageLocked() -> (mapSize: Int, used: Int) {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        mdb_env_info(env, &info)
        mdb_env_stat(env, &stat)
        return (info.me_mapsize, (info.me_last_pgno + 1) * Int(stat.ms_psize))
    }

    /// Notes, after a commit and while still inside the map gate, whether the map is more than
    /// half full.
    func noteUsageAfterCommit() {
        // A read-only environment never grows its map: it maps what the writers made.
        guard !isReadOnly else { return }
        let usage = mapUsageLocked()
        if usage.used > usage.mapSize / 2 && usage.mapSize < configuration.maximumMapSize {
            isNearlyFull.store(true, ordering: .relaxed)
        }
    }

    /// Grows the map, while no transaction of the process is live, far enough that a quarter of
    /// it at most is in use, and at least to twice its size; each further `attempt` of one write
    /// (a write larger than the room made) doubles that again, so a large write is replayed a few
    /// times, not once per doubling. A write that knows the size it needs (`toFit`, a batch of
    /// known length) gets it and half as much again in this one step.
    /// - Parameters:
    ///   - size: the map size the caller found too small; a map already larger is left as it is.
    ///   - attempt: how many growths this write has already asked for.
    ///   - needed: the map size the write needs, when it is known.
    /// - Throws: `StorageError.Code.io` when the map is at `configuration.maximumMapSize`;
    ///   `.busy` as `withExclusiveMap` says.
    func growMap(from size: Int, attempt: Int = 0, toFit needed: Int? = nil) throws {
        var grown = false
        try withExclusiveMap(for: "grow the map") {
            let usage = mapUsageLocked()
            guard usage.mapSize <= size else { return }  // already grown
            let maximum = configuration.maximumMapSize
            guard usage.mapSize < maximum else {
                throw StorageError(
                    .io,
                    "the store is full: its map is at the maximum of \(maximum) bytes"
                        + " (LMDBStorageBackend.Configuration.maximumMapSize)",
                    path: path
                )
            }
            var target = usage.mapSize * 2
            while target < usage.used * 4 && target < maximum { target *= 2 }
            if let needed, needed < maximum {
                // Rounded up to a whole MiB, a multiple of every page size.
                let wanted = (needed / 2 * 3 + (1 << 20) - 1) & ~((1 << 20) - 1)
                target = max(target, min(wanted, maximum))
            } else {
                for _ in 0..<min(attempt, 8) where target < maximum { target *= 2 }
            }
            let rc = mdb_env_set_mapsize(env, min(target, maximum))
            guard LMDBResultCode(rc) == .success else { throw StorageError.lmdb(rc, "cannot grow the map", path: path) }
            isNearlyFull.store(false, ordering: .relaxed)
            grown = true
        }
        if grown { reportMapGrown(reason: needed == nil ? "full" : "a large write") }
    }

    /// Grows the map before a transaction when a commit left more than half of it in use,
    /// unless the calling thread has a transaction open (the growth would wait for it).
    func growIfNearlyFull() throws {
        guard isNearlyFull.load(ordering: .relaxed), !holdsTransaction else { return }
        let usage = mapUsage()
        guard usage.used > usage.mapSize / 2 else { return isNearlyFull.store(false, ordering: .relaxed) }
        guard usage.mapSize < configuration.maximumMapSize else { return }
        try growMap(from: usage.mapSize)
    }

    // MARK: Database handles

    /// The handle of a named database, if it is open.
    func handle(_ name: String) -> MDB_dbi? {
        handles.withLock { $0[name] }
    }

    /// Publishes handles opened by a committed transaction, and the generation they complete.
    func publish(_ opened: [String: MDB_dbi], generation: UInt64?) {
        handles.withLock { $0.merge(opened) { _, new in new } }
        if let generation { knownGeneration.withLock { $0 = max($0, generation) } }
    }

    /// Whether handles must be refreshed before a transaction that saw `generation` begins.
    func needsRefresh(for generation: UInt64) -> Bool {
        knownGeneration.withLock { $0 < generation }
    }

    /// Opens a handle for every named database in the file, in a read transaction of its own
    /// that commits (so the handles stay open). Called at open, and before a transaction when
    /// another process created databases.
    func refreshHandles() throws {
        handleLock.lock()
        defer { handleLock.unlock() }
        let transaction = try begin(readOnly: true)
        defer { mapGate.leave(write: false) }
        var committed = false
        defer { if !committed { mdb_txn_abort(transaction) } }
        var main: MDB_dbi = 0
        var rc = mdb_dbi_open(transaction, nil, 0, &main)
        guard LMDBResultCode(rc) == .success else {
            throw StorageError.lmdb(rc, "cannot list the databases", path: path)
        }
        var names: [String] = []
        var cursor: OpaquePointer?
        rc = mdb_cursor_open(transaction, main, &cursor)
        guard LMDBResultCode(rc) == .success, let cursor else {
            throw StorageError.lmdb(rc, "cannot list the databases", path: path)
        }
        var key = MDB_val()
        var data = MDB_val()
        rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
        while LMDBResultCode(rc) == .success {
            names.append(
                String(decoding: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size), as: UTF8.self)
            )
            rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        mdb_cursor_close(cursor)
        guard LMDBResultCode(rc) == .notFound else {
            throw StorageError.lmdb(rc, "cannot list the databases", path: path)
        }
        // LMDB would refuse the handle past the limit with MDB_DBS_FULL, which names no setting.
        guard names.count <= configuration.maximumDatabases else {
            throw StorageError(
                .limitExceeded,
                "the store has \(names.count) named databases (one per collection, one per index, one for"
                    + " the catalog), more than maximumDatabases (\(configuration.maximumDatabases)): open it with"
                    + " LMDBStorageBackend.Configuration(maximumDatabases: \(names.count)) or more",
                path: path
            )
        }
        var opened: [String: MDB_dbi] = [:]
        for name in names where name != Self.metadataName && handle(name) == nil {
            var dbi: MDB_dbi = 0
            rc = mdb_dbi_open(transaction, name, 0, &dbi)
            guard LMDBResultCode(rc) == .success else {
                throw StorageError.lmdb(rc, "cannot open database '\(name)'", path: path)
            }
            opened[name] = dbi
        }
        let generation = try Self.readGeneration(transaction, metadata, path: path)
        committed = true
        rc = mdb_txn_commit(transaction)
        guard LMDBResultCode(rc) == .success else {
            throw StorageError.lmdb(rc, "cannot open the databases", path: path)
        }
        publish(opened, generation: generation)
    }

    /// The catalog generation a transaction sees: it grows whenever a database is created.
    static func readGeneration(_ transaction: OpaquePointer, _ metadata: MDB_dbi, path: String) throws -> UInt64 {
        var key = MDB_val()
        var data = MDB_val()
        let rc = generationKey.withUnsafeBytes { bytes in
            key = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            return mdb_get(transaction, metadata, &key, &data)
        }
        if LMDBResultCode(rc) == .notFound { return 0 }
        guard LMDBResultCode(rc) == .success else { throw StorageError.lmdb(rc, "cannot read the catalog", path: path) }
        guard data.mv_size == 8 else { throw StorageError(.corrupt, "the catalog generation is damaged", path: path) }
        var value: UInt64 = 0
        for byte in UnsafeRawBufferPointer(start: data.mv_data, count: 8) { value = value << 8 | UInt64(byte) }
        return value
    }
}
