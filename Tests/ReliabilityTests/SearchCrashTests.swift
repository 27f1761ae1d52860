import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// A kill -9 during bulk saves of records with a full-text index leaves the index and the
/// records in step: after each kill, every query finds exactly the records fetch finds holding
/// its words, in the reference's BM25 order (so the statistics are in step too).
@Test(.dedicatedThreads, arguments: DiskBackend.allCases)
func killedSearchWriterLeavesIndexAndRecordsInStep(_ backend: DiskBackend) throws {
    try TemporaryDirectory.with("search-crash-\(backend)") { directory in
        let path = backend.storePath(in: directory)
        var acknowledged: Int64 = 0
        for round in 0..<4 {
            let process = Process()
            process.executableURL = CrashHarness.executable
            process.arguments = ["--backend", backend.rawValue, "--path", path, "--workload", "search"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let reader = output.fileHandleForReading
            var received = Data()
            while !received.contains(UInt8(ascii: "\n")) {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                received.append(chunk)
            }
            usleep(UInt32(20_000 + round * 37_000))
            kill(process.processIdentifier, SIGKILL)
            received.append(reader.readDataToEndOfFile())
            process.waitUntilExit()
            let lines = String(decoding: received, as: UTF8.self).split(separator: "\n")
            #expect(!lines.contains { $0.hasPrefix("error") }, "\(lines)")
            let last = lines.compactMap { $0.hasPrefix("ack ") ? Int64($0.dropFirst(4)) : nil }.max() ?? 0
            #expect(last > acknowledged, "round \(round) acknowledged no new batch")
            acknowledged = last
            let store = try backend.openStore(path: path)
            let batches = try store.fetchAll(SearchCrashRecord.self).map(\.batch)
            #expect((batches.max() ?? 0) >= last, "an acknowledged batch is missing")
            let problems = try SearchCrashWorkload.problems(in: store)
            #expect(problems.isEmpty, "\(problems)")
            try store.close()
        }
    }
}
