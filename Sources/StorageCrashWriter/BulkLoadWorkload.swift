import Foundation
import LMDBBackend
import Storage

/// One record of the bulk-load workload; its text is a function of its key, so a reader can
/// check every record it sees.
struct LoadBulkRow: Codable, Equatable {
    var id: Int64
    var batch: Int64
    var text: String

    /// The record with key `id`, in batch `batch`.
    static func make(_ id: Int64, batch: Int64) -> LoadBulkRow {
        LoadBulkRow(id: id, batch: batch, text: "row \(id) " + String(repeating: "abcdefgh", count: Int(id % 7)))
    }
}

/// Bulk loads that outgrow an LMDB map while another process reads (issue 17): opens the store
/// with a 64 KiB map and commits `batches` batches with `save(contentsOf:)`, batch `k` holding
/// `firstBatch << k` records, printing "ack k" after each commit. Each batch is larger than the
/// room the one before left, so each one grows the map, which the reading process must adopt.
enum BulkLoadWorkload {
    /// The number of records in batch `batch`.
    static func size(of batch: Int, firstBatch: Int) -> Int { firstBatch << batch }

    static func run(path: String, batches: Int, firstBatch: Int, report: (String) -> Void) throws {
        let backend = try LMDBStorageBackend(path: path, configuration: .init(initialMapSize: 64 << 10))
        let store = ObjectStore(backend: backend)
        var next: Int64 = 0
        for batch in 0..<batches {
            let count = Int64(size(of: batch, firstBatch: firstBatch))
            let rows = (next..<next + count).map { LoadBulkRow.make($0, batch: Int64(batch)) }
            try store.save(contentsOf: rows)
            next += count
            report("ack \(batch)")
        }
        try store.close()
    }
}
