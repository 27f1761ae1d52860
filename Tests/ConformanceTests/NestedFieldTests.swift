import Storage
import StorageTestSupport
import Testing

/// The nested-field checks alone (also in `ConformanceSuite.checks`; `conformance` leaves them to this
/// test), so that they can be run by name: `swift test --filter nestedFieldConformance`.
@Test(.dedicatedThreads, arguments: fixtures, ConformanceSuite.nestedFieldChecks)
func nestedFieldConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) throws {
    try check.run(fixture)
}

/// The asynchronous nested-field checks alone (also in `ConformanceSuite.asyncChecks`).
@Test(.timeLimit(.minutes(10)), arguments: fixtures, ConformanceSuite.nestedFieldAsyncChecks)
func nestedFieldAsyncConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) async throws {
    try await check.run(fixture)
}
