import FileArchiveBackend
package import Foundation
import LMDBBackend
import PostgreSQLBackend
import SQLiteBackend
package import Storage

extension DiskBackend {
    /// Opens the store at `path` with the backend's default configuration and `readOnly` set:
    /// a read-only store must exist already (the PostgreSQL store: its schema, named after the
    /// test folder as `openStore(path:)` names it).
    /// - Parameters:
    ///   - path: the store's path inside a test folder (`storePath(in:)`).
    ///   - readOnly: whether the store is opened read-only.
    /// - Returns: the store.
    /// - Throws: what opening the backend throws.
    package func openStore(path: String, readOnly: Bool) throws -> ObjectStore {
        switch self {
        case .sqlite: try ObjectStore(backend: .sqlite(path: path, configuration: .init(readOnly: readOnly)))
        case .lmdb: try ObjectStore(backend: .lmdb(path: path, configuration: .init(readOnly: readOnly)))
        case .archive:
            try ObjectStore(backend: .fileArchive(directory: path, configuration: .init(readOnly: readOnly)))
        case .postgresql:
            try PostgreSQLTestServer.openStore(path: path, configuration: .init(poolSize: 2, readOnly: readOnly))
        }
    }
}

/// What a test folder holds, file by file: each file's bytes and modification time, and each
/// folder, by path relative to the folder. Two equal fingerprints mean nothing under the folder
/// was created, removed, written or touched in between.
package struct FolderFingerprint: Equatable, CustomStringConvertible, Sendable {
    /// Per relative path: the file's bytes (`nil` for a folder) and its modification time, in
    /// nanoseconds.
    package let entries: [String: Entry]

    /// One file or folder of the fingerprint.
    package struct Entry: Equatable, Sendable {
        /// The file's bytes; `nil` for a folder.
        package let bytes: Data?
        /// The modification time in nanoseconds since 1970.
        package let modified: Int64
    }

    /// The fingerprint of everything under `directory`, except the files whose names end with
    /// one of `ignoredSuffixes` (an engine's shared-memory or lock files, which readers write by
    /// design).
    /// - Parameters:
    ///   - directory: the folder.
    ///   - ignoredSuffixes: the name endings left out.
    /// - Throws: the file manager's error when the folder cannot be read.
    package init(of directory: URL, ignoring ignoredSuffixes: [String] = []) throws {
        var entries: [String: Entry] = [:]
        let manager = FileManager.default
        let root = directory.path
        guard let walker = manager.enumerator(atPath: root) else {
            self.entries = [:]
            return
        }
        for case let relative as String in walker where !ignoredSuffixes.contains(where: relative.hasSuffix) {
            let path = root + "/" + relative
            var status = stat()
            guard lstat(path, &status) == 0 else { continue }
            let modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
            let isFolder = status.st_mode & S_IFMT == S_IFDIR
            entries[relative] = Entry(
                bytes: isFolder ? nil : try Data(contentsOf: URL(fileURLWithPath: path)),
                modified: modified
            )
        }
        self.entries = entries
    }

    /// The paths, each with its size (or `/` for a folder), sorted.
    package var description: String {
        entries.keys.sorted().map { "\($0) (\(entries[$0]!.bytes.map { "\($0.count) bytes" } ?? "/"))" }
            .joined(separator: ", ")
    }
}
