internal import CLMDB
public import Storage
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `StorageBackend` over an LMDB environment: memory-mapped B+trees, readers that never wait,
/// one writer at a time. Pick it for the fastest key look-ups and bulk loads.
///
/// ```swift
/// let store = try ObjectStore(backend: .lmdb(path: "app.lmdb"))
/// ```
///
/// Each collection is a named database keyed by primary key (in an order equal to SQLite's order
/// of the values); each index is a named database of its own; a metadata database holds the
/// schemas, the auto-increment counters and the index definitions. Queries use the primary key or
/// an index where the predicate allows, and `PredicateEvaluator` for the rest.
///
/// The map starts at `Configuration.initialMapSize` and grows (to at least twice its size, and
/// far enough that at most a quarter of it is in use) while no transaction of the process is open:
/// before a transaction, when a commit left more than half of it in use, and when a write
/// transaction hits `MDB_MAP_FULL`, which is aborted and its closure run again. A batch of known
/// size (`save(contentsOf:)` of a collection) is measured on its first 256 records: when it will
/// not fit, the transaction ends there and the map grows to hold the whole batch in one step, so
/// a bulk load redoes at most those records, whatever its size (docs/ARCHITECTURE.md). Keep write
/// closures free of side effects outside the transaction, since such a closure may run more than
/// once. A growth waits only for the transactions already open: new ones wait for it.
public final class LMDBStorageBackend: StorageBackend, StoreEventSource {
    /// The store file.
    public let path: String
    /// The configuration the environment was opened with (the first store of the process on the
    /// file chose it), with this store's own `readOnly`.
    public var configuration: Configuration {
        var configuration = environment.configuration
        configuration.readOnly = isReadOnly
        configuration.events = eventReporter
        return configuration
    }

    /// Whether this store was opened read-only (`Configuration.readOnly`): it refuses every
    /// write with `StorageError.Code.readOnly`, even on an environment the process shares with
    /// a store that writes.
    public let isReadOnly: Bool

    /// Where the store reports its map's growth (`mapGrown`): `configuration.events`, or a
    /// reporter of its own.
    public let eventReporter: StoreEventReporter

    let environment: LMDBEnvironment
    /// Set by `close()`, after which the environment may be closed and nothing may use it.
    private let isClosed = Atomic<Bool>(false)

    /// Opens (creating if needed) the store file at `path`; with `configuration.readOnly`, opens
    /// an existing one to read it. Opening a file the process already has open shares its
    /// environment.
    /// - Parameters:
    ///   - path: the store file's path; LMDB keeps its lock file at `path` + `-lock`.
    ///   - configuration: how the environment is opened and used.
    /// - Throws: `StorageError` with code `.cannotOpen` when the file cannot be created or
    ///   opened (read-only: when it does not exist, or has no catalog), `.corrupt` when it is
    ///   not an LMDB store.
    public init(path: String, configuration: Configuration = .init()) throws {
        self.path = path
        self.isReadOnly = configuration.readOnly
        self.environment = try LMDBEnvironment.open(path: path, configuration: configuration)
        eventReporter = configuration.events ?? StoreEventReporter()
        environment.addReporter(eventReporter)
    }

    /// Closes the store: when no other backend of the process has the same file open, its
    /// environment is closed now, freeing the map, the file descriptors and the reader slots.
    /// Later transactions throw `StorageError` with code `.closed`; closing twice does nothing.
    /// - Throws: nothing today; declared for the protocol.
    public func close() throws {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        environment.removeReporter(eventReporter)
        environment.release()
    }

    deinit {
        if !isClosed.load(ordering: .acquiring) {
            environment.removeReporter(eventReporter)
            environment.release()
        }
    }

    private func checkOpen() throws {
        try environment.owner.check(path: path)
        guard !isClosed.load(ordering: .acquiring) else {
            throw StorageError(.closed, "the store was closed", path: path)
        }
    }

    /// Runs `body` in a read transaction over one committed snapshot. Readers never wait for
    /// the writer.
    /// - Parameter body: the reads; the transaction is valid only during the call.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or a `StorageError` for an engine failure.
    public func read<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result {
        try checkOpen()
        // Room made here serves writes started inside this read (a forEach that saves), which
        // cannot grow the map themselves. A growth that fails here is left to the next write.
        try? environment.growIfNearlyFull()
        // A kept transaction object, renewed on the newest snapshot (`LMDBEnvironment.beginRead`).
        let transaction = try beginCurrentRead()
        environment.readDepth += 1
        defer {
            environment.readDepth -= 1
            environment.endRead(transaction)
        }
        return try body(transaction)
    }

    /// `true`: a read transaction waits for no writer (MVCC), only, at the map gate, for a
    /// growth of the map, which `readSingleQueryWithoutWaiting` declines instead.
    public var readsWithoutWaiting: Bool { true }

