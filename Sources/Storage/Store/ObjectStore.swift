import Foundation
import Synchronization

/// The typed facade over any ``StorageBackend``: stores Swift values with no per-type code.
///
/// ```swift
/// let store = try ObjectStore(backend: .sqlite(path: "app.sqlite"))
/// try await store.save(person)
/// let adults = try await store.fetchAll(Person.self, where: Column("age") >= 18, orderBy: [.ascending("name")])
/// ```
///
/// Every call has an `async` overload of the same name (picked inside `async` code) that runs
/// the blocking work on threads of the store's own, and a synchronous one that blocks the
/// calling thread: a read for as long as it takes, a write also while another write of the
/// process (or, up to the backend's busy timeout, of another process) is running.
///
/// Reflection (through `Codable`, with `Mirror` where Codable cannot see) derives each type's
/// columns the first time a value of it is saved, and caches the layout. Each call runs in its own
/// transaction; `transaction(_:)` groups calls. An ``ObjectStore`` is safe to use from many threads
/// and tasks at once. Calls made on the thread running a `transaction` closure join that
/// transaction instead of waiting for it.
public final class ObjectStore: Sendable {
    /// The engine behind this store. Not public: calls made on it directly would skip the
    /// validation of names, the commit lock, change observation and the settings cache.
    package let backend: any StorageBackend
    /// What the store knows of the types and collections it has seen (plans and layouts).
    let catalog = ModelCatalog()
    private let activeWrite = Locked<ActiveWrite?>(nil)
    /// Whether a write transaction of this store is running on any thread (`activeWrite` is
    /// set): read without the lock by `currentWrite()`. The thread running a write set it
    /// itself before, so it never reads 0 there; any other thread may read either value and
    /// then takes the lock.
    private let writeRunning = Atomic<Int>(0)
    /// Orders the publication of committed changes (change streams deliver in commit order).
    private let commits = CommitSequencer()
    let changeHub = ChangeHub()
    let settingsCenter = SettingsCenter()
    /// The process that opened the store: a child made by `fork()` gets `.misuse`, checked before
    /// any lock is taken (a copy of a lock held at the fork would never be released).
    private let owner = OwningProcess()
    /// Counts the calls running, for `close()`.
    let lifecycle = StoreLifecycle()
    /// The threads the `async` calls run on.
    let executor = StoreExecutor()

    /// Opens a store over `backend`.
    ///
    /// ```swift
    /// let store = try ObjectStore(backend: .sqlite(path: "app.sqlite"))
    /// ```
    /// - Parameter backend: the engine, as `.sqlite(path:)` or `.lmdb(path:)` gives it.
    public init(backend: some StorageBackend) {
        self.backend = backend
        readsWithoutWaiting = backend.readsWithoutWaiting
        isReadOnly = backend.isReadOnly
        commitCounter = backend as? any ExternalCommitCounter
        commitSource = backend as? any ExternalCommitSource
    }

    /// The backend as a source of other processes' commits, cast once; it is asked to report them
    /// only when the store is first observed (`observeCommitsElsewhere()`).
    private let commitSource: (any ExternalCommitSource)?
    /// Whether `commitSource` reports to this store: read without the lock on every settings read
    /// and change subscription once set. Set, under `commitSourceStart`, only after the source's
    /// `observeExternalCommits` returned.
    private let observingElsewhere = Atomic<Bool>(false)
    /// Serializes the first observers, so that concurrent ones start one report and each returns
    /// only once it runs.
    private let commitSourceStart = Locked(false)

    /// Starts the backend's reports of commits made elsewhere (``ExternalCommitSource``), once, the
    /// first time the store is observed: a change stream, a settings value about to be cached, a
    /// settings subscription. A store that is never observed never pays for them (a PostgreSQL
    /// store opens no `LISTEN` connection). Returns once the reports run, so that a commit made
    /// elsewhere after it returns is reported; concurrent first callers wait for one start.
    /// Does nothing for other backends, after `close()`, or in a child process made by `fork()`.
    func observeCommitsElsewhere() {
        guard let commitSource, !observingElsewhere.load(ordering: .acquiring) else { return }
        guard (try? owner.check(path: nil)) != nil, (try? lifecycle.enter()) != nil else { return }
        defer { lifecycle.leave() }
        commitSourceStart.withLock { started in
            guard !started else { return }
            commitSource.observeExternalCommits { [weak self] changes in self?.didCommitElsewhere(changes) }
            started = true
            observingElsewhere.store(true, ordering: .releasing)
        }
    }

