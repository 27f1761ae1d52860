import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// A child process committing batches is killed with SIGKILL at random moments; after each kill
/// the database holds every acknowledged batch, whole, and at most one batch more.
@Test func killedWriterLosesNoCommittedBatch() throws {
    try TemporaryDirectory.with("sqlite-crash") { directory in
        let path = directory.appendingPathComponent("crash.sqlite").path
        var generator = SystemRandomNumberGenerator()
        var committed: Int64 = 0
        for _ in 0..<20 {
            let acknowledged = try CrashHarness.runAndKill(
                backend: "sqlite",
                path: path,
                batchSize: 20,
                using: &generator
            )
            #expect(acknowledged > committed)
            let store = try ObjectStore(backend: .sqlite(path: path))
            committed = try CrashWorkload.verify(store, batchSize: 20, acknowledged: max(acknowledged, committed))
        }
        #expect(try sqliteShell(path, "PRAGMA integrity_check;") == "ok")
    }
}