    /// Runs `body` in a read transaction as `read` does, unless beginning it would wait: `nil`
    /// while the map is being grown (here or by another process) or when another process created
    /// databases whose handles must be opened first. Unlike `read`, it never grows the map (a
    /// growth waits for every live transaction, a long write's among them): a one-query read
    /// starts no write.
    /// - Parameter body: the reads; the transaction is valid only during the call.
    /// - Returns: what `body` returns, or `nil` when the read would have waited.
    /// - Throws: what `body` throws, or a `StorageError` for an engine failure.
    public func readSingleQueryWithoutWaiting<Result>(
        _ body: (any BackendReadTransaction) throws -> Result
    ) throws -> Result? {
        try checkOpen()
        guard let transaction = try beginCurrentRead(waiting: false) else { return nil }
        environment.readDepth += 1
        defer {
            environment.readDepth -= 1
            environment.endRead(transaction)
        }
        return try body(transaction)
    }

    /// Begins a read transaction whose handles are complete for the catalog it sees: when another
    /// process created databases since this process last looked, their handles are opened first.
    /// A renewed transaction that is still on the snapshot it checked last time skips the check.
    private func beginCurrentRead() throws -> LMDBReadTransaction {
        guard let transaction = try beginCurrentRead(waiting: true) else {
            throw StorageError(.misuse, "a read that may wait did not begin", path: path)
        }
        return transaction
    }

    /// `beginCurrentRead()`, or with `waiting` false `nil` where it would wait: at the map gate
    /// (`LMDBEnvironment.beginReadWithoutWaiting`) or to open the handles of databases another
    /// process created.
    private func beginCurrentRead(waiting: Bool) throws -> LMDBReadTransaction? {
        while true {
            guard let transaction = try waiting ? environment.beginRead() : environment.beginReadWithoutWaiting()
            else { return nil }
            if transaction.isCheckedSnapshot { return transaction }
            let snapshot = transaction.snapshot ?? -1
            if environment.isCheckedSnapshot(snapshot) {
                transaction.isCheckedSnapshot = true
                return transaction
            }
            let generation: UInt64
            do {
                generation = try LMDBEnvironment.readGeneration(transaction.txn, environment.metadata, path: path)
            } catch {
                environment.endRead(transaction)
                throw error
            }
            guard environment.needsRefresh(for: generation) else {
                environment.markCheckedSnapshot(snapshot)
                transaction.isCheckedSnapshot = true
                return transaction
            }
            environment.endRead(transaction)
            guard waiting else { return nil }
            try environment.refreshHandles()
        }
    }

    /// Begins a write transaction whose handles are complete for the catalog it sees (see
    /// `beginCurrentRead`).
    private func beginCurrentWrite() throws -> OpaquePointer {
        while true {
            let txn = try environment.begin(readOnly: false)
            let generation: UInt64
            do {
                generation = try LMDBEnvironment.readGeneration(txn, environment.metadata, path: path)
            } catch {
                endWrite(txn)
                throw error
            }
            guard environment.needsRefresh(for: generation) else { return txn }
            endWrite(txn)
            try environment.refreshHandles()
        }
    }

    /// Ends a write transaction that was begun but not used, and releases the map lock.
    private func endWrite(_ txn: OpaquePointer) {
        mdb_txn_abort(txn)
        environment.mapGate.leave(write: true)
    }

