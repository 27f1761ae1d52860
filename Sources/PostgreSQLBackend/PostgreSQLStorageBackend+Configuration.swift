public import Storage

extension PostgreSQLStorageBackend {
    /// How the PostgreSQL backend connects and runs transactions.
    ///
    /// ```swift
    /// let backend = try PostgreSQLStorageBackend(
    ///     url: "postgresql://app@db1/app",
    ///     configuration: .init(schema: "inventory", poolSize: 8, retryLimit: 20)
    /// )
    /// ```
    public struct Configuration: Sendable, Hashable {
        /// The isolation level of write transactions. Both lose no update: a transaction that
        /// would is aborted by the server and run again.
        public enum Isolation: String, Sendable, Hashable {
            /// `REPEATABLE READ`: snapshot isolation; lost updates are refused, write skew is not.
            case repeatableRead = "REPEATABLE READ"
            /// `SERIALIZABLE`: as if the transactions ran one after another.
            case serializable = "SERIALIZABLE"
        }

        /// The PostgreSQL schema the store's tables live in, created when missing; several stores
        /// can share one database in different schemas. Default: `public`.
        public var schema: String
        /// How many idle connections are kept open, per pool (the primary has two: one for
        /// single-record saves, one for everything else). More may be open at once while that
        /// many transactions run, up to `maximumConnections`; the extra ones are closed as soon
        /// as their transaction ends. Default: 4.
        public var poolSize: Int
        /// The most connections the store has open to one server at once (the primary's two
        /// pools together; each replica has as many of its own), idle or in use: however many
        /// threads, nested reads and callers run transactions, the store opens no more. A
        /// transaction that needs one more waits for one to come back, at most
        /// `connectionTimeout`, and then fails with `.busy` naming the limit. A read nested in
        /// another transaction needs a connection of its own, so nesting deeper than this
        /// (or this many threads each nesting) fails so too. The change listener's connection
        /// (`observesOtherProcesses`) is one more. Keep the sum over every process below the
        /// server's `max_connections`. Default: 16.
        public var maximumConnections: Int
        /// How long a transaction waits for a connection when `maximumConnections` are in use
        /// before it fails with `.busy`; not the time a connection takes to open
        /// (`connectTimeout`). Default: 10 seconds.
        public var connectionTimeout: Duration
        /// How long opening a connection may take before failing with `.unavailable` (libpq
        /// counts whole seconds, at least 2): per host of a multi-host URL, the next host being
        /// tried after a host that did not answer in time. Default: 10 seconds.
        public var connectTimeout: Duration
        /// How long a transaction keeps trying to connect while the server cannot be reached —
        /// down, restarting, or, with a multi-host URL and `target_session_attrs=read-write`, no
        /// host a primary yet (a failover under way) — before it fails with `.unavailable`: a
        /// new connection is tried every 100 ms meanwhile. A transaction whose connection was lost
        /// before its commit was sent runs again the same way (it did not commit); one lost after
        /// it throws `.connectionLost` (its outcome is unknown). Opening the store does not wait.
        /// Default: zero (fail at once).
        public var reconnectTimeout: Duration
        /// How long one statement may run before it is cancelled with `.timedOut` and its
        /// transaction rolled back; `nil` for the server's setting. Default: `nil`.
        public var statementTimeout: Duration?
        /// How many times a write transaction is run again after a serialization failure or a
        /// deadlock before the error (`.busy`) is thrown. Default: 50.
        public var retryLimit: Int
        /// After how many serialization failures or deadlocks in a row a write transaction runs
        /// again alone: it waits until the store's other write transactions have ended, keeps new
        /// ones waiting until it ends, and runs at `REPEATABLE READ`, so that no conflict with the
        /// store's other transactions fails it again — not even the false ones `SERIALIZABLE`
        /// reports while a long transaction runs anywhere on the server (see
        /// `docs/POSTGRESQL.md`, "Transactions that keep conflicting"). A single-record save
        /// never waits for it. `Int.max` never runs a transaction alone, and write transactions
        /// then take no lock for it (for engines without `LOCK TABLE`); every process writing one
        /// store must then say so. Default: 4.
        public var runAloneAfter: Int
        /// The isolation level of write transactions. Default: `.serializable`.
        public var isolation: Isolation
        /// Connection strings of streaming-replication standbys that reads may use. Default: none.
        public var replicaURLs: [String]
        /// How many records a writer buffers before it sends them in one `COPY` (at most 32 MB of
        /// them). Default: 10,000.
        public var batchSize: Int
        /// Whether the store listens for the commits of other processes and machines (one more
        /// connection, `LISTEN`), so that change streams and settings caches see them. The
        /// connection is opened when the store is first observed (its first change stream or
        /// settings read), not at open. Commits are recorded for other stores' listeners either
        /// way, while at least one store on the same schema listens (a commit made while none
        /// does records nothing). Default: `true`.
        public var observesOtherProcesses: Bool
        /// How long a change listener whose connection is gone (its process ended, or its
        /// connection lost) may stay silent before it counts as gone and the change rows it has
        /// not read may be deleted; a listener whose connection lives is never counted as gone.
        /// Listeners report their position every quarter of this (at most every 5 seconds), and
        /// rows every listener has read are deleted then; a listener cut off for longer than this
        /// may miss changes when it comes back. Default: 5 minutes.
        public var changeRetention: Duration
        /// Whether the store is opened read-only: opening runs no DDL (a schema that does not
        /// exist, or holds no store, is `StorageError.Code.cannotOpen`, and nothing is created),
        /// every connection runs `SET default_transaction_read_only = on`, so the server itself
        /// refuses any write, and every write throws `StorageError.Code.readOnly` before a
        /// statement is sent. A read-only store registers no change listener (that is a row
        /// written): its change streams see only what it committed (nothing), and its `Settings`
        /// reads are not cached, so they read the server every time. Default: `false`.
        public var readOnly: Bool
        /// Whether the URL leads to a pooler in transaction pooling mode (PgBouncer's
        /// `pool_mode = transaction`), which hands its server connections to another client
        /// after each transaction and keeps no session state: no statement is prepared by name
        /// (each is sent unnamed, parsed with its execution: a named one would outlive the
        /// transaction on a server connection another client then gets, `42P05`), no session
        /// setting is made (`statementTimeout` must then be `nil`: set `statement_timeout` on
        /// the role or the database instead), and a single saved record runs in a transaction of
        /// its own instead of one statement at the connection's default isolation. Change
        /// listening needs a session: set `listenURL` to a direct connection (or a session
        /// pooler), else the store does not listen for other processes' commits. Default: `false`.
        public var transactionPooling: Bool
        /// The connection string the change listener (`observesOtherProcesses`) connects with,
        /// when it differs from the store's URL: `LISTEN` and the listener's session lock need a
        /// connection of their own for the listener's life, which a transaction pooler does not
        /// give. `nil` for the store's URL. Default: `nil`.
        public var listenURL: String?
        /// Where the store reports its events (`StoreEvent`: retries, conflicts, slow
        /// statements, connections opened and lost), to this reporter's handler and to
        /// `ObjectStore.events(bufferingNewest:)`; `nil` for a reporter of the backend's own
        /// (streams only, no statement timed). Default: `nil`.
        public var events: StoreEventReporter?

