public import Storage

extension StorageBackend where Self == LMDBStorageBackend {
    /// An LMDB store file, created (mode 0600) when missing (unless `configuration.readOnly`),
    /// with its lock file beside it (`path` + `-lock`).
    ///
    /// ```swift
    /// let store = try ObjectStore(backend: .lmdb(path: "app.lmdb"))
    /// ```
    /// - Parameters:
    ///   - path: the store file's path.
    ///   - configuration: how the environment is opened and used.
    /// - Returns: the backend.
    /// - Throws: `StorageError` when the file cannot be created or opened.
    public static func lmdb(
        path: String,
        configuration: LMDBStorageBackend.Configuration = .init()
    ) throws -> LMDBStorageBackend {
        try LMDBStorageBackend(path: path, configuration: configuration)
    }
}
