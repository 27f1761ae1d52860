internal import CPostgreSQL
import Foundation
public import Storage
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `StorageBackend` over a PostgreSQL server, through libpq: the store many processes on many
/// machines share.
///
/// ```swift
/// let store = try ObjectStore(backend: .postgreSQL(url: "postgresql://app@db1:5432/app"))
/// ```
///
/// Collections are tables of the configured schema, with real column types (`bigint`, `double
/// precision`, `text COLLATE "C"`, `bytea`; nested values as JSON text); names are folded to
/// lower case and quoted, and a catalog table keeps their declared spelling. Every value is a
/// bound parameter in binary format. Write transactions run `SERIALIZABLE` (or `REPEATABLE
/// READ`) and their closure is run again after a serialization failure or a deadlock, up to
/// `Configuration.retryLimit` times: keep side effects out of it. Reads run `REPEATABLE READ
/// READ ONLY`, one snapshot per closure; a read of one query (`readSingleQuery`) is that one
/// statement. Records are written with `COPY … FROM STDIN (FORMAT binary)`. See
/// `docs/POSTGRESQL.md`.
///
/// No error shows the connection string or its password: one that cannot be used (not parsed,
/// an invalid value) is `.cannotOpen` saying which part is wrong without quoting it, and a
/// password the server refuses, or asks for and was not given, is `.permissionDenied` rather than
/// a refused connection (`.cannotOpen`).
public final class PostgreSQLStorageBackend: StorageBackend, ExternalCommitSource, StoreEventSource {
    /// The configuration the backend was opened with (its `events` set to `eventReporter`).
    public let configuration: Configuration
    /// Where the backend reports retries, conflicts, slow statements and connections opened and
    /// lost: `configuration.events`, or a reporter of its own.
    public let eventReporter: StoreEventReporter
    /// The server, database and user, for messages (never the password).
    public var server: String { endpoint.description }

    var endpoint: PostgreSQLEndpoint { primary.endpoint }
    let catalog: PostgreSQLCatalog
    let schemaCache = PostgreSQLSchemaCache()
    /// The connections to the primary for reads (all of them when there is no replica), and for
    /// the store's own upkeep (creating its schema, the change listener).
    private let primary: PostgreSQLConnectionPool
    /// The connections to the primary that write: their statements outside a transaction block
    /// run at the write isolation (`default_transaction_isolation`), so a transaction of one
    /// saved record runs there as one statement (see `PostgreSQLWriteTransaction.singleSaveWriter`)
    /// on the connection it was given. A pool of its own, so the reads of one statement on
    /// `primary` keep the server's default.
    private let writePool: PostgreSQLConnectionPool
    /// Where the change listener connects: `primary`, or `Configuration.listenURL`'s server;
    /// `nil` behind a transaction pooler without a `listenURL` (no listener).
    private let listenPool: PostgreSQLConnectionPool?
    /// The connections to each read replica.
    private let replicas: [PostgreSQLConnectionPool]
    private let nextReplica = Locked(0)
    /// libpq connections must not cross a `fork()`.
    private let owner = OwningProcess()
    /// The change listeners started (`observeExternalCommits`, at the store's first observation;
    /// none for a store never observed), and whether `close()` ran, after which none starts.
    private let listeners = Locked<(started: [PostgreSQLChangeListener], closed: Bool)>(([], false))
    /// The commits that recorded changes, to prune the change table every
    /// `PostgreSQLChangeFeed.pruneEvery` of them.
    private let publishedCommits = Locked(0)
    /// The statement that records a commit's changes (`PostgreSQLChangeFeed.publishSQL`) and
    /// what it needs: made once, not per commit.
    private let publishSQL: String
    /// What a transaction sends instead while no store listened at the last write
    /// (`PostgreSQLChangeFeed.listenersCheckSQL`).
    private let listenersCheckSQL: String
    /// The checks that the store has no registry of full-text indexes, or that the registry has
    /// no record of some collections, pipelined before the commit of a transaction that answered
    /// so from the cache (`PostgreSQLSearchRegistryAppeared`).
    private let noRegistryCheckSQL: String
    private let unindexedCheckSQL: String
    /// The backend's name in the change table, so that its listeners skip its own commits.
    private let origin = UUID().uuidString
    /// `BEGIN ISOLATION LEVEL <the write isolation>`, made once (longer than a small string).
    private let writeBegin: String
    /// What every write transaction runs after its `BEGIN`, before its first statement takes
    /// its snapshot: `LOCK TABLE <catalog> IN ROW EXCLUSIVE MODE`, which write transactions hold
    /// together and one running alone excludes (see `write(_:)`); none when no transaction runs
    /// alone (`runAloneAfter` is `Int.max`).
    private let writeLock: String?
    /// The `BEGIN` and lock of a write transaction that runs alone (see `write(_:)`).
    private let aloneBegin = "BEGIN ISOLATION LEVEL REPEATABLE READ"
    private let aloneLock: String
    /// Whether a store listened at the last write: set by a single save (`runSingleSave`) either
    /// way, and by a longer transaction whose check before the commit found one
    /// (`publishChangesAndCommit`).
    private let listenersSeen = Atomic<Bool>(false)

