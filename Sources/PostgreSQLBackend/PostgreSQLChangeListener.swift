import Foundation
import Storage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The thread that waits on `LISTEN` for the store's change notifications and reports the
/// changes other backends committed (see `PostgreSQLChangeFeed`). It reconnects after a lost
/// connection and then reads everything committed meanwhile, so no change is skipped.
final class PostgreSQLChangeListener: Sendable {
    private let stopped = Locked(false)
    /// Signalled when the thread's work ends; `join()` waits for it.
    private let finished = DispatchSemaphore(value: 0)
    /// The thread's name, unique to this listener: `join()` called on the thread itself (from
    /// its handler) returns at once instead of waiting for itself.
    private let threadName = "storage-postgresql-changes-" + UUID().uuidString
    private let open: @Sendable () throws -> PostgreSQLConnection
    private let catalog: PostgreSQLCatalog
    private let channel: String
    private let origin: String
    private let pruneLockKey: Int64
    private let observeLockKey: Int64
    private let retention: Duration
    private let handler: @Sendable ([CollectionChange]) -> Void

    init(
        open: @escaping @Sendable () throws -> PostgreSQLConnection,
        catalog: PostgreSQLCatalog,
        channel: String,
        origin: String,
        pruneLockKey: Int64,
        observeLockKey: Int64,
        retention: Duration,
        handler: @escaping @Sendable ([CollectionChange]) -> Void
    ) {
        self.open = open
        self.catalog = catalog
        self.channel = channel
        self.origin = origin
        self.pruneLockKey = pruneLockKey
        self.observeLockKey = observeLockKey
        self.retention = retention
        self.handler = handler
    }

    /// Starts listening on a thread of its own. Returns once `LISTEN` is in effect (or the
    /// first attempt failed), so a commit made after this returns is reported.
    func start() {
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            defer { finished.signal() }
            run(ready: ready)
        }
        thread.name = threadName
        thread.start()
        ready.wait()
    }

    /// Stops the thread within half a second (or once the connection attempt it is making
    /// ends); `join()` waits for that.
    func stop() {
        stopped.withLock { $0 = true }
    }

    /// Waits for the thread (started, and told to `stop()`) to end: its connection is then
    /// closed and its handler is not called again. Returns at once when called on the thread
    /// itself.
    func join() {
        guard Thread.current.name != threadName else { return }
        finished.wait()
        finished.signal()  // a second join returns too
    }

    private var isStopped: Bool { stopped.withLock { $0 } }

    private func run(ready: DispatchSemaphore) {
        var lastSeen: Int64?
        var signalled = false
        defer { if !signalled { ready.signal() } }
        let interval = PostgreSQLChangeFeed.reportInterval(retention: retention)
        let wait = Int32(min(500, PostgreSQLChangeFeed.milliseconds(interval)))
        let clock = ContinuousClock()
        while !isStopped {
            do {
                let connection = try open()
                // Closed when this attempt ends (stopped, or the connection lost), before a
                // reconnection or `join()` returns.
                defer { connection.close() }
                try connection.execute("LISTEN " + PostgreSQLIdentifier.quote(channel))
                // Held while this connection lives: no pruning takes this listener for gone. Tried,
                // not waited for: after a lost connection the server may keep the old session (and
                // its lock) a while; this connection takes it at a later report.
                var holdsLock = try takeLock(on: connection)
                // New, or back after a lost connection from where it was (its row may have been
                // pruned meanwhile): counted either way, so that writers record.
                lastSeen = try PostgreSQLChangeFeed.register(
                    origin: origin,
                    lastSeen: lastSeen,
                    on: connection,
                    catalog: catalog,
                    pruneLockKey: pruneLockKey,
                    observeLockKey: observeLockKey
                )
                if !signalled {
                    signalled = true
                    ready.signal()
                }
                var pending = true  // after a reconnection, read what was committed meanwhile
                // Notifications of this backend's own commits only: their rows are read (and
                // skipped) with the next other commit, or before the next report, so that the
                // position this listener reports keeps up and the pruning goes on.
                var ownUnread = false
                var reported = clock.now
                while !isStopped {
                    if pending {
                        lastSeen = try deliver(after: lastSeen ?? 0, on: connection)
                        ownUnread = false
                    }
                    if clock.now - reported >= interval {
                        if ownUnread { lastSeen = try deliver(after: lastSeen ?? 0, on: connection) }
                        ownUnread = false
                        if !holdsLock { holdsLock = try takeLock(on: connection) }
                        // Says how far it has read, and deletes the rows every listener has read.
                        try PostgreSQLChangeFeed.report(
                            origin: origin,
                            lastSeen: lastSeen ?? 0,
                            on: connection,
                            catalog: catalog
                        )
                        try PostgreSQLChangeFeed.prune(
                            on: connection,
                            catalog: catalog,
                            lockKey: pruneLockKey,
                            observeLockKey: observeLockKey,
                            retention: retention
                        )
                        reported = clock.now
                    }
                    let arrived = try connection.waitForNotifications(timeout: wait, ignoring: origin)
                    pending = arrived.others
                    if arrived.any && !arrived.others { ownUnread = true }
                }
                // Stopped: no longer holds back the pruning, nor counts as listening.
                try? PostgreSQLChangeFeed.unregister(
                    origin: origin,
                    on: connection,
                    catalog: catalog,
                    observeLockKey: observeLockKey
                )
            } catch {
                if !signalled {
                    signalled = true
                    ready.signal()
                }
                usleep(200_000)
            }
        }
    }

    /// Tries to take this listener's own session lock (`PostgreSQLChangeFeed.listenerLockSQL`).
    /// - Returns: whether it holds it now.
    private func takeLock(on connection: PostgreSQLConnection) throws -> Bool {
        let result = try connection.query(
            PostgreSQLChangeFeed.listenerLockSQL,
            PostgreSQLParameters([.text(origin)]),
            "cannot register a change listener"
        )
        return result.firstValue == .integer(1)
    }

    /// Reports the changes after `lastSeen`, grouped by transaction.
    /// - Returns: the last id read.
    private func deliver(after lastSeen: Int64, on connection: PostgreSQLConnection) throws -> Int64 {
        let result = try connection.query(
            "SELECT id, tx, origin, collection, upserted, deleted FROM " + catalog.changesTable
                + " WHERE id > $1::int8 ORDER BY id",
            PostgreSQLParameters([.integer(lastSeen)]),
            "cannot read the store's changes"
        )
        var last = lastSeen
        var transaction: Int64?
        var batch: [CollectionChange] = []
        func flush() {
            if !batch.isEmpty { handler(batch) }
            batch.removeAll()
        }
        result.forEachRow { row in
            guard case .integer(let id) = row.value(at: 0), case .integer(let tx) = row.value(at: 1),
                case .text(let from) = row.value(at: 2), case .text(let collection) = row.value(at: 3),
                case .text(let upserted) = row.value(at: 4), case .text(let deleted) = row.value(at: 5)
            else { return true }
            last = id
            if tx != transaction { flush() }
            transaction = tx
            guard from != origin else { return true }
            batch.append(
                CollectionChange(
                    collection: collection,
                    upserted: PostgreSQLChangeFeed.decode(upserted),
                    deleted: PostgreSQLChangeFeed.decode(deleted)
                )
            )
            return true
        }
        flush()
        return last
    }
}