    /// Runs `body` in a write transaction that commits when it returns and aborts when it throws.
    /// Write transactions of the process run one at a time.
    ///
    /// When the map fills up, or a batch of known length (`save(contentsOf:)`) will not fit
    /// after its first 256 records, the transaction is aborted, the map grown and `body` run
    /// again (even when `body` caught the error): `body` may run more than once.
    /// - Parameter body: the reads and writes; the transaction is valid only during the call.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws (unchanged), or a `StorageError` for an engine failure,
    ///   including a failed commit; `.misuse` for a write started inside another on the same
    ///   thread; `.busy` for a write started inside a read on the same thread that needs a larger
    ///   map than the room left; `.readOnly` (before anything runs) for a store opened read-only.
    public func write<Result>(_ body: (any BackendWriteTransaction) throws -> Result) throws -> Result {
        try checkOpen()
        if isReadOnly {
            throw StorageError(
                .readOnly,
                "the store was opened read-only (readOnly: true); nothing was written",
                path: path
            )
        }
        if environment.holdsWriterLock {
            throw StorageError(
                .misuse,
                "a write transaction was started inside another one on the same thread; LMDB has one writer",
                path: path
            )
        }
        var growth: (from: Int, attempt: Int, needed: Int?)?
        var adopt = false
        /// The closure's runs so far, and why the last one did not commit (for `retry` events).
        var runs = 0
        var retryReason: String?
        while true {
            // The map is changed here, holding no lock: a growth waits for every live transaction,
            // and a read (a forEach) may be waiting for the writer lock to write inside it.
            if adopt {
                try environment.adoptGrownMap()
                adopt = false
            } else if let growth {
                try environment.growMap(from: growth.from, attempt: growth.attempt, toFit: growth.needed)
            } else {
                try environment.growIfNearlyFull()
            }
            // A growth asked for now is waited for before the writer lock is taken, so later
            // writers do not hold it up; a write inside a read goes on, as the growth waits for it.
            if environment.readDepth == 0 { environment.mapGate.waitForGrowths() }
            runs += 1
            if let retryReason {
                eventReporter.report(
                    StoreEvent(.retry, backend: "LMDB", attempt: runs, reason: retryReason, location: path)
                )
            }
            environment.writerLock.lock()
            environment.holdsWriterLock = true
            let step: WriteStep<Result>
            do {
                step = try attempt(body)
            } catch is LMDBEnvironment.MapGrownElsewhere {
                step = .mapGrownElsewhere
            } catch {
                environment.holdsWriterLock = false
                environment.writerLock.unlock()
                throw error
            }
            environment.holdsWriterLock = false
            environment.writerLock.unlock()
            switch step {
            case .committed(let outcome):
                return outcome
            case .mapFull(let size, let needed):
                growth = (size, (growth?.attempt ?? -1) + 1, needed)
                retryReason = "map full"
            case .mapGrownElsewhere:
                adopt = true
                retryReason = "map grown by another process"
            }
        }
    }

    /// How one attempt of a write ended.
    private enum WriteStep<Result> {
        case committed(Result)
        /// The map of this size filled up, or would have (the batch expected does not fit); the
        /// transaction was aborted. `needed`: the size the batch needs, when it is known.
        case mapFull(Int, needed: Int?)
        /// Another process grew the map; nothing was begun.
        case mapGrownElsewhere
    }

    /// Runs `body` in one write transaction, holding the writer lock.
    private func attempt<Result>(_ body: (any BackendWriteTransaction) throws -> Result) throws -> WriteStep<Result> {
        let txn = try beginCurrentWrite()
        let usage = environment.mapUsageLocked()
        let mapSize = usage.mapSize
        let transaction = LMDBWriteTransaction(environment: environment, txn: txn)
        transaction.noteMapAtBegin(size: usage.mapSize, used: usage.used)
        let outcome: Result
        do {
            outcome = try body(transaction)
            if !transaction.fullTextWriters.isEmpty { try transaction.flushFullText() }
            if transaction.mapIsFull {
                throw StorageError(.io, "the map filled up", path: path)
            }
            try transaction.flushCounters()
        } catch {
            transaction.invalidate()
            mdb_txn_abort(txn)
            transaction.releaseHandleLock()
            environment.mapGate.leave(write: true)
            if transaction.mapIsFull { return .mapFull(mapSize, needed: transaction.mapSizeAfterFilling()) }
            throw error
        }
        transaction.invalidate()
        // A failed commit has freed the transaction: it is never aborted after that. The commit
        // sequence brackets the commit for reads beginning meanwhile (`LMDBEnvironment.startRead`).
        environment.commitSequence.wrappingAdd(1, ordering: .sequentiallyConsistent)
        let rc = mdb_txn_commit(txn)
        environment.commitSequence.wrappingAdd(1, ordering: .sequentiallyConsistent)
        if LMDBResultCode(rc) == .success {
            transaction.noteCommitted()
            environment.publish(transaction.openedHandles, generation: transaction.newGeneration)
            environment.noteUsageAfterCommit()
        }
        transaction.releaseHandleLock()
        environment.mapGate.leave(write: true)
        if LMDBResultCode(rc) == .mapFull { return .mapFull(mapSize, needed: transaction.mapSizeAfterFilling()) }
        guard LMDBResultCode(rc) == .success else {
            throw StorageError.lmdb(rc, "cannot commit a transaction", path: path)
        }
        return .committed(outcome)
    }
}

extension LMDBStorageBackend: ExternalCommitCounter {
    /// The id of the newest committed transaction (`mdb_txn_id` of a fresh read snapshot), which
    /// every commit of any process sharing the file advances. A read transaction rather than
    /// `mdb_env_info`, whose read of the meta pages could race with a growth of the map: the
    /// transaction passes the map gate like any other read, and never waits for the writer.
    /// - Returns: the last committed transaction id.
    /// - Throws: `StorageError` when no read transaction can begin, or `.closed`.
    public func externalCommitCount() throws -> UInt64 {
        try checkOpen()
        let transaction = try environment.beginRead()
        defer { environment.endRead(transaction) }
        return UInt64(mdb_txn_id(transaction.txn))
    }
}
