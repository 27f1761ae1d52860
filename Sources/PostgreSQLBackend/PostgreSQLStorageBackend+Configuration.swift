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
        /// How many idle connections are kept open. More may be open at once while that many
        /// transactions run; the extra ones are closed after use. Default: 4.
        public var poolSize: Int
        /// How long opening a connection may take before failing with `.unavailable` (libpq
        /// counts whole seconds, at least 2). Default: 10 seconds.
        public var connectTimeout: Duration
        /// How long one statement may run before it is cancelled with `.timedOut` and its
        /// transaction rolled back; `nil` for the server's setting. Default: `nil`.
        public var statementTimeout: Duration?
        /// How many times a write transaction is run again after a serialization failure or a
        /// deadlock before the error (`.busy`) is thrown. Default: 50.
        public var retryLimit: Int
        /// The isolation level of write transactions. Default: `.serializable`.
        public var isolation: Isolation
        /// Connection strings of streaming-replication standbys that reads may use. Default: none.
        public var replicaURLs: [String]
        /// How many records a writer buffers before it sends them in one statement. Default: 2,000.
        public var batchSize: Int
        /// Whether the store listens for the commits of other processes and machines (one more
        /// connection, `LISTEN`), so that change streams and settings caches see them. Commits are
        /// recorded for other listeners either way. Default: `true`.
        public var observesOtherProcesses: Bool

        /// Creates a configuration.
        /// - Parameters:
        ///   - schema: ``schema``.
        ///   - poolSize: ``poolSize``.
        ///   - connectTimeout: ``connectTimeout``.
        ///   - statementTimeout: ``statementTimeout``.
        ///   - retryLimit: ``retryLimit``.
        ///   - isolation: ``isolation``.
        ///   - replicaURLs: ``replicaURLs``.
        ///   - batchSize: ``batchSize``.
        ///   - observesOtherProcesses: ``observesOtherProcesses``.
        public init(
            schema: String = "public",
            poolSize: Int = 4,
            connectTimeout: Duration = .seconds(10),
            statementTimeout: Duration? = nil,
            retryLimit: Int = 50,
            isolation: Isolation = .serializable,
            replicaURLs: [String] = [],
            batchSize: Int = 2_000,
            observesOtherProcesses: Bool = true
        ) {
            self.observesOtherProcesses = observesOtherProcesses
            self.schema = schema
            self.poolSize = poolSize
            self.connectTimeout = connectTimeout
            self.statementTimeout = statementTimeout
            self.retryLimit = retryLimit
            self.isolation = isolation
            self.replicaURLs = replicaURLs
            self.batchSize = batchSize
        }
    }
}
