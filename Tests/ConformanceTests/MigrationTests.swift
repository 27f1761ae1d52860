import Storage
import StorageTestSupport
import Testing

/// The migration checks, with references (they are also in `ConformanceSuite.checks`, and
/// `conformance` leaves them to this test), so that they can be run by name:
/// `swift test --filter migrationConformance`.
@Test(
    .dedicatedThreads,
    arguments: fixtures,
    ConformanceSuite.migrationChecks + ConformanceSuite.migrationReferenceChecks
)
func migrationConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) throws {
    try check.run(fixture)
}

/// The asynchronous migration checks alone (also in `ConformanceSuite.asyncChecks`).
@Test(.timeLimit(.minutes(10)), arguments: fixtures, ConformanceSuite.migrationAsyncChecks)
func migrationAsyncConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) async throws {
    try await check.run(fixture)
}