    /// Whether this store has asked its backend for the commits made elsewhere (see
    /// `observeCommitsElsewhere()`): for tests.
    package var isObservingCommitsElsewhere: Bool { observingElsewhere.load(ordering: .acquiring) }

    /// Whether the backend tells this store of other processes' commits (``ExternalCommitSource``):
    /// they then reach change streams and settings a moment after they commit, not at once.
    package var isNotifiedOfCommitsElsewhere: Bool { backend is any ExternalCommitSource }

    /// `backend.readsWithoutWaiting`, read once.
    private let readsWithoutWaiting: Bool

    /// Whether the store was opened read-only (`readOnly: true` in its backend's configuration):
    /// it reads, and every write (saves, deletes, drops, transactions, imports, settings
    /// assignments, a copy into it) throws ``StorageError`` with code `.readOnly`, having
    /// written nothing.
    public let isReadOnly: Bool

    /// Throws `.readOnly` for a store opened read-only: called before any write begins.
    /// - Throws: ``StorageError`` with code `.readOnly`.
    func requireWritable() throws {
        guard isReadOnly else { return }
        throw StorageError(
            .readOnly,
            "the store was opened read-only (readOnly: true in its configuration); nothing was written"
        )
    }

    /// The backend as a commit counter, cast once rather than on every settings read.
    private let commitCounter: (any ExternalCommitCounter)?

    /// Whether ``Settings`` values read may be kept in the cache: not for a store opened
    /// read-only whose backend counts no commits (a PostgreSQL store read-only registers no
    /// change listener, which would write): every value it holds was committed elsewhere, and
    /// nothing would tell it when that changes.
    var cachesSettings: Bool { !isReadOnly || commitCounter != nil }

    /// The backend's count of commits by any process (``ExternalCommitCounter``), read as a call
    /// of the store (never after `close()`); `nil` when the backend keeps none.
    func externalCommitCount() throws -> UInt64? {
        guard let commitCounter else { return nil }
        try owner.check(path: nil)
        try lifecycle.enter()
        defer { lifecycle.leave() }
        return try commitCounter.externalCommitCount()
    }

    // MARK: Type knowledge

    /// The name of the collection values of `type` are stored in.
    /// - Parameter type: the model type.
    /// - Returns: ``StorableModel/collectionName`` or the type's name.
    /// - Throws: ``StorageError`` with `.invalidIdentifier` when that name is not a valid collection
    ///   name.
    public func collectionName<T>(for type: T.Type) throws -> String {
        try catalog.info(for: type).collection
    }

    // MARK: Transactions

    /// Runs `body` in a read session: the current thread's write transaction if it has one,
    /// otherwise a read transaction of its own.
    /// - Parameters:
    ///   - singleQuery: whether `body` reads records with at most one query (after any number of
    ///     schema look-ups): the backend may then run it without a transaction of its own
    ///     (`StorageBackend.readSingleQuery`).
    ///   - body: the reads.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, ``StorageError`` with `.closed` after `close()`, or the
    ///   backend's failure.
    func withReadSession<R>(singleQuery: Bool = false, _ body: (Session) throws -> R) throws -> R {
        try withReader(singleQuery: singleQuery) { reader, session in
            try body(session ?? Session(catalog: catalog, reader: reader, writer: nil))
        }
    }

