import Foundation

/// The fixture files of `Tests/Fixtures` (see `Tests/Fixtures/README.md`), for this target's
/// tests. Their check on every backend is the conformance suite's
/// (`Sources/StorageTestSupport/ConformanceSuite+FixtureData.swift`).
enum FixtureDataTests {
    /// The public-domain airport list.
    static let airportsFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/airports.csv")
}
