import FileArchiveBackend
import Foundation
import LMDBBackend
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// Every backend the package has.
let fixtures: [BackendFixture] = [
    .inMemory,
    BackendFixture("sqlite") { directory in
        try ObjectStore(backend: .sqlite(path: directory.appendingPathComponent("store.sqlite").path))
    },
    BackendFixture("lmdb") { directory in
        try ObjectStore(backend: .lmdb(path: directory.appendingPathComponent("store.lmdb").path))
    },
    BackendFixture("archive") { directory in
        try ObjectStore(backend: .fileArchive(directory: directory.appendingPathComponent("store.archive").path))
    },
]

@Test(arguments: fixtures, ConformanceSuite.checks)
func conformance(_ fixture: BackendFixture, _ check: ConformanceCheck) throws {
    try check.run(fixture)
}
