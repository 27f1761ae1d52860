import Foundation
import LMDBBackend
import Storage
import StorageTestSupport
import Testing

/// A child process committing batches to an LMDB store is killed with SIGKILL at random moments;
/// after each kill the store holds every acknowledged batch, whole, and at most one batch more.
@Test func killedLMDBWriterLosesNoCommittedBatch() throws {
    try TemporaryDirectory.with("lmdb-crash") { directory in
        let path = directory.appendingPathComponent("crash.lmdb").path
        var generator = SystemRandomNumberGenerator()
        var committed: Int64 = 0
        for _ in 0..<20 {
            let acknowledged = try CrashHarness.runAndKill(
                backend: "lmdb",
                path: path,
                batchSize: 20,
                using: &generator
            )
            #expect(acknowledged > committed)
            // A fresh environment each round: the killed writer's reader slots and lock are
            // cleaned up when the store is opened (mdb_reader_check).
            let store = try ObjectStore(backend: .lmdb(path: path))
            committed = try CrashWorkload.verify(store, batchSize: 20, acknowledged: max(acknowledged, committed))
        }
    }
}
