import DictionaryBackend
import Foundation
import Storage
import StorageTestSupport
import Testing

/// The dictionary backend, opened by folder: reopening a folder gives back its data.
let dictionary = BackendFixture("dictionary") { directory in
    ObjectStore(backend: DictionaryStorageBackend.named(directory.path))
}

/// Every synchronous check of swift-storage's conformance suite, on a backend built outside that
/// package.
@Test(arguments: [dictionary], ConformanceSuite.checks)
func conformance(_ fixture: BackendFixture, _ check: ConformanceCheck) throws {
    try check.run(fixture)
}

/// Every asynchronous check: the store's async API, streams, closing, observation and settings.
@Test(.timeLimit(.minutes(10)), arguments: [dictionary], ConformanceSuite.asyncChecks)
func asyncConformance(_ fixture: BackendFixture, _ check: ConformanceCheck) async throws {
    try await check.run(fixture)
}