    deinit {
        for listener in listeners.withLock({ $0.started }) { listener.stop() }
    }

    /// Connects to the server `url` names and creates the store's schema and catalog when
    /// missing; with `configuration.readOnly`, checks that they exist and creates nothing.
    /// - Parameters:
    ///   - url: a `postgresql://` URI or libpq `key=value` pairs.
    ///   - configuration: the schema, pool, timeouts and retries.
    /// - Throws: `StorageError` with code `.misuse` when `maximumConnections` is below 1,
    ///   `connectionTimeout` negative, or `statementTimeout` set with `transactionPooling`;
    ///   `.unavailable` (the message names the host and port) when the server cannot be reached
    ///   within the connect timeout, `.cannotOpen` when it
    ///   refuses the connection or (read-only) the schema or its store does not exist,
    ///   `.permissionDenied` when the role may not use the schema.
    public init(url: String, configuration: Configuration = .init()) throws {
        guard !configuration.schema.isEmpty, configuration.schema.utf8.count <= PostgreSQLIdentifier.maximumBytes,
            !configuration.schema.utf8.contains(0)
        else {
            throw StorageError(
                .invalidIdentifier,
                "invalid PostgreSQL schema name \(Identifier.quoted(configuration.schema)):"
                    + " 1 to 63 bytes, no NUL character"
            )
        }
        if configuration.transactionPooling, let statementTimeout = configuration.statementTimeout {
            throw StorageError(
                .misuse,
                "invalid PostgreSQL configuration: statementTimeout (\(statementTimeout)) is a session setting,"
                    + " which a transaction pooler does not keep (transactionPooling: true); set statement_timeout"
                    + " on the role or the database instead"
            )
        }
        guard configuration.maximumConnections >= 1, configuration.connectionTimeout >= .zero else {
            throw StorageError(
                .misuse,
                "invalid PostgreSQL configuration: maximumConnections must be at least 1 (is"
                    + " \(configuration.maximumConnections)) and connectionTimeout not negative (is"
                    + " \(configuration.connectionTimeout))"
            )
        }
        let eventReporter = configuration.events ?? StoreEventReporter()
        var configuration = configuration
        configuration.events = eventReporter
        self.eventReporter = eventReporter
        self.configuration = configuration
        primary = try PostgreSQLConnectionPool(url: url, configuration: configuration)
        writePool = try PostgreSQLConnectionPool(
            url: url,
            configuration: configuration,
            defaultIsolation: configuration.isolation.rawValue,
            sharing: primary
        )
        if let listenURL = configuration.listenURL {
            var direct = configuration
            direct.transactionPooling = false
            listenPool = try PostgreSQLConnectionPool(url: listenURL, configuration: direct)
        } else {
            listenPool = configuration.transactionPooling ? nil : primary
        }
        replicas = try configuration.replicaURLs.map {
            try PostgreSQLConnectionPool(url: $0, configuration: configuration)
        }
        catalog = PostgreSQLCatalog(schema: configuration.schema)
        publishSQL = PostgreSQLChangeFeed.publishSQL(catalog)
        listenersCheckSQL = PostgreSQLChangeFeed.listenersCheckSQL(catalog)
        noRegistryCheckSQL = PostgreSQLSearchRegistryAppeared.noRegistrySQL(catalog)
        unindexedCheckSQL = PostgreSQLSearchRegistryAppeared.unindexedSQL(catalog)
        writeBegin = "BEGIN ISOLATION LEVEL " + configuration.isolation.rawValue
        writeLock =
            configuration.runAloneAfter == .max ? nil : "LOCK TABLE " + catalog.table + " IN ROW EXCLUSIVE MODE"
        aloneLock = "LOCK TABLE " + catalog.table + " IN EXCLUSIVE MODE"
        let connection = try primary.checkOut()
        do {
            if configuration.readOnly {
                try checkStore(on: connection)
            } else {
                try createStore(on: connection)
            }
        } catch {
            primary.checkIn(connection)
            primary.close()
            throw error
        }
        primary.checkIn(connection)
    }