        /// Creates a configuration; every parameter is the property of the same name.
        /// - Parameters:
        ///   - schema: the PostgreSQL schema of the store's tables.
        ///   - poolSize: how many idle connections are kept.
        ///   - maximumConnections: the most connections open to one server at once.
        ///   - connectionTimeout: how long a transaction waits for a connection at that limit.
        ///   - connectTimeout: how long opening a connection may take.
        ///   - reconnectTimeout: how long a transaction tries to connect to a server out of reach.
        ///   - statementTimeout: how long one statement may run, or `nil`.
        ///   - retryLimit: how many times a conflicting write transaction runs again.
        ///   - runAloneAfter: after how many conflicts in a row it runs again alone.
        ///   - isolation: the isolation level of write transactions.
        ///   - replicaURLs: standbys that reads may use.
        ///   - batchSize: records per `COPY` when writing.
        ///   - observesOtherProcesses: whether the store listens for other processes' commits.
        ///   - changeRetention: how long a silent change listener is waited for.
        ///   - readOnly: whether the store is only read.
        ///   - transactionPooling: whether the URL leads to a pooler in transaction pooling mode.
        ///   - listenURL: the connection string of the change listener, or `nil` for the URL.
        ///   - events: where the store reports its events, or `nil` for a reporter of its own.
        public init(
            schema: String = "public",
            poolSize: Int = 4,
            maximumConnections: Int = 16,
            connectionTimeout: Duration = .seconds(10),
            connectTimeout: Duration = .seconds(10),
            reconnectTimeout: Duration = .zero,
            statementTimeout: Duration? = nil,
            retryLimit: Int = 50,
            runAloneAfter: Int = 4,
            isolation: Isolation = .serializable,
            replicaURLs: [String] = [],
            batchSize: Int = 10_000,
            observesOtherProcesses: Bool = true,
            changeRetention: Duration = .seconds(300),
            readOnly: Bool = false,
            transactionPooling: Bool = false,
            listenURL: String? = nil,
            events: StoreEventReporter? = nil
        ) {
            self.events = events
            self.readOnly = readOnly
            self.transactionPooling = transactionPooling
            self.listenURL = listenURL
            self.observesOtherProcesses = observesOtherProcesses
            self.changeRetention = changeRetention
            self.schema = schema
            self.poolSize = poolSize
            self.maximumConnections = maximumConnections
            self.connectionTimeout = connectionTimeout
            self.connectTimeout = connectTimeout
            self.reconnectTimeout = reconnectTimeout
            self.statementTimeout = statementTimeout
            self.retryLimit = retryLimit
            self.runAloneAfter = runAloneAfter
            self.isolation = isolation
            self.replicaURLs = replicaURLs
            self.batchSize = batchSize
        }
    }
}
