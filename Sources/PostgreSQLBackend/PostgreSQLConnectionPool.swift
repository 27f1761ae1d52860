import Storage

/// The connections to one server (the primary, or one replica) opened with one setting: at
/// most `Configuration.poolSize` idle ones are kept. Every connection it opens counts against
/// the `PostgreSQLConnectionLimit` it shares with the other pools to the same server
/// (`Configuration.maximumConnections`): at the limit a check-out waits, at most
/// `Configuration.connectionTimeout`, and then fails with `.busy`.
final class PostgreSQLConnectionPool: Sendable {
    /// The connection string; never shown, as it may hold a password.
    private let url: String
    let endpoint: PostgreSQLEndpoint
    private let configuration: PostgreSQLStorageBackend.Configuration
    /// The bound this pool's connections count against, and where its idle ones are kept.
    let limit: PostgreSQLConnectionLimit
    /// This pool's number in `limit`.
    private let slot: Int
    /// The isolation level of statements run outside a transaction block on this pool's
    /// connections, or `nil` for the server's default (read committed).
    private let defaultIsolation: String?

    /// A pool for `url`; with `sharing`, the pool counts its connections with that one's (the
    /// same server), else against a limit of its own.
    init(
        url: String,
        configuration: PostgreSQLStorageBackend.Configuration,
        defaultIsolation: String? = nil,
        sharing other: PostgreSQLConnectionPool? = nil
    ) throws {
        self.url = url
        self.configuration = configuration
        self.defaultIsolation = defaultIsolation
        endpoint = try PostgreSQLEndpoint(url: url)
        limit =
            other?.limit
            ?? PostgreSQLConnectionLimit(
                maximum: configuration.maximumConnections,
                timeout: configuration.connectionTimeout,
                idleLimit: configuration.poolSize,
                server: endpoint.server
            )
        slot = limit.register()
    }

    /// Opens a new connection, outside the pool and its limit (the change listener's); for a
    /// store opened read-only, one whose transactions are all read-only
    /// (`default_transaction_read_only`), so that the server refuses any write sent on it.
    func connect(statementTimeout: Bool = true) throws -> PostgreSQLConnection {
        let connection = try PostgreSQLConnection(
            url: url,
            endpoint: endpoint,
            connectTimeout: configuration.connectTimeout,
            statementTimeout: statementTimeout ? configuration.statementTimeout : nil,
            defaultIsolation: defaultIsolation,
            transactionPooling: configuration.transactionPooling
        )
        connection.events = configuration.events
        configuration.events?.report(StoreEvent(.connectionOpened, backend: "PostgreSQL", location: endpoint.server))
        // Through a transaction pooler a session setting would stay on the server connection for
        // the next client: reads begin `READ ONLY` anyway, and writes are refused before sending.
        if configuration.readOnly, !configuration.transactionPooling {
            do {
                try connection.execute("SET default_transaction_read_only = on")
            } catch {
                connection.close()
                throw error
            }
        }
        return connection
    }

    /// An idle connection, or a new one while fewer than `maximumConnections` are open, or one
    /// that comes back within `connectionTimeout`.
    /// - Throws: `.closed` after `close()`, as every backend; `.unavailable` when the server
    ///   cannot be reached; `.busy` when `maximumConnections` are in use and none came free in
    ///   time (the message names the limit).
    func checkOut() throws -> PostgreSQLConnection {
        try limit.checkOut(slot: slot) { try connect() }
    }

    /// Returns a connection to the pool, or closes it (at once) when it is unusable or the pool
    /// full.
    func checkIn(_ connection: PostgreSQLConnection) {
        limit.checkIn(connection, slot: slot)
    }

    /// Closes every idle connection: after one was found broken, the others (opened to the
    /// same server) most likely are too.
    func discardIdleConnections() {
        limit.discardIdle(slot: slot)
    }

    /// Closes the idle connections; later check-outs throw `.closed`.
    func close() {
        limit.close()
    }
}
