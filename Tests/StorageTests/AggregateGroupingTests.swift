import Foundation
import StorageTestSupport
import Testing

@testable import Storage

/// The one-pass computation's groups of text (`TextGroups`, a table by the texts' bytes, beside
/// the dictionary for other values): many groups, texts alike but for a byte, texts that read as
/// numbers, and nulls, against groups made in plain Swift.
@Suite struct AggregateGroupingTests {
    @Test func manyTextGroupsBesideNumbersAndNullMatchPlainSwift() throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        defer { try? store.close() }
        var rows: [[String: Any]] = []
        var expected: [StorageValue: (count: Int64, sum: Int64)] = [:]
        for id in 1...6_000 {
            let group: StorageValue
            switch id % 7 {
            case 0: group = .text("\(id % 5)")  // a text column: digits stay text
            case 1: group = .null
            case 2: group = .text("n\(id % 5)")
            case 3: group = .text(id % 11 == 0 ? "" : "caf\u{E9}-\(id % 13)")
            default: group = .text("city-\(id % 2_500)")
            }
            var row: [String: Any] = ["id": id, "amount": id]
            switch group {
            case .integer(let number): row["city"] = number
            case .text(let text): row["city"] = text
            default: break
            }
            rows.append(row)
            expected[group, default: (0, 0)].count += 1
            expected[group, default: (0, 0)].sum += Int64(id)
        }
        try store.insert(dictionaries: rows, into: "sales")
        let answer = try store.aggregate(in: "sales", [.count, .sum("amount")], groupBy: [Column("city")])
        #expect(answer.count == expected.count)
        for row in answer {
            let group = row["city"] ?? .null
            #expect(row["count"] == .integer(expected[group]?.count ?? -1), "\(group)")
            #expect(row["sum(amount)"] == .integer(expected[group]?.sum ?? -1), "\(group)")
        }
    }

    @Test func theTextTableFindsEveryTextItHoldsAndNoOther() {
        var groups = TextGroups()
        let texts = (0..<10_000).map { "t\($0)" } + ["", "\u{E9}", "e\u{301}"]
        for (index, text) in texts.enumerated() {
            #expect(groups.group(of: text) == nil)
            let inserted = groups.insert(text, group: index)
            #expect(inserted)
        }
        for (index, text) in texts.enumerated() { #expect(groups.group(of: text) == index) }
        #expect(groups.group(of: "t10000") == nil)
        #expect(groups.group(of: "\u{E9}") != groups.group(of: "e\u{301}"))
    }
}
