import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import FileArchiveBackend

/// Two crash-writer processes commit batches to one store at the same time: `flock` makes them
/// take turns, each reloads what the other committed, and the store ends whole.
@Test(.dedicatedThreads) func twoProcessesWritingOneStoreTakeTurns() throws {
    try TemporaryDirectory.with("archive-processes") { directory in
        let path = directory.appendingPathComponent("shared.archive").path
        let batchSize = 5
        let writers = (0..<2).map { _ in
            let process = Process()
            process.executableURL = CrashHarness.executable
            process.arguments = [
                "--backend", "archive", "--path", path, "--batch-size", "\(batchSize)", "--batches", "25",
            ]
            let output = Pipe()
            process.standardOutput = output
            return (process, output)
        }
        for (process, _) in writers { try process.run() }
        for (process, output) in writers {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(text)")
            #expect(text.split(separator: "\n").filter { $0.hasPrefix("ack ") }.count == 25, "\(text)")
        }
        let store = try ObjectStore(backend: .fileArchive(directory: path))
        let records = try store.fetchAll(CrashRecord.self)
        let batches = Dictionary(grouping: records, by: \.batch)
        let highest = try #require(batches.keys.max())
        // Every batch from 1 to the highest is whole and intact, whichever process wrote it.
        #expect(highest >= 25)
        #expect(batches.count == Int(highest))
        for (batch, members) in batches {
            #expect(members.count == batchSize)
            #expect(
                members.allSatisfy { $0 == CrashRecord(id: $0.id, batch: batch) && $0.id / Int64(batchSize) == batch }
            )
        }
        let leftovers = FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []
        #expect(!leftovers.contains { $0 == "journal" || $0.contains(".tmp-") }, "\(leftovers)")
    }
}