    /// For a store opened read-only: checks that its schema exists and holds the store's catalog,
    /// creating nothing.
    /// - Throws: `StorageError` with code `.cannotOpen` naming the schema and the server when
    ///   either is missing.
    private func checkStore(on connection: PostgreSQLConnection) throws {
        let found = try connection.query(
            "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1::text), to_regclass($2::text) IS NOT NULL",
            PostgreSQLParameters([.text(configuration.schema), .text(catalog.table)]),
            "cannot look for the store's schema"
        )
        var (hasSchema, hasCatalog) = (false, false)
        found.forEachRow { row in
            (hasSchema, hasCatalog) = (row.value(at: 0) == .integer(1), row.value(at: 1) == .integer(1))
            return false
        }
        let schema = Identifier.quoted(configuration.schema)
        guard hasSchema else {
            throw StorageError(
                .cannotOpen,
                "there is no schema \(schema) on \(endpoint.server) (a store opened read-only is never created;"
                    + " check the schema's name: PostgreSQL compares it exactly, case included)"
            )
        }
        guard hasCatalog else {
            throw StorageError(
                .cannotOpen,
                "the schema \(schema) on \(endpoint.server) holds no store (it has no table storage$catalog);"
                    + " a store opened read-only is never created"
            )
        }
    }

    /// The SQLSTATEs of a creation of the store that lost a race with another process creating
    /// it: a unique violation in PostgreSQL's own catalog, or a schema or a table that exists
    /// already.
    private static let catalogRaces: Set<PostgreSQLError.Code> = [.uniqueViolation, .duplicateSchema, .duplicateTable]

    /// Creates the schema and the catalog unless they exist, and counts the listeners (see
    /// `PostgreSQLChangeFeed`) under the observer lock. Several processes opening a new store at
    /// once may race on the creation; the loser tries again.
    private func createStore(on connection: PostgreSQLConnection) throws {
        let exists = try connection.query(
            "SELECT to_regclass($1::text) IS NOT NULL AND to_regclass($2::text) IS NOT NULL"
                + " AND to_regclass($3::text) IS NOT NULL",
            PostgreSQLParameters([
                .text(catalog.table), .text(catalog.listenersTable), .text(catalog.observedSequence),
            ]),
            "cannot look for the store's catalog"
        )
        if exists.firstValue == .integer(1) { return }
        for attempt in 0... {
            do {
                try connection.execute(
                    "BEGIN; SELECT pg_advisory_xact_lock(\(catalog.observeLockKey)); " + catalog.creationSQL
                )
                try PostgreSQLChangeFeed.recount(
                    on: connection,
                    catalog: catalog,
                    context: "cannot create the store's catalog"
                )
                try connection.execute("COMMIT")
                return
            } catch let error as StorageError {
                if connection.isInTransaction { try? connection.execute("ROLLBACK") }
                if error.code == .permissionDenied {
                    throw StorageError(
                        .permissionDenied,
                        "the role may not create the store's schema \(catalog.schemaName) or its catalog on "
                            + endpoint.server + ": " + error.message,
                        underlying: error.underlying
                    )
                }
                // Another store created the schema or the catalog at the same moment.
                let race = error.postgreSQL?.code.map(Self.catalogRaces.contains) == true
                guard race, attempt < 5 else { throw error }
            }
        }
    }

    /// Closes every idle connection and stops listening for other processes' commits, waiting
    /// for the listener's thread to end (within half a second, or the connection attempt it is
    /// making); later calls throw `.closed`, as on every backend. Connections in use close when
    /// their transaction ends.
    public func close() {
        primary.close()
        writePool.close()
        for replica in replicas { replica.close() }
        let started = listeners.withLock { listeners in
            listeners.closed = true
            return listeners.started
        }
        for listener in started { listener.stop() }
        for listener in started { listener.join() }
    }

    /// The connections this store has open to the primary now (idle or in use, the change
    /// listener's not counted), and the most it had open at once: never more than
    /// `configuration.maximumConnections`.
    package var primaryConnectionCounts: (open: Int, peak: Int) { primary.limit.counts }

