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
    ///   `.cannotOpen` when the string cannot be used (not parsed, an invalid value) or the
    ///   server refuses the connection, `.permissionDenied` when it refuses the password or the
    ///   role, or the role may not create or use the store's schema. No message quotes the
    ///   string.
    public static func postgreSQL(
        url: String,
        configuration: PostgreSQLStorageBackend.Configuration = .init()
    ) throws -> PostgreSQLStorageBackend {
        try PostgreSQLStorageBackend(url: url, configuration: configuration)
    }
}

extension PostgreSQLStorageBackend {
    /// Whether `text` is meant as a PostgreSQL connection string: a `postgresql://` or
    /// `postgres://` URI, or `key=value` pairs with a key libpq knows (`host=db dbname=app`).
    /// For the `storage` command, which must never take one for a path and print it back.
    package static func isConnectionString(_ text: String) -> Bool {
        PostgreSQLEndpoint.looksLikeConnectionString(text)
    }

    /// The user, server and database `url` names, as `postgresql://user@host:port/database`:
    /// never its password.
    /// - Throws: `StorageError` with code `.cannotOpen` when the string cannot be used, saying
    ///   why without quoting it.
    package static func describe(url: String) throws -> String {
        try PostgreSQLEndpoint(url: url).description
    }
}
