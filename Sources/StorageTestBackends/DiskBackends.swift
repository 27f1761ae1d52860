import FileArchiveBackend
package import Foundation
import LMDBBackend
import PostgreSQLBackend
import SQLiteBackend
package import Storage
package import StorageTestSupport

/// The package's persistent backends, by the names the tests, the crash writer and the benchmarks
/// use: `sqlite`, `lmdb`, `archive` and `postgresql`.
///
/// `allCases` are the engines that keep their store in files, which the reliability tests of
/// files (permissions, full disks, corruption, system-call order, fork) run on; `everyCase` adds
/// the PostgreSQL server, on which the conformance, observation and settings tests also run.
package enum DiskBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case lmdb
    case archive
    /// A schema of its own, per test folder, on the tests' PostgreSQL server
    /// (`PostgreSQLTestServer`).
    case postgresql

    /// The engines that keep their store in files.
    package static var allCases: [DiskBackend] { [.sqlite, .lmdb, .archive] }

    /// Every persistent backend, the PostgreSQL server included.
    package static var everyCase: [DiskBackend] { allCases + [.postgresql] }

    /// The backend's name, as `--backend` and test reports spell it.
    package var description: String { rawValue }

    /// The store's path inside a test folder: a file for SQLite and LMDB, a folder for archives.
    package func storePath(in directory: URL) -> String {
        switch self {
        case .sqlite: directory.appendingPathComponent("store.sqlite").path
        case .lmdb: directory.appendingPathComponent("store.lmdb").path
        case .archive: directory.appendingPathComponent("store.archive").path
        case .postgresql: directory.appendingPathComponent("store.postgresql").path
        }
    }

    /// Opens (or reopens) the store at `path` with the backend's default configuration.
    package func openStore(path: String) throws -> ObjectStore {
        switch self {
        case .sqlite: try ObjectStore(backend: .sqlite(path: path))
        case .lmdb: try ObjectStore(backend: .lmdb(path: path))
        case .archive: try ObjectStore(backend: .fileArchive(directory: path))
        case .postgresql: try PostgreSQLTestServer.openStore(path: path)
        }
    }

    /// Opens (or reopens) the store at `path` reporting its events to `events`, otherwise with
    /// the backend's default configuration.
    package func openStore(path: String, events: StoreEventReporter) throws -> ObjectStore {
        switch self {
        case .sqlite: try ObjectStore(backend: .sqlite(path: path, configuration: .init(events: events)))
        case .lmdb: try ObjectStore(backend: .lmdb(path: path, configuration: .init(events: events)))
        case .archive: try ObjectStore(backend: .fileArchive(directory: path, configuration: .init(events: events)))
        case .postgresql:
            try PostgreSQLTestServer.openStore(path: path, configuration: .init(poolSize: 2, events: events))
        }
    }

    /// The conformance fixture for this backend: the store lives at `storePath(in:)`.
    package var fixture: BackendFixture {
        let backend = self
        return BackendFixture(rawValue) { directory in
            try backend.openStore(path: backend.storePath(in: directory))
        }
    }
}

extension BackendFixture {
    /// Every persistent backend of the package, the PostgreSQL server included.
    package static let onDisk: [BackendFixture] = DiskBackend.everyCase.map(\.fixture)
}
