import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import FileArchiveBackend

/// A child process committing batches to a file archive is killed with SIGKILL at random
/// moments; after each kill the reopened store holds every acknowledged batch, whole, at most one
/// batch more, and no journal or temporary file.
@Test func killedWriterLosesNoCommittedBatch() throws {
    try TemporaryDirectory.with("archive-crash") { directory in
        let path = directory.appendingPathComponent("crash.archive").path
        var generator = SystemRandomNumberGenerator()
        var committed: Int64 = 0
        for _ in 0..<20 {
            let acknowledged = try CrashHarness.runAndKill(
                backend: "archive",
                path: path,
                batchSize: 20,
                using: &generator
            )
            #expect(acknowledged > committed)
            let store = try ObjectStore(backend: .fileArchive(directory: path))
            committed = try CrashWorkload.verify(store, batchSize: 20, acknowledged: max(acknowledged, committed))
            let leftovers = FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []
            #expect(!leftovers.contains { $0 == "journal" || $0.contains(".tmp-") }, "\(leftovers)")
        }
        #expect(committed >= 20)
    }
}
