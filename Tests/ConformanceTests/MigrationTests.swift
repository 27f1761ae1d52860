import Storage
import StorageTestSupport
import Testing

/// The migration checks alone (they are also in `ConformanceSuite.checks`), so that they can be
/// run by name: `swift test --filter migrationConformance`.
@Test(.dedicatedThreads, arguments: fixtures, ConformanceSuite.migrationChecks)
func migrationConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) throws {
    try check.run(fixture)
}

/// The asynchronous migration checks alone (also in `ConformanceSuite.asyncChecks`).
@Test(.timeLimit(.minutes(10)), arguments: fixtures, ConformanceSuite.migrationAsyncChecks)
func migrationAsyncConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) async throws {
    try await check.run(fixture)
}
