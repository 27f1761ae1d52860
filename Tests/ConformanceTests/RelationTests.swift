import Storage
import StorageTestSupport
import Testing

/// The relation checks alone (also in `ConformanceSuite.checks`; `conformance` leaves them to this
/// test), so that they can be run by name: `swift test --filter relationConformance`.
@Test(.dedicatedThreads, arguments: fixtures, ConformanceSuite.relationChecks)
func relationConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) throws {
    try check.run(fixture)
}

/// The asynchronous relation checks alone (also in `ConformanceSuite.asyncChecks`).
@Test(.timeLimit(.minutes(10)), arguments: fixtures, ConformanceSuite.relationAsyncChecks)
func relationAsyncConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) async throws {
    try await check.run(fixture)
}
