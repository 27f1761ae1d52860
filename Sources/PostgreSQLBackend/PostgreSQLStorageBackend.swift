internal import CPostgreSQL
import Foundation
public import Storage

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
/// READ ONLY`, one snapshot per closure. See `docs/POSTGRESQL.md`.
public final class PostgreSQLStorageBackend: StorageBackend, ExternalCommitSource {
    /// The configuration the backend was opened with.
    public let configuration: Configuration
    /// The server, database and user, for messages (never the password).
    public var server: String { endpoint.description }

    /// The connection string; never shown, as it may hold a password.
    private let url: String
    let endpoint: PostgreSQLEndpoint
    let catalog: PostgreSQLCatalog
    let schemaCache = PostgreSQLSchemaCache()
    /// Idle connections, at most `configuration.poolSize`.
    private let idle = Locked<[PostgreSQLConnection]>([])
    private let closed = Locked<Bool>(false)
    /// libpq connections must not cross a `fork()`.
    private let owner = OwningProcess()
    /// This backend's name in the change table, so that its listeners skip its own commits.
    private let origin = UUID().uuidString
    private let listeners = Locked<[PostgreSQLChangeListener]>([])

    deinit {
        for listener in listeners.withLock({ $0 }) { listener.stop() }
    }

    /// Connects to the server `url` names and creates the store's schema and catalog when
    /// missing.
    /// - Parameters:
    ///   - url: a `postgresql://` URI or libpq `key=value` pairs.
    ///   - configuration: the schema, pool, timeouts and retries.
    /// - Throws: `StorageError` with code `.unavailable` (the message names the host and port)
    ///   when the server cannot be reached within the connect timeout, `.cannotOpen` when it
    ///   refuses the connection, `.permissionDenied` when the role may not use the schema.
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
        self.url = url
        self.configuration = configuration
        endpoint = try PostgreSQLEndpoint(url: url)
        catalog = PostgreSQLCatalog(schemaName: PostgreSQLIdentifier.quote(configuration.schema))
        let connection = try connect()
        try createStore(on: connection)
        checkIn(connection)
    }

    private func connect() throws -> PostgreSQLConnection {
        try PostgreSQLConnection(
            url: url,
            endpoint: endpoint,
            connectTimeout: configuration.connectTimeout,
            statementTimeout: configuration.statementTimeout
        )
    }

    /// Creates the schema and the catalog unless they exist. Several processes opening a new
    /// store at once may race on the creation; the loser tries again.
    private func createStore(on connection: PostgreSQLConnection) throws {
        let exists = try connection.query(
            "SELECT to_regclass($1::text) IS NOT NULL",
            PostgreSQLParameters([.text(catalog.table)]),
            "cannot look for the store's catalog"
        )
        if exists.firstValue == .integer(1) { return }
        for attempt in 0... {
            do {
                try connection.execute("BEGIN; " + catalog.creationSQL + "; COMMIT")
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
                let race = ["23505", "42P06", "42P07"].contains(error.postgreSQL?.sqlState ?? "")
                guard race, attempt < 5 else { throw error }
            }
        }
    }

    /// Closes every idle connection; a later call opens new ones. Connections in use close
    /// when their transaction ends.
    public func close() {
        closed.withLock { $0 = true }
        for listener in listeners.withLock({ $0 }) { listener.stop() }
        let connections = idle.withLock { idle in
            defer { idle.removeAll() }
            return idle
        }
        _ = connections
    }

    private func checkOut() throws -> PostgreSQLConnection {
        try owner.check(path: nil)
        if closed.withLock({ $0 }) {
            throw StorageError(.misuse, "the store was closed")
        }
        if let connection = idle.withLock({ $0.popLast() }) { return connection }
        return try connect()
    }

    /// Returns a connection to the pool, or lets it close when it is unusable or the pool full.
    private func checkIn(_ connection: PostgreSQLConnection) {
        guard !connection.isBroken, !connection.isInTransaction else { return }
        let surplus = idle.withLock { idle -> PostgreSQLConnection? in
            guard idle.count < configuration.poolSize, !closed.withLock({ $0 }) else { return connection }
            idle.append(connection)
            return nil
        }
        _ = surplus
    }

    /// Forgets every idle connection: after one was found broken, the others (opened to the
    /// same server) most likely are too.
    private func discardIdleConnections() {
        let connections = idle.withLock { idle in
            defer { idle.removeAll() }
            return idle
        }
        _ = connections
    }

    /// Runs `body` in a `REPEATABLE READ READ ONLY` transaction: one snapshot for the closure.
    /// - Throws: what `body` throws, or a `StorageError` for an engine failure (`.connectionLost`
    ///   when the connection broke).
    public func read<Result>(_ body: (any StorageReadTransaction) throws -> Result) throws -> Result {
        var attempt = 0
        while true {
            let connection = try checkOut()
            let transaction = PostgreSQLReadTransaction(connection: connection, catalog: catalog, schemaCache: schemaCache)
            var began = false
            do {
                try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                began = true
                let value = try body(transaction)
                transaction.invalidate()
                try connection.execute("COMMIT")
                checkIn(connection)
                return value
            } catch {
                transaction.invalidate()
                finish(connection)
                attempt += 1
                if try shouldRetry(error, attempt: attempt, began: began, limit: 3) { continue }
                throw error
            }
        }
    }

    /// Runs `body` in a write transaction that commits when it returns and rolls back when it
    /// throws. The closure runs again after a serialization failure or a deadlock (another
    /// process's transaction conflicted), up to `configuration.retryLimit` times.
    /// - Throws: what `body` throws (unchanged), or a `StorageError`: `.busy` when the retries
    ///   are used up, `.constraintViolation`, `.connectionLost` (a commit whose outcome is
    ///   unknown), `.timedOut`.
    public func write<Result>(_ body: (any StorageWriteTransaction) throws -> Result) throws -> Result {
        var attempt = 0
        while true {
            let connection = try checkOut()
            let transaction = PostgreSQLWriteTransaction(
                connection: connection,
                catalog: catalog,
                schemaCache: schemaCache,
                batchSize: max(1, configuration.batchSize)
            )
            var began = false
            do {
                try connection.execute("BEGIN ISOLATION LEVEL " + configuration.isolation.rawValue)
                began = true
                let value = try body(transaction)
                try transaction.willRunStatement()
                transaction.invalidate()
                try publishChanges(of: transaction)
                try connection.execute("COMMIT")
                for schema in transaction.changedSchemas.values { schemaCache.store(schema) }
                checkIn(connection)
                return value
            } catch {
                transaction.invalidate()
                finish(connection)
                attempt += 1
                if try shouldRetry(error, attempt: attempt, began: began, limit: configuration.retryLimit) {
                    // Backs off a little, more at each attempt, so that conflicting processes spread out.
                    usleep(UInt32.random(in: 0...UInt32(min(attempt, 20) * 500)))
                    continue
                }
                throw error
            }
        }
    }

    /// Records the transaction's changes for other processes' change streams (see
    /// `PostgreSQLChangeFeed`), in the transaction itself, just before it commits.
    private func publishChanges(of transaction: PostgreSQLWriteTransaction) throws {
        guard !transaction.changes.isEmpty else { return }
        let rows = transaction.changes.rows
        var parameters = PostgreSQLParameters([
            .text(origin), .integer(PostgreSQLChangeFeed.lockKey(for: configuration.schema)),
            .text(PostgreSQLChangeFeed.channel(for: configuration.schema)),
        ])
        parameters.appendArray(rows.collections, elementType: PostgreSQLType.text)
        parameters.appendArray(rows.upserted, elementType: PostgreSQLType.text)
        parameters.appendArray(rows.deleted, elementType: PostgreSQLType.text)
        _ = try transaction.connection.query(
            PostgreSQLChangeFeed.publishSQL(catalog),
            parameters,
            "cannot record the transaction's changes"
        )
    }

    /// Reports the commits of other backends on this store (other processes, other machines) to
    /// `handler`, from a listener connection of its own (`LISTEN`), until the backend is closed.
    public func observeExternalCommits(_ handler: @escaping @Sendable ([CollectionChange]) -> Void) {
        guard configuration.observesOtherProcesses else { return }
        let url = url
        let endpoint = endpoint
        let configuration = configuration
        let listener = PostgreSQLChangeListener(
            open: {
                try PostgreSQLConnection(
                    url: url,
                    endpoint: endpoint,
                    connectTimeout: configuration.connectTimeout,
                    statementTimeout: nil
                )
            },
            catalog: catalog,
            channel: PostgreSQLChangeFeed.channel(for: configuration.schema),
            origin: origin,
            handler: handler
        )
        listeners.withLock { $0.append(listener) }
        listener.start()
    }

    /// Rolls back whatever is open on `connection` and returns it to the pool when still usable.
    private func finish(_ connection: PostgreSQLConnection) {
        if !connection.isBroken && connection.isInTransaction {
            try? connection.execute("ROLLBACK")
        }
        checkIn(connection)
    }

    /// Whether a failed transaction runs again: after a serialization failure or deadlock, after
    /// a schema change by another process made this one's cached view stale, or when a pooled
    /// connection turned out to be broken before the closure ran.
    private func shouldRetry(_ error: any Error, attempt: Int, began: Bool, limit: Int) throws -> Bool {
        guard let error = error as? StorageError, let cause = error.postgreSQL else { return false }
        if error.code == .connectionLost {
            discardIdleConnections()
            return !began && attempt <= 1
        }
        if cause.isStaleSchema {
            schemaCache.removeAll()
            discardIdleConnections()
            return attempt <= limit
        }
        guard cause.isSerializationFailure else { return false }
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
