import Foundation
import Storage
import StorageTestSupport
import Testing

/// Grouping by text on every engine, where each engine reads the group's bytes its own way
/// (LMDB in place from the record, `StorageRow.withText(at:)`; SQL engines in their `GROUP BY`):
/// thousands of groups (the table grows many times), texts alike but for a byte or a
/// normalization, the empty text, nulls, and groups met again long after they were made.
@Suite("Aggregates grouped by text", .dedicatedThreads)
struct AggregateTextGroupTests {
    @Test(arguments: fixtures)
    func manyTextGroupsMatchGroupsMadeInSwift(_ fixture: BackendFixture) throws {
        try TemporaryDirectory.with("text-groups") { directory in
            let store = try fixture.openStore(in: directory)
            defer { try? store.close() }
            let names = (0..<3_000).map { "city-\($0)" } + ["", "caf\u{E9}", "cafe\u{301}", "Caf\u{E9}", "\u{1F600}"]
            var rows: [[String: Any]] = []
            // By bytes: Swift compares "caf\u{E9}" and "cafe\u{301}" as equal; the stores do not.
            var expected: [[UInt8]?: (count: Int64, sum: Int64)] = [:]
            for id in 1...12_000 {
                // Every name about four times, scattered (7,919 is prime to the names' count);
                // every 9th record null.
                let name: String? = id % 9 == 0 ? nil : names[(id * 7_919) % names.count]
                var row: [String: Any] = ["id": id, "amount": id]
                if let name { row["city"] = name }
                rows.append(row)
                expected[name.map { Array($0.utf8) }, default: (0, 0)].count += 1
                expected[name.map { Array($0.utf8) }]!.sum += Int64(id)
            }
            #expect(try store.insert(dictionaries: rows, into: "sales") == rows.count)
            let answer = try store.aggregate(in: "sales", [.count, .sum("amount")], groupBy: [Column("city")])
            #expect(answer.count == expected.count)
            var seen: [String?] = []
            for row in answer {
                let name: String?
                switch row["city"] {
                case .text(let text)?: name = text
                default: name = nil
                }
                seen.append(name)
                let wanted = expected[name.map { Array($0.utf8) }]
                #expect(row["count"] == .integer(wanted?.count ?? -1), "\(String(describing: name))")
                #expect(row["sum(amount)"] == .integer(wanted?.sum ?? -1), "\(String(describing: name))")
            }
            // Null first, then the texts in byte order.
            let texts = seen.compactMap { $0 }
            #expect(seen.first == .some(nil))
            #expect(texts == texts.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        }
    }
}
