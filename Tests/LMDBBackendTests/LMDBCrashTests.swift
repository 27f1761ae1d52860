import Foundation
import LMDBBackend
import Storage
import StorageTestSupport
import Testing

/// The writer runs with a file-size limit, so a commit fails writing its pages (EFBIG): the
/// failure is reported as an error instead of an acknowledged commit, the process ends normally
/// (the failed transaction is not aborted a second time), and the store still holds every
/// acknowledged batch and nothing of the failed one.
@Test(.dedicatedThreads) func aFailedCommitIsReportedAndLosesNothingCommitted() throws {
    try TemporaryDirectory.with("lmdb-commit-failure") { directory in
        let path = directory.appendingPathComponent("limited.lmdb").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // An ignored SIGXFSZ stays ignored across exec, so a write past the limit fails instead.
        process.arguments = [
            "-c",
            "trap '' XFSZ; ulimit -f 2048; exec \"$0\" --backend lmdb --path \"$1\" --batch-size 20 --batches 3000",
            CrashHarness.executable.path, path,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n")
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 1)
        let failure = try #require(lines.last)
        #expect(failure.hasPrefix("error") && failure.contains("cannot commit"), "\(failure)")
        let acknowledged = lines.compactMap { $0.hasPrefix("ack ") ? Int64($0.dropFirst(4)) : nil }.max() ?? 0
        #expect(acknowledged > 0)
        let store = try ObjectStore(backend: .lmdb(path: path))
        #expect(try CrashWorkload.verify(store, batchSize: 20, acknowledged: acknowledged) == acknowledged)
    }
}
