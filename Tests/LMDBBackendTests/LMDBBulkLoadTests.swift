import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import LMDBBackend

// Bulk loads that outgrow the map (issue 17): the map is sized for a batch of known length after
// its first records, so the transaction runs at most twice, and every record ends intact.

private struct BulkRow: Codable, Equatable {
    var id: Int64
    var batch: Int64
    var text: String

    static func make(_ id: Int64, batch: Int64) -> BulkRow {
        BulkRow(id: id, batch: batch, text: "row \(id) " + String(repeating: "abcdefgh", count: Int(id % 7)))
    }
}

@Test func lmdbBulkLoadsOutgrowingTheMapRunEachTransactionAtMostTwiceAndKeepEveryRecord() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path, configuration: .init(initialMapSize: 64 << 10))
        let store = ObjectStore(backend: backend)
        var sizes = [backend.environment.mapUsage().mapSize]
        var next: Int64 = 0
        // Each batch is larger than the room the one before it left, so each one grows the map.
        for (batch, count) in [2_000, 20_000, 200_000].enumerated() {
            let rows = (next..<next + Int64(count)).map { BulkRow.make($0, batch: Int64(batch)) }
            next += Int64(count)
            var runs = 0
            try store.transaction { tx in
                runs += 1
                try tx.save(contentsOf: rows)
            }
            // Without sizing the map for the batch, each replay ran until the map filled, and the
            // batches took three runs each from a doubling map.
            #expect(runs <= 2, "batch \(batch) of \(count) records ran \(runs) times")
            sizes.append(backend.environment.mapUsage().mapSize)
        }
        #expect(Set(sizes).count == sizes.count, "the map grew at every batch: \(sizes)")
        let stored = try store.fetchAll(BulkRow.self)
        #expect(stored.count == Int(next))
        var intact = 0
        for (index, row) in stored.enumerated() where row == BulkRow.make(Int64(index), batch: row.batch) {
            intact += 1
        }
        #expect(intact == Int(next))
        #expect(stored.filter { $0.batch == 2 }.count == 200_000)
    }
}

/// A record whose words the store indexes: its postings reach the map only when the index is
/// flushed at the commit, after every record was put.
private struct IndexedBulkRow: Codable, Equatable, StorableModel {
    static let collectionName = "indexedRows"
    static let indexes: [IndexDefinition] = [.fullText(["text"])]
    var id: Int64
    var text: String

    /// Short words, each many times: a word's postings (a field and a position per occurrence,
    /// three bytes past the 128th) take more than its text (two bytes an occurrence).
    static func make(_ id: Int64) -> IndexedBulkRow {
        let words = (0..<300).map { "\(Character(UnicodeScalar(UInt8(97 + (Int(id) &+ $0 / 60) % 26))))" }
        return IndexedBulkRow(id: id, text: words.joined(separator: " "))
    }
}

/// On threads of its own: it tokenizes 6.6 million words, and on the cooperative pool it would
/// hold a thread the asynchronous tests need. Not under ThreadSanitizer, where it took minutes of
/// both cores (and the live-results checks beside it waited over a minute): it checks a size
/// estimate on one thread, and the other bulk-load tests cover the same path there.
@Test(.dedicatedThreads, .disabled(if: Sanitizers.thread, "one thread, minutes of CPU under the sanitizer"))
func lmdbBulkLoadsOfIndexedRecordsSizeTheMapForTheirPostingsToo() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path, configuration: .init(initialMapSize: 64 << 10))
        let store = ObjectStore(backend: backend)
        var next: Int64 = 0
        for count in [2_000, 20_000] {
            let rows = (next..<next + Int64(count)).map(IndexedBulkRow.make)
            next += Int64(count)
            var runs = 0
            try store.transaction { tx in
                runs += 1
                try tx.save(contentsOf: rows)
            }
            // Sized for the records alone, the map filled again when the postings were written
            // at the commit, and the batch ran a third time.
            #expect(runs <= 2, "\(count) records ran \(runs) times")
        }
        #expect(try store.count(IndexedBulkRow.self) == Int(next))
        let probe = IndexedBulkRow.make(next - 1)
        let word = String(probe.text.split(separator: " ")[3])
        let found = try store.search(IndexedBulkRow.self, matching: word).map(\.id)
        let wanted = (0..<next).filter { IndexedBulkRow.make($0).text.split(separator: " ").contains(Substring(word)) }
        #expect(Set(found) == Set(wanted))
        #expect(found.contains(next - 1))
    }
}

@Test func lmdbBulkLoadOfUnknownLengthStillGrowsTheMapAndKeepsEveryRecord() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path, configuration: .init(initialMapSize: 64 << 10))
        let store = ObjectStore(backend: backend)
        // A lazy sequence announces no length: the map grows as it fills, replaying the batch.
        let rows = (0..<Int64(30_000)).lazy.map { BulkRow.make($0, batch: 0) }
        try store.save(contentsOf: rows)
        #expect(backend.environment.mapUsage().mapSize > 1 << 20)
        let stored = try store.fetchAll(BulkRow.self)
        #expect(stored == (0..<Int64(30_000)).map { BulkRow.make($0, batch: 0) })
    }
}

@Test func lmdbBulkLoadExpectingMoreThanTheMaximumMapFailsWithATypedErrorAndWritesNothing() throws {
    try withStorePath { _, path in
        let configuration = LMDBStorageBackend.Configuration(initialMapSize: 64 << 10, maximumMapSize: 1 << 20)
        let store = try ObjectStore(backend: .lmdb(path: path, configuration: configuration))
        try store.save(BulkRow.make(1_000_000, batch: -1))
        let rows = (0..<Int64(50_000)).map { BulkRow.make($0, batch: 0) }
        #expect {
            try store.save(contentsOf: rows)
        } throws: { error in
            (error as? StorageError)?.code == .io && "\(error)".contains("maximum")
        }
        #expect(try store.count(BulkRow.self) == 1)
    }
}

@Test func lmdbDictionaryBulkLoadOutgrowingTheMapRunsAtMostTwice() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path, configuration: .init(initialMapSize: 64 << 10))
        let store = ObjectStore(backend: backend)
        let rows: [[String: Any]] = (0..<50_000).map {
            ["id": $0, "text": "row \($0) " + String(repeating: "x", count: $0 % 40)]
        }
        var runs = 0
        try store.transaction { tx in
            runs += 1
            try tx.insert(dictionaries: rows, into: "Loose")
        }
        #expect(runs <= 2, "the load ran \(runs) times")
        let stored = try store.fetchDictionaries(from: "Loose")
        #expect(stored.count == 50_000)
        #expect(stored.last?["text"] == .text("row 49999 " + String(repeating: "x", count: 49_999 % 40)))
    }
}
