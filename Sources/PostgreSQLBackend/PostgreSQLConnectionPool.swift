import Storage

/// The connections to one server (the primary, or one replica): idle ones are kept, at most
/// `Configuration.poolSize`; more are opened while more transactions run, and closed after use,
/// so a nested read never waits for a connection.
final class PostgreSQLConnectionPool: Sendable {
    /// The connection string; never shown, as it may hold a password.
    private let url: String
    let endpoint: PostgreSQLEndpoint
    private let configuration: PostgreSQLStorageBackend.Configuration
    /// The idle connections, and whether `close()` ran: one lock for both, taken once per
    /// check-out and once per check-in.
    private let state = Locked<(idle: [PostgreSQLConnection], closed: Bool)>(([], false))
    /// The isolation level of statements run outside a transaction block on this pool's
    /// connections, or `nil` for the server's default (read committed).
    private let defaultIsolation: String?

    init(
        url: String,
        configuration: PostgreSQLStorageBackend.Configuration,
        defaultIsolation: String? = nil
    ) throws {
        self.url = url
        self.configuration = configuration
        self.defaultIsolation = defaultIsolation
        endpoint = try PostgreSQLEndpoint(url: url)
    }

    /// Opens a new connection, outside the pool; for a store opened read-only, one whose
    /// transactions are all read-only (`default_transaction_read_only`), so that the server
    /// refuses any write sent on it.
    func connect(statementTimeout: Bool = true) throws -> PostgreSQLConnection {
        let connection = try PostgreSQLConnection(
            url: url,
            endpoint: endpoint,
            connectTimeout: configuration.connectTimeout,
            statementTimeout: statementTimeout ? configuration.statementTimeout : nil,
            defaultIsolation: defaultIsolation
        )
        if configuration.readOnly { try connection.execute("SET default_transaction_read_only = on") }
        return connection
    }

    /// An idle connection, or a new one.
    /// - Throws: `.closed` after `close()`, as every backend; `.unavailable` when the server
    ///   cannot be reached.
    func checkOut() throws -> PostgreSQLConnection {
        let (closed, connection) = state.withLock { state in
            (state.closed, state.closed ? nil : state.idle.popLast())
        }
        if closed { throw StorageError(.closed, "the store was closed") }
        return try connection ?? connect()
    }

    /// Returns a connection to the pool, or lets it close when it is unusable or the pool full.
    func checkIn(_ connection: PostgreSQLConnection) {
        guard !connection.isBroken, !connection.isInTransaction else { return }
        let surplus = state.withLock { state -> PostgreSQLConnection? in
            guard state.idle.count < configuration.poolSize, !state.closed else { return connection }
            state.idle.append(connection)
            return nil
        }
        // Closed here, outside the lock.
        _ = surplus
    }

    /// Forgets every idle connection: after one was found broken, the others (opened to the
    /// same server) most likely are too.
    func discardIdleConnections() {
        let connections = state.withLock { state in
            defer { state.idle.removeAll() }
            return state.idle
        }
        _ = connections
    }

    /// Closes the idle connections; later check-outs throw `.closed`.
    func close() {
        let connections = state.withLock { state in
            state.closed = true
            defer { state.idle.removeAll() }
            return state.idle
        }
        _ = connections
    }
}
