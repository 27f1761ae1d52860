import FileArchiveBackend
import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// Every backend the package has; LMDB joins here.
let fixtures: [BackendFixture] = [
    .inMemory,
    BackendFixture("sqlite") { directory in
        try ObjectStore(backend: .sqlite(path: directory.appendingPathComponent("store.sqlite").path))
    },
    BackendFixture("archive") { directory in
        try ObjectStore(backend: .fileArchive(directory: directory.appendingPathComponent("store.archive").path))
    },
]

@Test(arguments: fixtures, ConformanceSuite.checks)
func conformance(_ fixture: BackendFixture, _ check: ConformanceCheck) throws {
    try check.run(fixture)
}