    /// `configuration.readOnly`: whether the store was opened read-only.
    public var isReadOnly: Bool { configuration.readOnly }

    /// Whether the current thread asked for reads from the primary (`readingFromPrimary`).
    private static let primaryOnlyKey = "swift-storage.postgresql.primary-only"

    /// Runs `body` with every read of this thread served by the primary, even when replicas are
    /// configured: for a read that must see a write just made.
    ///
    /// ```swift
    /// try store.save(order)
    /// let fresh = try backend.readingFromPrimary { try store.fetch(Order.self, id: order.id) }
    /// ```
    /// - Parameter body: the reads that must see the primary's latest commits.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func readingFromPrimary<Result>(_ body: () throws -> Result) rethrows -> Result {
        let dictionary = Thread.current.threadDictionary
        let previous = dictionary[Self.primaryOnlyKey]
        dictionary[Self.primaryOnlyKey] = true
        defer { dictionary[Self.primaryOnlyKey] = previous }
        return try body()
    }

    /// The pool a read outside a write transaction uses: the next replica in turn, unless there
    /// is none or the thread asked for the primary.
    private func readPool() -> PostgreSQLConnectionPool {
        guard !replicas.isEmpty, Thread.current.threadDictionary[Self.primaryOnlyKey] == nil else { return primary }
        let index = nextReplica.withLock { next in
            defer { next = (next + 1) % replicas.count }
            return next
        }
        return replicas[index]
    }

    /// Runs `body` in a `REPEATABLE READ READ ONLY` transaction: one snapshot for the closure.
    /// - Parameter body: the reads; the transaction is valid only inside it.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or a `StorageError` for an engine failure (`.connectionLost`
    ///   when the connection broke).
    public func read<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result {
        try read(singleQuery: false, body)
    }

    /// Runs `body`, which makes at most one query after its schema look-ups, as one statement
    /// outside a transaction (one statement is its own snapshot): no `BEGIN` and no `COMMIT`.
    /// When the schema is not cached, the catalog read opens a `REPEATABLE READ READ ONLY`
    /// transaction first, so the schema and the query still share one snapshot.
    /// - Parameter body: the reads; the transaction is valid only inside it.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or a `StorageError` as `read(_:)` does; `.misuse` when
    ///   `body` makes a second query.
    public func readSingleQuery<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result {
        try read(singleQuery: true, body)
    }

    private func read<Result>(
        singleQuery: Bool,
        _ body: (any BackendReadTransaction) throws -> Result
    ) throws -> Result {
        try owner.check(path: nil)
        var attempt = 0
        var pool = readPool()
        while true {
            let connection: PostgreSQLConnection
            do {
                // A replica out of reach is not waited for: the primary serves the read.
                connection = try pool === primary ? checkOut(pool) : pool.checkOut()
            } catch let error as StorageError where error.code == .unavailable && pool !== primary {
                // A replica that cannot be reached: the primary serves the read.
                pool = primary
                continue
            }
            let transaction = PostgreSQLReadTransaction(
                connection: connection,
                catalog: catalog,
                schemaCache: schemaCache
            )
            do {
                // Sent with the first statement; the commit's answer is read by the next one.
                let begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                if singleQuery {
                    try connection.beginAutocommit()
                    transaction.runSingleQuery(begin: begin)
                } else {
                    try connection.begin(begin)
                }
                let value = try body(transaction)
                transaction.invalidate()
                if transaction.needsCommit { try connection.commit(waiting: false) }
                pool.checkIn(connection)
                return value
            } catch {
                transaction.invalidate()
                let began = connection.hasBegun
                finish(connection, in: pool)
                attempt += 1
                // A read whose first statement ran may have handed rows to its caller: it runs
                // again only when nothing of it ran.
                if try shouldRetry(error, pool: pool, attempt: attempt, rerunnable: !began, limit: 3) {
                    reportRetry(after: error, run: attempt + 1)
                    continue
                }
                throw error
            }
        }
    }

    /// Runs `body` in a write transaction that commits when it returns and rolls back when it
    /// throws. The closure runs again after a serialization failure or a deadlock (another
    /// process's transaction conflicted), up to `configuration.retryLimit` times.
    ///
    /// Every write transaction holds the store's catalog table in `ROW EXCLUSIVE` mode, taken
    /// by `LOCK TABLE` right after its `BEGIN`, before its snapshot; write transactions hold it
    /// together. After `configuration.runAloneAfter` conflicts in a row the transaction runs
    /// alone: `REPEATABLE READ` with the table in `EXCLUSIVE` mode, which waits for the write
    /// transactions running and keeps new ones waiting. Its snapshot then follows every write
    /// transaction's commit and precedes every later one's start, so it is serializable with
    /// them without `SERIALIZABLE`'s checks, whose false conflicts (a long transaction anywhere
    /// on the server makes the server summarize old transactions, and reads of rows they wrote
    /// then fail every time) can fail a transaction any number of times in a row. A single-record
    /// save, one statement outside a transaction block, takes no lock: its only read is the
    /// current version of the row it writes, where a concurrent change fails it (and it runs
    /// again) at either isolation, so it cannot form a cycle with a transaction running alone.
    /// - Parameter body: the writes; the transaction is valid only inside it, and it may run more
    ///   than once.
    /// - Returns: what `body` returns in the run that committed.
    /// - Throws: what `body` throws (unchanged), or a `StorageError`: `.busy` when the retries
    ///   are used up, `.constraintViolation`, `.connectionLost` (a commit whose outcome is
    ///   unknown), `.timedOut`, `.readOnly` (before anything is sent) for a store opened read-only.
    public func write<Result>(_ body: (any BackendWriteTransaction) throws -> Result) throws -> Result {
        try owner.check(path: nil)
        if configuration.readOnly {
            throw StorageError(
                .readOnly,
                "the store in schema \(Identifier.quoted(configuration.schema)) on \(endpoint.server) was opened"
                    + " read-only (readOnly: true); nothing was written"
            )
        }
        var attempt = 0
        while true {
            // A connection whose default isolation is the write isolation: a transaction of one
            // saved record runs there as one statement, without a second check-out.
            let connection = try checkOut(writePool)
            let pool = writePool
            let alone = attempt >= configuration.runAloneAfter
            let transaction = PostgreSQLWriteTransaction(
                connection: connection,
                catalog: catalog,
                schemaCache: schemaCache,
                batchSize: max(1, configuration.batchSize)
            )
            do {
                // Sent with the first statement.
                try connection.begin(alone ? aloneBegin : writeBegin, lock: alone ? aloneLock : writeLock)
                let value = try body(transaction)
                if !alone, !configuration.transactionPooling, let writer = transaction.singleSaveWriter(),
                    let check = transaction.singleSaveCheck(of: writer)
                {
                    // One saved record and nothing sent: one statement on a connection whose
                    // default isolation is the write isolation, no `BEGIN` and no `COMMIT`.
                    transaction.invalidate()
                    try connection.commit()  // sent nothing: forgets the BEGIN
                    if try runSingleSave(writer, on: connection, check: check) { pruneChangesNow(on: connection) }
                    pool.checkIn(connection)
                    return value
                }
                let last = try transaction.flushForCommit()
                transaction.invalidate()
                try publishChangesAndCommit(transaction, after: last)
                for folded in transaction.droppedCollections { schemaCache.remove(folded) }
                for (folded, schema) in transaction.changedSchemas {
                    if let stamp = transaction.changedStamps[folded] {
                        schemaCache.store(schema, stamp: stamp)
                    } else {
                        schemaCache.remove(folded)
                    }
                }
                schemaCache.forgetUnindexed(transaction.registryKeysWritten)
                if !transaction.changes.isEmpty { pruneChangesNow(on: connection) }
                pool.checkIn(connection)
                return value
            } catch {
                transaction.invalidate()
                // Lost before its commit was sent, the transaction did not commit (the server
                // rolls back a transaction whose connection ends, and a server that died kept
                // nothing uncommitted): it runs again. Lost after, it may have committed.
                let outcomeUnknown = connection.mayHaveCommitted
                finish(connection, in: pool)
                attempt += 1
                if error is PostgreSQLListenersAppeared, attempt <= configuration.retryLimit + 1 {
                    // Rolled back by its check: a store listens now, and the transaction run
                    // again records its changes for it.
                    listenersSeen.store(true, ordering: .relaxed)
                    continue
                }
                if error is PostgreSQLSearchRegistryAppeared, attempt <= configuration.retryLimit + 1 {
                    // Rolled back by its check: the store keeps full-text indexes that the cache
                    // did not know, which the transaction run again looks up and keeps.
                    schemaCache.forgetSearchAnswers()
                    continue
                }
                if try shouldRetry(
                    error,
                    pool: pool,
                    attempt: attempt,
                    rerunnable: !outcomeUnknown,
                    commitMayHaveRun: outcomeUnknown,
                    limit: configuration.retryLimit
                ) {
                    // Backs off by a random time whose bound doubles at each attempt (1 ms, 2 ms, 4 ms,
                    // ... up to 128 ms), so that processes conflicting on one row spread out even when
                    // a transaction takes longer than the first bounds (a loaded server).
                    usleep(UInt32.random(in: 0...(UInt32(500) << UInt32(min(attempt, 8)))))
                    reportRetry(after: error, run: attempt + 1)
                    continue
                }
                throw error
            }
        }
    }

    /// Saves the one record `writer` holds by one statement on its own. While no store listened
    /// at the last single save, the upsert alone, which fails with `listenersAppeared` (rolled
    /// back) when a store listens now; then, or while stores listened, the upsert and its change
    /// record (`PostgreSQLChangeFeed.saveOneSQL`, which records nothing when none listens).
    /// `check`: what the transaction answered from the cache about the store's full-text
    /// indexes, which the statement then checks (`PostgreSQLSearchRegistryAppeared`).
    /// - Returns: whether the save recorded its change.
    private func runSingleSave(
        _ writer: PostgreSQLRecordWriter,
        on connection: PostgreSQLConnection,
        check: PostgreSQLSearchRegistryAppeared.Check
    ) throws -> Bool {
        defer { writer.forgetBufferedRecords() }
        if !listenersSeen.load(ordering: .relaxed) {
            do {
                if try writer.saveAlone(on: connection, origin: origin, unobserved: true, check: check) != nil {
                    return false
                }
            } catch is PostgreSQLListenersAppeared {
                listenersSeen.store(true, ordering: .relaxed)
            }
        }
        guard let changeRows = try writer.saveAlone(on: connection, origin: origin, unobserved: false, check: check)
        else {
            return false
        }
        let recorded = changeRows > 0
        listenersSeen.store(recorded, ordering: .relaxed)
        return recorded
    }

    /// Records the transaction's changes for other processes' change streams (see
    /// `PostgreSQLChangeFeed`), in the transaction itself, and commits: `last` (the writers'
    /// last records), the change record and the `COMMIT` in one round trip, with the `BEGIN` when
    /// nothing was sent before (a single save is one round trip). While no store listened at the
    /// last write, the listener check (`PostgreSQLChangeFeed.listenersCheckSQL`) instead of the
    /// change record: the keys are not encoded, and `write(_:)` runs the transaction again when
    /// the check finds a listener.
    private func publishChangesAndCommit(
        _ transaction: PostgreSQLWriteTransaction,
        after last: [PostgreSQLConnection.PipelinedStatement]
    ) throws {
        var last = last
        if !(last.isEmpty && transaction.connection.hasPendingBegin) {
            // Something was or is to be written: what the cache answered is checked with the
            // commit, in its round trip.
            let sql: String
            var parameters = PostgreSQLParameters()
            switch transaction.commitCheck() {
            case .none: sql = ""
            case .noRegistry: sql = noRegistryCheckSQL
            case .unindexed(let collections):
                sql = unindexedCheckSQL
                parameters.appendArray(collections.map { .text($0) }, elementType: PostgreSQLType.text)
            }
            if !sql.isEmpty {
                last.append(
                    .init(
                        sql: sql,
                        parameters: parameters,
                        context: "cannot check the store's full-text indexes",
                        collection: nil,
                        marker: (PostgreSQLSearchRegistryAppeared.code, PostgreSQLSearchRegistryAppeared())
                    )
                )
            }
        }
        guard !transaction.changes.isEmpty else {
            if last.isEmpty {
                try transaction.connection.commit()
            } else {
                try transaction.connection.runAndCommit(last)
            }
            return
        }
        guard listenersSeen.load(ordering: .relaxed) else {
            // No store listened at the last write: the check alone, which rolls the transaction
            // back when one listens now (`PostgreSQLListenersAppeared`, run again by `write`).
            try transaction.connection.runAndCommit(
                last + [
                    .init(
                        sql: listenersCheckSQL,
                        parameters: PostgreSQLParameters(),
                        context: "cannot record the transaction's changes",
                        collection: nil,
                        marker: (PostgreSQLChangeFeed.listenersAppeared, PostgreSQLListenersAppeared())
                    )
                ]
            )
            return
        }
        let rows = transaction.changes.rows
        var parameters = PostgreSQLParameters([.text(origin)])
        parameters.appendArray(rows.collections, elementType: PostgreSQLType.text)
        parameters.appendArray(rows.upserted, elementType: PostgreSQLType.text)
        parameters.appendArray(rows.deleted, elementType: PostgreSQLType.text)
        try transaction.connection.runAndCommit(
            last + [
                .init(
                    sql: publishSQL,
                    parameters: parameters,
                    context: "cannot record the transaction's changes",
                    collection: nil
                )
            ]
        )
    }

    /// Prunes the change table after every `PostgreSQLChangeFeed.pruneEvery`-th commit that had
    /// changes (a single save: that recorded them; a longer transaction does not know whether its
    /// change statement recorded anything), so that it stays bounded and listeners gone are
    /// removed. Best effort: the commit has happened, a failure here is left for the next pruning.
    private func pruneChangesNow(on connection: PostgreSQLConnection) {
        let due = publishedCommits.withLock { count in
            count += 1
            return count % PostgreSQLChangeFeed.pruneEvery == 0
        }
        guard due else { return }
        try? PostgreSQLChangeFeed.prune(
            on: connection,
            catalog: catalog,
            lockKey: PostgreSQLChangeFeed.pruneLockKey(for: configuration.schema),
            observeLockKey: catalog.observeLockKey,
            retention: configuration.changeRetention
        )
    }

    /// Reports the commits of other backends on this store (other processes, other machines) to
    /// `handler`, from a listener connection of its own (`LISTEN`), until the backend is closed.
    /// `ObjectStore` calls it when the store is first observed, not at open: a store that is never
    /// observed opens no listener connection. Returns once `LISTEN` is in effect and the listener
    /// is registered (or its first attempt failed; it then keeps trying), so a commit made
    /// elsewhere after it returns is reported. Does nothing after `close()`, or for a store opened
    /// read-only or with `observesOtherProcesses` off.
    /// - Parameter handler: called with the changes of each commit made elsewhere, on the
    ///   listener's thread.
    public func observeExternalCommits(_ handler: @escaping @Sendable ([CollectionChange]) -> Void) {
        // A listener registers itself in the store's listener table: a write.
        guard configuration.observesOtherProcesses, !configuration.readOnly else { return }
        // `LISTEN` needs a session, which a transaction pooler does not keep.
        guard let listenPool = listenPool else { return }
        let listener = PostgreSQLChangeListener(
            open: { try listenPool.connect(statementTimeout: false) },
            catalog: catalog,
            channel: catalog.channel,
            origin: origin,
            pruneLockKey: PostgreSQLChangeFeed.pruneLockKey(for: configuration.schema),
            observeLockKey: catalog.observeLockKey,
            retention: configuration.changeRetention,
            handler: handler
        )
        // Registered before it starts: a `close()` from now on stops it, and one that ran already
        // keeps it from starting at all.
        let closed = listeners.withLock { listeners in
            if !listeners.closed { listeners.started.append(listener) }
            return listeners.closed
        }
        guard !closed else { return }
        listener.start()
    }

    /// How many change listeners this backend has started (at most one per `ObjectStore`, none
    /// until the store is first observed).
    package var startedListenerCount: Int { listeners.withLock { $0.started.count } }

    /// Rolls back whatever is open on `connection` and returns it to the pool when still usable.
    private func finish(_ connection: PostgreSQLConnection, in pool: PostgreSQLConnectionPool) {
        if !connection.isBroken && connection.isInTransaction {
            try? connection.rollback()
        }
        pool.checkIn(connection)
    }

    /// Why a transaction failed, in words that hold no data (a server's message may quote values).
    private static func eventReason(_ error: any Error) -> String {
        guard let error = error as? StorageError else { return "an error" }
        if error.underlying is PostgreSQLSchemaChanged { return "schema changed by another process" }
        if error.underlying is PostgreSQLCatalogRace { return "catalog changed by another process" }
        if error.code == .connectionLost { return "connection lost" }
        guard let cause = error.postgreSQL, let code = cause.code else { return error.code.description }
        switch code {
        case .serializationFailure: return "serialization failure (40001)"
        case .deadlockDetected: return "deadlock (40P01)"
        default: return cause.isStaleSchema ? "stale schema (\(code))" : "SQLSTATE \(code)"
        }
    }

    /// Reports that a transaction's closure runs again (run `run`) after `error`.
    private func reportRetry(after error: any Error, run: Int) {
        eventReporter.report(
            StoreEvent(
                .retry,
                backend: "PostgreSQL",
                attempt: run,
                code: (error as? StorageError)?.code,
                reason: Self.eventReason(error),
                location: endpoint.server
            )
        )
    }

    /// Reports that run `run` of a transaction conflicted with another (`error`).
    private func reportConflict(_ error: StorageError, run: Int) {
        eventReporter.report(
            StoreEvent(
                .conflict,
                backend: "PostgreSQL",
                attempt: run,
                code: error.code,
                reason: Self.eventReason(error),
                location: endpoint.server
            )
        )
    }

    /// A connection of `pool`; while the server cannot be reached (`.unavailable`: down, or no
    /// host of the URL is the primary yet), tried again every 100 ms for
    /// `configuration.reconnectTimeout`.
    /// - Throws: what `pool.checkOut()` throws; `.unavailable` once the time is up.
    private func checkOut(_ pool: PostgreSQLConnectionPool) throws -> PostgreSQLConnection {
        let deadline = ContinuousClock.now + configuration.reconnectTimeout
        while true {
            do {
                return try pool.checkOut()
            } catch let error as StorageError where error.code == .unavailable && ContinuousClock.now < deadline {
                usleep(100_000)
            }
        }
    }

    /// Whether a failed transaction runs again: after a serialization failure or deadlock, after
    /// a schema change by another process made this one's cached view stale, or after a lost
    /// connection when the transaction is `rerunnable` (a write whose commit was not sent, a
    /// read of which nothing ran).
    /// - Throws: `.busy` when a conflicting transaction used up `limit`; `.unavailable` when a
    ///   connection was lost `limit` times; `.connectionLost`, saying the outcome is unknown, for
    ///   a write lost once its commit was sent (`commitMayHaveRun`).
    private func shouldRetry(
        _ error: any Error,
        pool: PostgreSQLConnectionPool,
        attempt: Int,
        rerunnable: Bool,
        commitMayHaveRun: Bool = false,
        limit: Int
    ) throws -> Bool {
        guard let error = error as? StorageError else { return false }
        if error.underlying is PostgreSQLSchemaChanged {
            // A statement found its collection's catalog stamp moved: read the schemas afresh.
            schemaCache.removeAll()
            return attempt <= limit
        }
        if let race = error.underlying as? PostgreSQLCatalogRace {
            reportConflict(error, run: attempt)
            // Another process changed the catalog at the same moment: run again, as after a
            // serialization failure, against the new catalog.
            guard attempt <= limit else {
                throw StorageError(
                    .busy,
                    "the transaction conflicted with others \(attempt) times in a row: " + error.message,
                    collection: error.collection,
                    underlying: race
                )
            }
            return true
        }
        guard let cause = error.postgreSQL else { return false }
        // The primary's two pools share a server (and a schema): what is wrong with one's
        // connections is most likely wrong with the other's.
        let pools = pool === replicas.first(where: { $0 === pool }) ? [pool] : [primary, writePool]
        if error.code == .connectionLost {
            for pool in pools { pool.discardIdleConnections() }
            guard rerunnable else {
                guard commitMayHaveRun else { return false }
                throw StorageError(
                    .connectionLost,
                    error.message + " (the connection was lost after the commit was sent: the transaction may or may"
                        + " not have committed)",
                    collection: error.collection,
                    column: error.column,
                    key: error.key,
                    underlying: error.underlying
                )
            }
            guard attempt <= limit else {
                throw StorageError(
                    .unavailable,
                    "the connection to PostgreSQL at \(pool.endpoint.server) was lost \(attempt) times in a row;"
                        + " nothing was committed: " + error.message,
                    collection: error.collection,
                    underlying: error.underlying
                )
            }
            return true
        }
        if cause.isStaleSchema {
            schemaCache.removeAll()
            for pool in pools { pool.discardIdleConnections() }
            return attempt <= limit
        }
        guard cause.isSerializationFailure else { return false }
        reportConflict(error, run: attempt)
        guard attempt <= limit else {
            throw StorageError(
                .busy,
                "the transaction conflicted with others \(attempt) times in a row: " + error.message,
                collection: error.collection,
                underlying: cause
            )
        }
        return true
    }
}
