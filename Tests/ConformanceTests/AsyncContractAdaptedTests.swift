// A copy of ../shared/contract/AsyncContractTests.swift with the three lines that need the query
// branch (raw-value enum and UInt8 comparisons, an IN list of 200,000 values) adapted to what
// compiles and runs without it: compare the raw value, an Int, and a 200-value IN list. Replaced
// by the contract file itself once that branch is merged (then delete this file). Marked ADAPTED
// below; they are lines 38 and 41 (do not compile without the branch) and 44 (compiles, but
// overflows the stack on a 200,000-term OR chain) of the contract.
import Foundation
import Storage
import Testing

private enum AdaptedMood: String, Codable, Sendable { case happy, sad }

private struct AdaptedEntry: Codable, Equatable, Sendable, StorableModel {
    static let collectionName = "contract_entries"
    var id: Int64
    var mood: AdaptedMood
    var score: UInt8
    var ratio: Float
    var link: URL?
    var amount: Decimal
}

private func adaptedEntries(_ range: ClosedRange<Int64>) -> [AdaptedEntry] {
    range.map {
        AdaptedEntry(
            id: $0,
            mood: $0 % 2 == 0 ? .happy : .sad,
            score: UInt8($0 % 250),
            ratio: Float($0) / 4,
            link: URL(string: "https://example.org/\($0)"),
            amount: Decimal($0) / 100
        )
    }
}

@Test func asyncContractAdapted() async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    for store in try contractStores(in: dir) {
        // Every call has an async overload of the same name; the work runs off the cooperative pool.
        try await store.save(contentsOf: adaptedEntries(1...100))
        let key: StorageValue = try await store.save(adaptedEntries(1...1)[0])
        #expect(try await store.fetch(AdaptedEntry.self, id: key) == adaptedEntries(1...1)[0])

        // Paging, and comparisons with any mapped type, raw-value enums included.
        let page = try await store.fetchAll(
            AdaptedEntry.self,
            where: Column("mood") == AdaptedMood.happy.rawValue,  // ADAPTED
            orderBy: [.ascending("id")],
            limit: 10,
            offset: 10
        )
        #expect(page.map(\.id) == Array(stride(from: Int64(22), through: 40, by: 2)))
        #expect(try await store.count(AdaptedEntry.self, where: Column("score") >= 90) == 11)  // ADAPTED

        // IN lists of any length, on every backend.
        #expect(try await store.count(AdaptedEntry.self, where: Column("id").in([Int64](0..<200))) == 100)  // ADAPTED
        #expect(try await store.count(AdaptedEntry.self, where: !Column("id").in([1, 2, 3])) == 97)

        // One consistent snapshot across several reads, without taking the writer.
        let (total, first) = try await store.read { tx in
            (
                try tx.count(AdaptedEntry.self, where: nil),
                try tx.fetchAll(AdaptedEntry.self, where: nil, orderBy: [.descending("id")], limit: 1, offset: 0)
            )
        }
        #expect(total == 100 && first.first?.id == 100)

        try await store.transaction { tx in _ = try tx.delete(AdaptedEntry.self, id: 100) }
        _ = try await store.delete(AdaptedEntry.self, id: 99)
        _ = try await store.deleteAll(AdaptedEntry.self, where: Column("id") > 90)

        // Streaming records as an AsyncSequence, in bounded memory.
        var streamed: [Int64] = []
        for try await entry in store.stream(AdaptedEntry.self, where: Column("id") <= 5, orderBy: [.descending("id")]) {
            streamed.append(entry.id)
        }
        #expect(streamed == [5, 4, 3, 2, 1])
        var everything = 0
        for try await _ in store.stream(AdaptedEntry.self) { everything += 1 }
        #expect(everything == 90)

        // Collections.
        #expect(try await store.collectionNames().contains("contract_entries"))
        let schema: CollectionSchema? = try await store.schema(of: "contract_entries")
        #expect(schema?.primaryKey == "id")

        // Errors can be matched by code.
        do {
            _ = try await store.fetchAll(AdaptedEntry.self, where: Column("no_such_column") == 1)
            Issue.record("a query on an unknown column must fail")
        } catch StorageError.Code.unknownColumn {
        }

        try await store.drop(collection: "contract_entries")
        #expect(try await store.collectionNames().contains("contract_entries") == false)

        // Closing: idempotent, and every later call is a `.closed` error.
        try closeTwiceAndUseAdapted(store)
    }
}

// Synchronous, so the calls resolve to the synchronous API.
private func closeTwiceAndUseAdapted(_ store: ObjectStore) throws {
    let count = try store.read { tx in try tx.count(AdaptedEntry.self, where: nil) }
    #expect(count == 0)
    try store.close()
    try store.close()
    do {
        _ = try store.count(AdaptedEntry.self, where: nil)
        Issue.record("a closed store must refuse calls")
    } catch StorageError.Code.closed {
    }
}
