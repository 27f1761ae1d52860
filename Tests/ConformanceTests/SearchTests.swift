import Storage
import StorageTestSupport
import Testing

/// The full-text search checks alone (they are also in `ConformanceSuite.checks`), so that they
/// can be run by name: `swift test --filter searchConformance`.
@Test(.dedicatedThreads, arguments: fixtures, ConformanceSuite.searchChecks)
func searchConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) throws {
    try check.run(fixture)
}

/// The asynchronous search checks alone (also in `ConformanceSuite.asyncChecks`).
@Test(.timeLimit(.minutes(10)), arguments: fixtures, ConformanceSuite.searchAsyncChecks)
func searchAsyncConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) async throws {
    try await check.run(fixture)
}
