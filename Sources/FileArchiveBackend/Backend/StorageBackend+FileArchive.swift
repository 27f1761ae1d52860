public import Storage

extension StorageBackend where Self == FileArchiveStorageBackend {
    /// A file archive: a folder per collection and a file per record, created when missing.
    ///
    /// ```swift
    /// let store = try ObjectStore(backend: .fileArchive(directory: "Store"))
    /// ```
    /// - Parameter directory: the store folder; its parent must exist.
    /// - Returns: the backend.
    /// - Throws: `StorageError` when the folder cannot be created or a file of it is damaged.
    public static func fileArchive(directory: String) throws -> FileArchiveStorageBackend {
        try FileArchiveStorageBackend(directory: directory)
    }
}