    /// `withReadSession`, without making a ``Session`` for a read of its own: `body` gets the
    /// backend's read transaction, and the current thread's write session when the read joins
    /// it (whose reads must go through the session, which knows the schemas it prepared). A key
    /// look-up needs no more, and a session was an allocation and a free a look-up.
    func withReader<R>(
        singleQuery: Bool = false,
        _ body: (any BackendReadTransaction, Session?) throws -> R
    ) throws -> R {
        try owner.check(path: nil)
        try lifecycle.enter()
        defer { lifecycle.leave() }
        if let active = currentWrite() { return try body(active.session.reader, active.session) }
        // The closure is written out at each call: one kept in a local was allocated on the heap
        // at every read (its context escapes into the local).
        if readsWithoutWaiting && ReadWithoutWaiting.isAsked {
            // An `async` read tried on the caller's task (`performRead`): anything that might
            // wait goes to the store's threads instead.
            guard singleQuery,
                let result = try backend.readSingleQueryWithoutWaiting({ transaction in
                    let depth = CommitSequencer.enterRead()
                    defer { depth.pointee -= 1 }
                    return try body(transaction, nil)
                })
            else { throw ReadWithoutWaiting.WouldWait() }
            return result
        }
        if singleQuery {
            return try backend.readSingleQuery { transaction in
                let depth = CommitSequencer.enterRead()
                defer { depth.pointee -= 1 }
                return try body(transaction, nil)
            }
        }
        return try backend.read { transaction in
            let depth = CommitSequencer.enterRead()
            defer { depth.pointee -= 1 }
            return try body(transaction, nil)
        }
    }

    /// Runs `body` in a write session, joining the current thread's write transaction if any.
    func withWriteSession<R>(_ body: (Session) throws -> R) throws -> R {
        try owner.check(path: nil)
        try lifecycle.enter()
        defer { lifecycle.leave() }
        try requireWritable()
        if let active = currentWrite() { return try body(active.session) }
        // The session and the ticket of the attempt that committed (a backend may run `body`
        // again; the ticket of an attempt run again is void).
        var committed: Session?
        var ticket: UInt64?
        let result: R
        do {
            result = try backend.write { transaction in
                if let ticket { commits.void(ticket) }
                ticket = commits.take()
                let session = Session(catalog: catalog, reader: transaction, writer: transaction)
                committed = session
                let active = ActiveWrite(thread: pthread_self(), session: session)
                writeRunning.wrappingAdd(1, ordering: .relaxed)
                activeWrite.withLock { $0 = active }
                defer {
                    activeWrite.withLock { $0 = nil }
                    writeRunning.wrappingSubtract(1, ordering: .relaxed)
                }
                let result = try body(session)
                try session.flushSearchStatistics()
                return result
            }
        } catch {
            if let ticket { commits.resolve(ticket, nil) { didCommit($0) } }
            throw error
        }
        if let ticket { commits.resolve(ticket, committed?.changeLogs) { didCommit($0) } }
        return result
    }

    /// Tells the settings and the change streams what a transaction committed.
    private func didCommit(_ changes: [String: ChangeLog]) {
        if let settings = changes[SettingRecord.collection] { settingsCenter.didCommit(settings, in: self) }
        changeHub.publish(changes)
    }

    /// Tells the settings and the change streams what another process or machine committed (see
    /// ``ExternalCommitSource``), in order with this store's own commits.
    private func didCommitElsewhere(_ changes: [CollectionChange]) {
        var logs: [String: ChangeLog] = [:]
        for change in changes {
            var log = ChangeLog(collection: change.collection)
            if !change.upserted.isEmpty { log.record(.upsert(change.upserted)) }
            if !change.deleted.isEmpty { log.record(.delete(change.deleted)) }
            logs[Identifier.folded(change.collection)] = log
        }
        guard !logs.isEmpty else { return }
        // A ticket of its own, so that it is published in order with this store's commits. The
        // reporting thread does not wait for the delivery: nothing it does next depends on it, and
        // a long write of this store in flight would otherwise hold back every later report.
        let ticket = commits.take()
        commits.resolve(ticket, logs, waitsForDelivery: false) { didCommit($0) }
    }

    /// Whether the current thread is inside a write transaction of this store.
    var isWritingOnCurrentThread: Bool { currentWrite() != nil }

