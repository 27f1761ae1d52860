public import Storage

extension StorageBackend where Self == PostgreSQLStorageBackend {
    /// A PostgreSQL database, shared by every process and machine that opens it.
    ///
    /// ```swift
    /// let store = try ObjectStore(backend: .postgreSQL(url: "postgresql://app@db1:5432/app"))
    /// ```
    /// - Parameters:
    ///   - url: anything libpq accepts: a `postgresql://` URI or `key=value` pairs, so TLS
    ///     (`sslmode=verify-full`), password files and service files work as usual.
    ///   - configuration: the schema, pool, timeouts, retries and replicas.
    /// - Returns: the backend.
    /// - Throws: `StorageError` with code `.unavailable` when the server cannot be reached,
    ///   `.cannotOpen` when it refuses the connection, `.permissionDenied` when the role may not
    ///   create or use the store's schema.
    public static func postgreSQL(
        url: String,
        configuration: PostgreSQLStorageBackend.Configuration = .init()
    ) throws -> PostgreSQLStorageBackend {
        try PostgreSQLStorageBackend(url: url, configuration: configuration)
    }
}
