import Foundation
import LMDBBackend
import Storage
import StorageTestSupport
import Testing

/// Issue 17: a bulk load in another process that grows the LMDB map several times, read all the
/// while by this process, which must adopt each grown map and see only committed snapshots.
@Suite(.dedicatedThreads) struct LMDBBulkLoadProcessTests {
    /// The bulk-load workload's records (Sources/StorageCrashWriter/BulkLoadWorkload.swift).
    struct LoadBulkRow: Codable, Equatable {
        var id: Int64
        var batch: Int64
        var text: String

        static func make(_ id: Int64, batch: Int64) -> LoadBulkRow {
            LoadBulkRow(id: id, batch: batch, text: "row \(id) " + String(repeating: "abcdefgh", count: Int(id % 7)))
        }
    }

    static let batches = 6
    static let firstBatch = 1_000

    /// The records committed after each batch: a snapshot may hold only one of these counts.
    static var committedCounts: [Int] {
        var counts = [0]
        for batch in 0..<batches { counts.append(counts[batch] + (firstBatch << batch)) }
        return counts
    }

    /// The records of the first `count` keys, as the workload writes them.
    static func expected(_ count: Int) -> [LoadBulkRow] {
        var rows: [LoadBulkRow] = []
        var next: Int64 = 0
        for batch in 0..<batches where next < Int64(count) {
            for id in next..<next + Int64(firstBatch << batch) { rows.append(.make(id, batch: Int64(batch))) }
            next += Int64(firstBatch << batch)
        }
        return rows
    }

    @Test func aReaderProcessSeesOnlyCommittedBatchesWhileABulkLoadGrowsTheMap() throws {
        try TemporaryDirectory.with("lmdb-bulk-process") { directory in
            let path = directory.appendingPathComponent("store.lmdb").path
            // The reader opens the store first, with the same small map as the writer: every
            // growth the writer makes is one this process has to adopt.
            let store = try ObjectStore(backend: .lmdb(path: path, configuration: .init(initialMapSize: 64 << 10)))
            let writer = Process()
            writer.executableURL = CrashHarness.executable
            writer.arguments = [
                "--backend", "lmdb", "--path", path, "--workload", "bulkload",
                "--batches", String(Self.batches), "--first-batch", String(Self.firstBatch),
            ]
            let output = Pipe()
            writer.standardOutput = output
            try writer.run()
            let allowed = Set(Self.committedCounts)
            var seen: [Int] = []
            var failures: [String] = []
            var reads = 0
            while writer.isRunning || reads == 0 {
                let (count, rows) = try store.read { tx in
                    (try tx.count(LoadBulkRow.self), try tx.fetchAll(LoadBulkRow.self))
                }
                reads += 1
                if !allowed.contains(count) || rows.count != count {
                    failures.append(
                        "a snapshot held \(count) records (\(rows.count) read); committed: \(allowed.sorted())"
                    )
                } else if rows != Self.expected(count) {
                    failures.append("a snapshot of \(count) records differs from the committed batches")
                }
                if seen.last != count { seen.append(count) }
                if failures.count > 3 { break }
            }
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0, "\(text.split(separator: "\n").suffix(2))")
            #expect(failures.isEmpty, "\(failures)")
            #expect(seen == seen.sorted(), "snapshots went back in time: \(seen)")
            print("LMDB bulk load in another process: \(reads) reads saw the counts \(seen)")
            let final = try store.fetchAll(LoadBulkRow.self)
            #expect(final.count == Self.committedCounts.last)
            #expect(final == Self.expected(Self.committedCounts.last ?? 0))
            // The file holds all 63,000 records: far past the 64 KiB map both processes began with.
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            #expect(size > 1 << 20)
        }
    }
}
