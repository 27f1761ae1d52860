public import Storage

extension StorageBackend where Self == FileArchiveStorageBackend {
    /// A file archive: a folder per collection and a file per record, created when missing
    /// (unless `configuration.readOnly`).
    ///
    /// ```swift
    /// let store = try ObjectStore(backend: .fileArchive(directory: "Store"))
    /// ```
    /// - Parameters:
    ///   - directory: the store folder; its parent must exist.
    ///   - configuration: how the store is used, such as how long to wait for another
    ///     process's lock.
    /// - Returns: the backend.
    /// - Throws: `StorageError` when the folder cannot be created or a file of it is damaged,
    ///   or `.busy` when another process holds the store's lock past the configured timeout.
    public static func fileArchive(
        directory: String,
        configuration: FileArchiveStorageBackend.Configuration = .init()
    ) throws -> FileArchiveStorageBackend {
        try FileArchiveStorageBackend(directory: directory, configuration: configuration)
    }
}
