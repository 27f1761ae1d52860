public import Storage

extension StorageBackend where Self == SQLiteStorageBackend {
    /// An SQLite database file, created when missing (unless `configuration.readOnly`).
    ///
    /// ```swift
    /// let store = try ObjectStore(backend: .sqlite(path: "app.sqlite"))
    /// ```
    /// - Parameters:
    ///   - path: the database file's path.
    ///   - configuration: how the database is opened and used.
    /// - Returns: the backend.
    /// - Throws: `StorageError` when the file cannot be created or opened.
    public static func sqlite(
        path: String,
        configuration: SQLiteStorageBackend.Configuration = .init()
    ) throws -> SQLiteStorageBackend {
        try SQLiteStorageBackend(path: path, configuration: configuration)
    }

    /// A private in-memory SQLite database, gone when the backend is released.
    /// - Returns: the backend.
    /// - Throws: `StorageError` when SQLite cannot open it.
    public static func sqliteInMemory() throws -> SQLiteStorageBackend {
        try SQLiteStorageBackend.inMemory()
    }
}
