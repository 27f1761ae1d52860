import Storage
import StorageTestSupport
import Testing

/// The nested-field checks alone (they are also in `ConformanceSuite.checks`), so that they can
/// be run by name: `swift test --filter nestedFieldConformance`.
@Test(.dedicatedThreads, arguments: fixtures, ConformanceSuite.nestedFieldChecks)
func nestedFieldConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) throws {
    try check.run(fixture)
}
