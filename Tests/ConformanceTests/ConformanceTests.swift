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

/// The names of the checks that have tests of their own, to run by name (`NestedFieldTests`,
/// `RelationTests`, `MigrationTests`): left out of `conformance` and `asyncConformance`, so that
/// `swift test` runs each check once.
let checksRunByName: Set<String> = Set(
    (ConformanceSuite.nestedFieldChecks + ConformanceSuite.nestedFieldAsyncChecks + ConformanceSuite.relationChecks
        + ConformanceSuite.relationAsyncChecks + ConformanceSuite.migrationChecks
        + ConformanceSuite.migrationReferenceChecks + ConformanceSuite.migrationAsyncChecks).map(\.name)
)

/// The synchronous checks, on threads of their own: they block (threads of their own, waits).
@Test(.dedicatedThreads, arguments: fixtures, ConformanceSuite.checks.filter { !checksRunByName.contains($0.name) })
func conformance(_ fixture: BackendFixture, _ check: ConformanceCheck) throws {
    try check.run(fixture)
}

/// The asynchronous checks (the store's async API, observation, settings), on Swift's pool. The
/// time limit only stops a hang: Swift Testing counts it from when the test case starts, and a
/// case can then wait for one of Swift's cooperative threads (one per core) behind other tests.
@Test(
    .timeLimit(.minutes(10)),
    arguments: fixtures,
    ConformanceSuite.asyncChecks.filter { !checksRunByName.contains($0.name) }
)
func asyncConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) async throws {
    try await check.run(fixture)
}
