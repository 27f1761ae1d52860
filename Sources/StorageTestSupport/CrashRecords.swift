package import Foundation
package import Storage

/// One record of a crash-test batch. Its fields are derived from its id, so a reader can tell an
/// intact record from a damaged one without knowing what was written.
package struct CrashRecord: Codable, Equatable, Sendable {
    /// `batch * batchSize + index`.
    package var id: Int64
    /// The batch the record was committed in (from 1).
    package var batch: Int64
    /// Text whose length (1 to 300 characters) and content follow from `id`.
    package var payload: String
    /// Bytes (0 to 256) that follow from `id`.
    package var blob: Data

    /// The record with `id` of `batch`, with the contents that follow from them.
    /// - Parameters:
    ///   - id: the record's primary key.
    ///   - batch: the batch it belongs to.
    package init(id: Int64, batch: Int64) {
        self.id = id
        self.batch = batch
        let length = Int(UInt64(bitPattern: id &* 2_654_435_761) % 300) + 1
        let start = Int(UInt64(bitPattern: id) % 36)
        payload = String(decoding: Self.letters[start..<start + length], as: UTF8.self)
        blob = Self.bytes.subdata(in: start..<start + length % 257)
    }

    private static let letters = Array(String(repeating: "abcdefghijklmnopqrstuvwxyz0123456789", count: 10).utf8)
    private static let bytes = Data((0..<600).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    /// The records of `batch`, `size` of them.
    /// - Parameters:
    ///   - batch: the batch's number.
    ///   - size: how many records a batch has.
    /// - Returns: the batch's records, in key order.
    package static func batch(_ batch: Int64, size: Int) -> [CrashRecord] {
        (0..<Int64(size)).map { CrashRecord(id: batch * Int64(size) + $0, batch: batch) }
    }
}

/// The last batch committed, rewritten in every batch's transaction, in a collection of its own: a
/// transaction that is only partly applied shows as a tally that disagrees with the records.
package struct CrashTally: Codable, Equatable, Sendable {
    /// Always 1: the tally is a single record.
    package var id: Int64 = 1
    /// The number of the last batch committed.
    package var lastBatch: Int64

    /// Creates a tally.
    /// - Parameter lastBatch: the last batch committed.
    package init(lastBatch: Int64) {
        self.lastBatch = lastBatch
    }
}

/// What the crash writer does: commits numbered batches, each one transaction that inserts
/// `batchSize` records and advances the tally, and reports each commit after it returns.
package enum CrashWorkload {
    /// Commits batches after the last one in `store` until `limit` batches have been written by
    /// this call (forever when `nil`), calling `acknowledge` with each batch number once its
    /// transaction has committed.
    /// - Parameters:
    ///   - store: the store written.
    ///   - batchSize: records per batch.
    ///   - limit: how many batches to write; `nil` for no end.
    ///   - acknowledge: called with each batch number after its commit returned.
    /// - Throws: the store's `StorageError` when a commit fails.
    package static func run(
        on store: ObjectStore,
        batchSize: Int,
        limit: Int? = nil,
        acknowledge: (Int64) -> Void
    ) throws {
        var batch = (try store.fetch(CrashTally.self, id: 1)?.lastBatch ?? 0) + 1
        var written = 0
        while limit.map({ written < $0 }) ?? true {
            let number = batch
            try store.transaction { tx in
                try tx.save(contentsOf: CrashRecord.batch(number, size: batchSize))
                try tx.save(CrashTally(lastBatch: number))
            }
            acknowledge(number)
            batch += 1
            written += 1
        }
    }

    /// Checks what a store holds after the writer was killed: every batch up to the tally is
    /// complete and intact, no record of a later batch exists, and the tally is at least the last
    /// acknowledged batch and at most one beyond it.
    /// - Parameters:
    ///   - store: the store, reopened after the kill.
    ///   - batchSize: records per batch.
    ///   - acknowledged: the last batch the writer reported committed.
    /// - Returns: the tally's last batch.
    /// - Throws: `CrashCheckFailure` naming what is wrong, or the store's `StorageError`.
    package static func verify(_ store: ObjectStore, batchSize: Int, acknowledged: Int64) throws -> Int64 {
        let last = try store.fetch(CrashTally.self, id: 1)?.lastBatch ?? 0
        guard last >= acknowledged else {
            throw CrashCheckFailure("batch \(acknowledged) was acknowledged but the store's tally is \(last)")
        }
        guard last <= acknowledged + 1 else {
            throw CrashCheckFailure("the tally is \(last), more than one batch beyond the acknowledged \(acknowledged)")
        }
        let records = try store.fetchAll(CrashRecord.self)
        guard records.count == Int(last) * batchSize else {
            throw CrashCheckFailure("\(records.count) records for \(last) batches of \(batchSize)")
        }
        for record in records {
            let size = Int64(batchSize)
            let expected = CrashRecord(id: record.id, batch: record.id / size)
            guard record == expected, record.batch >= 1, record.batch <= last else {
                throw CrashCheckFailure("record \(record.id) is damaged or belongs to no committed batch")
            }
        }
        return last
    }
}

/// A crash test found a store in a state a committed, atomic, durable store cannot be in.
package struct CrashCheckFailure: Error, CustomStringConvertible {
    /// What was wrong.
    package let description: String

    init(_ description: String) {
        self.description = description
    }
}
