import FileArchiveBackend
public import Foundation
import LMDBBackend
import SQLiteBackend
public import Storage
public import StorageTestSupport

/// The package's on-disk backends, by the names the tests, the crash writer and the benchmarks
/// use: `sqlite`, `lmdb` and `archive`.
public enum DiskBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case lmdb
    case archive

    public var description: String { rawValue }

    /// The store's path inside a test folder: a file for SQLite and LMDB, a folder for archives.
    public func storePath(in directory: URL) -> String {
        switch self {
        case .sqlite: directory.appendingPathComponent("store.sqlite").path
        case .lmdb: directory.appendingPathComponent("store.lmdb").path
        case .archive: directory.appendingPathComponent("store.archive").path
        }
    }

    /// Opens (or reopens) the store at `path` with the backend's default configuration.
    public func openStore(path: String) throws -> ObjectStore {
        switch self {
        case .sqlite: try ObjectStore(backend: .sqlite(path: path))
        case .lmdb: try ObjectStore(backend: .lmdb(path: path))
        case .archive: try ObjectStore(backend: .fileArchive(directory: path))
        }
    }

    /// The conformance fixture for this backend: the store lives at `storePath(in:)`.
    public var fixture: BackendFixture {
        let backend = self
        return BackendFixture(rawValue) { directory in
            try backend.openStore(path: backend.storePath(in: directory))
        }
    }
}

extension BackendFixture {
    /// Every on-disk backend of the package.
    public static let onDisk: [BackendFixture] = DiskBackend.allCases.map(\.fixture)
}
