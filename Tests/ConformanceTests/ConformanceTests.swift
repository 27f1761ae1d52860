import FileArchiveBackend
import Foundation
import LMDBBackend
import SQLiteBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Every backend the package has.
let fixtures: [BackendFixture] = [.inMemory] + BackendFixture.onDisk

@Test(.dedicatedThreads, arguments: fixtures, ConformanceSuite.checks)
func conformance(_ fixture: BackendFixture, _ check: ConformanceCheck) throws {
    try check.run(fixture)
}