    private func currentWrite() -> ActiveWrite? {
        // No write anywhere, so none on this thread: the lock is left alone.
        guard writeRunning.load(ordering: .relaxed) != 0 else { return nil }
        let me = pthread_self()
        return activeWrite.withLock { active in
            guard let active, pthread_equal(active.thread, me) != 0 else { return nil }
            return active
        }
    }

    /// Runs `body` in one write transaction: everything it does is committed together when it
    /// returns, or not at all when it throws (the error is rethrown unchanged).
    ///
    /// ```swift
    /// try store.transaction { tx in
    ///     try tx.save(a)
    ///     try tx.delete(Person.self, id: 7)
    /// }
    /// ```
    /// Reads through `tx` see the transaction's own writes. Calls on `self` from inside `body`
    /// (on the same thread) join the transaction. The handle must not escape `body`.
    /// - Parameter body: the transaction's work; synchronous, so nothing awaits while it runs.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or a ``StorageError`` when the store fails.
    public func transaction<R>(_ body: (StoreTransaction) throws -> R) throws -> R {
        try withWriteSession { session in
            let transaction = StoreTransaction(session: session)
            transaction.changeHub = changeHub
            defer { transaction.close() }
            return try body(transaction)
        }
    }

    /// Runs `body` in one read-only transaction: every read through `tx` sees the same committed
    /// snapshot, and none of them waits for the writer (SQLite in memory excepted, whose one
    /// connection is the writer's).
    ///
    /// ```swift
    /// let (count, newest) = try store.read { tx in
    ///     (try tx.count(Order.self), try tx.fetchAll(Order.self, orderBy: [.descending("id")], limit: 10))
    /// }
    /// ```
    /// Called on a thread running a `transaction` closure, it reads that transaction instead.
    /// The handle must not escape `body`.
    /// - Parameter body: the reads.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or a ``StorageError`` when the store fails.
    public func read<R>(_ body: (StoreReadTransaction) throws -> R) throws -> R {
        try withReadSession { session in
            let transaction = StoreReadTransaction(session: session)
            defer { transaction.close() }
            return try body(transaction)
        }
    }

    /// Runs `work`, a one-query read, on the calling task when the backend can run it without
    /// waiting (`StorageBackend.readsWithoutWaiting`), otherwise as `perform` does. A caller
    /// cancelled before the work begins gets `CancellationError` and the work is skipped.
    func performRead<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        if readsWithoutWaiting {
            try Task.checkCancellation()
            if let result = try ReadWithoutWaiting.attempt(work) { return result }
        }
        return try await perform(work)
    }

    /// Runs `work` on the store's threads, off Swift's cooperative pool, and returns its result.
    /// A caller cancelled before the work begins gets `CancellationError` and the work is
    /// skipped; work that has begun runs to its end.
    func perform<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try Task.checkCancellation()
        let job = StoreJob(work)
        let executor = executor
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in job.start(continuation, on: executor) }
        } onCancel: {
            job.cancel()
        }
    }
}

/// The write transaction open on one thread. `@unchecked Sendable`: `session` is only used by the
/// thread that `thread` names, while the transaction closure it belongs to runs; other threads
/// only compare `thread` with their own.
private final class ActiveWrite: @unchecked Sendable {
    let thread: pthread_t
    let session: Session

    init(thread: pthread_t, session: Session) {
        self.thread = thread
        self.session = session
    }
}

/// The mark of a thread running an `async` read on its caller's task (`performRead`): its read
/// session asks the backend for a read that does not wait, and gives up when there is none.
enum ReadWithoutWaiting {
    /// Thrown out of a read session that would have waited; `attempt` catches it.
    struct WouldWait: Error {}

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Whether the current thread is inside `attempt`.
    static var isAsked: Bool { pthread_getspecific(key) != nil }

    /// Runs `work` with the mark set.
    /// - Returns: what `work` returns, or `nil` when its read would have waited.
    /// - Throws: what `work` throws otherwise.
    static func attempt<R>(_ work: () throws -> R) throws -> R? {
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(key, outer) }
        do {
            return try work()
        } catch is WouldWait {
            return nil
        }
    }
}
