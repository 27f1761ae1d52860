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
        let committed = try CrashHarness.killRepeatedly(backend: "sqlite", path: path) {
            try ObjectStore(backend: .sqlite(path: $0))
        }
        #expect(committed >= 20)
        #expect(try sqliteShell(path, "PRAGMA integrity_check;") == "ok")
    }
}
