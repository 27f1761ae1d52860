import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

@testable import StorageCommandLine

@Suite("storage aggregate, run as a process", .dedicatedThreads)
struct AggregateCommandTests {
    static let sales = """
        [
          {"id": 1, "city": "Oslo", "customer": "ann", "amount": 20, "price": 0.5},
          {"id": 2, "city": "Oslo", "customer": "bob", "amount": 30, "price": 1.5},
          {"id": 3, "city": "Bergen", "customer": "ann", "amount": 5, "price": 2.5},
          {"id": 4, "city": null, "customer": "cid", "amount": 40, "price": 4.0},
          {"id": 5, "city": "Bergen", "customer": "bob", "amount": 25, "price": null}
        ]
        """

    @Test(arguments: DiskBackend.everyCase)
    func groupsFilteredAndNamedOnTheBackend(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("storage-aggregate") { directory in
            let store = try storeURL(backend, in: directory)
            try Self.sales.write(to: directory.appendingPathComponent("sales.json"), atomically: true, encoding: .utf8)
            let imported = try StorageProcess.run(["import", store, "sales", "sales.json"], in: directory)
            #expect(imported.status == 0, "\(imported.stderr)")

            let grouped = try StorageProcess.run(
                [
                    "aggregate", store, "sales", "count", "sum(amount) as total", "avg(price)",
                    "count(distinct customer)", "--where", "amount > 10", "--group-by", "city",
                ],
                in: directory
            )
            #expect(grouped.status == 0, "\(grouped.stderr)")
            let rows = try #require(try grouped.json() as? [[String: Any]])
            #expect(rows.map { $0["city"] is NSNull ? "null" : $0["city"] as? String } == ["null", "Bergen", "Oslo"])
            #expect(rows.map { $0["count"] as? Int } == [1, 1, 2])
            #expect(rows.map { $0["total"] as? Int } == [40, 25, 50])
            #expect(rows[2]["avg(price)"] as? Double == 1.0)
            #expect(rows[1]["avg(price)"] is NSNull)
            #expect(rows.map { $0["count(distinct customer)"] as? Int } == [1, 1, 2])
            #expect(grouped.stderr.hasPrefix("3 groups of sales in "))

            // Without groups, as CSV: one line over every record.
            let all = try StorageProcess.run(
                ["aggregate", store, "sales", "min(city)", "max(amount)", "--format", "csv"],
                in: directory
            )
            #expect(all.status == 0, "\(all.stderr)")
            // CSV lines end in CRLF, as RFC 4180 has them.
            #expect(all.stdout == "min(city),max(amount)\r\nBergen,40\r\n")

            // A field inside a column's JSON, in --group-by and --where.
            let people = """
                [{"id": 1, "home": {"city": "Oslo"}, "n": 1}, {"id": 2, "home": {"city": "Rome"}, "n": 2},
                 {"id": 3, "home": {"city": "Oslo"}, "n": 3}, {"id": 4, "home": null, "n": 4}]
                """
            try people.write(to: directory.appendingPathComponent("people.json"), atomically: true, encoding: .utf8)
            let importedPeople = try StorageProcess.run(["import", store, "people", "people.json"], in: directory)
            #expect(importedPeople.status == 0, "\(importedPeople.stderr)")
            let nested = try StorageProcess.run(
                [
                    "aggregate", store, "people", "sum(n)", "--group-by", "home.city", "--where", "n > 1", "--format",
                    "csv",
                ],
                in: directory
            )
            #expect(nested.status == 0, "\(nested.stderr)")
            #expect(nested.stdout == "home.city,sum(n)\r\n,4\r\nOslo,3\r\nRome,2\r\n")
            let filtered = try StorageProcess.run(
                ["aggregate", store, "people", "count", "--where", "home.city == 'Oslo'", "--format", "csv"],
                in: directory
            )
            #expect(filtered.stdout == "count\r\n2\r\n", "\(filtered.stderr)")

            // Bad input: a usage error for a malformed aggregate, the store's error for a column.
            let malformed = try StorageProcess.run(["aggregate", store, "sales", "median(price)"], in: directory)
            #expect(malformed.status == 2)
            #expect(malformed.stderr.contains("unknown aggregate 'median'"))
            let unknown = try StorageProcess.run(
                ["aggregate", store, "sales", "sum(discount)", "--group-by", "city"],
                in: directory
            )
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("discount"))
            let missing = try StorageProcess.run(["aggregate", store, "sales"], in: directory)
            #expect(missing.status == 2)
            #expect(missing.stderr.contains("missing AGGREGATE"))
        }
    }

    @Test func aggregateSpecificationsParse() throws {
        #expect(try StorageTool.parseAggregate("count") == .count)
        #expect(try StorageTool.parseAggregate("COUNT(*)") == .count)
        #expect(try StorageTool.parseAggregate("count(Major Genre)") == .count("Major Genre"))
        #expect(try StorageTool.parseAggregate("count(distinct Director)") == .countDistinct("Director"))
        #expect(
            try StorageTool.parseAggregate("sum(Worldwide Gross) as gross")
                == Aggregate.sum("Worldwide Gross").named("gross")
        )
        #expect(try StorageTool.parseAggregate("avg(x)") == .average("x"))
        #expect(try StorageTool.parseAggregate("min(a(b))") == .minimum("a(b)"))
        #expect(try StorageTool.parseAggregate("max(y) as top") == Aggregate.maximum("y").named("top"))
        #expect(try StorageTool.parseAggregate("count as n") == Aggregate.count.named("n"))
        #expect(throws: UsageError.self) { try StorageTool.parseAggregate("sum()") }
        #expect(throws: UsageError.self) { try StorageTool.parseAggregate("total") }
        #expect(throws: UsageError.self) { try StorageTool.parseAggregate("sum(x) as ") }
    }
}
