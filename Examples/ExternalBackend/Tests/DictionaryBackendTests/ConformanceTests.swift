import DictionaryBackend
import Foundation
import Storage
import StorageTestSupport
import Testing

/// The dictionary backend, opened by folder: reopening a folder gives back its data.
let dictionary = BackendFixture("dictionary") { directory in
    ObjectStore(backend: DictionaryStorageBackend.named(directory.path))
}

/// Every check of swift-storage's conformance suite, synchronous and asynchronous (the store's
/// async API, streams, closing, observation, settings), on a backend built outside that package.
@Test(arguments: [dictionary], ConformanceSuite.allChecks)
func conformance(_ fixture: BackendFixture, _ check: ConformanceCheck) async throws {
    try await check.run(fixture)
}
