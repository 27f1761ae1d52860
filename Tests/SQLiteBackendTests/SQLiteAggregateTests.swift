import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// SQLite computes counts, sums, averages and extremes in SQL (real sums with its exact-sum
/// function), and leaves overflowing partial sums to the one-pass computation (the conformance
/// suite checks the answers are the same either way).
@Suite struct SQLiteAggregateTests {
    @Test func groupByRunsInSQLiteWithExactRealSumsAndDeclinesAnOverflow() throws {
        try TemporaryDirectory.with("sqlite-aggregates") { directory in
            let backend = try SQLiteStorageBackend(path: directory.appendingPathComponent("a.sqlite").path)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            try store.insert(dictionaries: AggregatePushDown.sales, into: "sales")
            #expect(try AggregatePushDown.answer(backend, AggregatePushDown.grouped) == AggregatePushDown.groupedAnswer)
            var overflowing = AggregatePushDown.grouped
            overflowing.predicate = nil
            #expect(try AggregatePushDown.answer(backend, overflowing) == nil)
            // A real sum is the exact sum rounded once, in SQL too (`storage_exact_sum`).
            var real = AggregatePushDown.grouped
            real.aggregates = [.sum("price"), .average("price")]
            #expect(
                try AggregatePushDown.answer(backend, real) == [
                    [.null, 4.0, 4.0], ["Bergen", 2.5, 2.5], ["Oslo", 2.0, 1.0],
                ]
            )
            try store.insert(
                dictionaries: [["id": 1, "x": 1e16], ["id": 2, "x": 1.0], ["id": 3, "x": -1e16]],
                into: "reals"
            )
            let exact = AggregateRequest(collection: "reals", aggregates: [.sum("x")], predicate: nil, groupBy: [])
            #expect(try AggregatePushDown.answer(backend, exact) == [[1.0]])
            // Through the store, the one-pass computation then answers exactly.
            let averages = try store.aggregate(
                in: "sales",
                [.average("amount"), .sum("price")],
                where: Column("city") == nil
            )
            #expect(averages == [["avg(amount)": 4_611_686_018_427_387_904.0, "sum(price)": 8.0]])
        }
    }

    @Test func groupingByANestedFieldRunsInSQLiteWithItsPathBound() throws {
        try TemporaryDirectory.with("sqlite-nested-groups") { directory in
            let backend = try SQLiteStorageBackend(path: directory.appendingPathComponent("n.sqlite").path)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            try store.insert(
                dictionaries: [
                    ["id": 1, "address": #"{"city":"Oslo","n":1}"#, "amount": 10],
                    ["id": 2, "address": #"{"city":"Oslo"}"#, "amount": 5],
                    ["id": 3, "address": #"{"city":null}"#, "amount": 1],
                    ["id": 4, "address": "not json", "amount": 2],
                    ["id": 5, "amount": 3],
                    ["id": 6, "address": #"{"city":{"a":1}}"#, "amount": 4],
                    ["id": 7, "address": #"{"city":2}"#, "amount": 7],
                    ["id": 8, "address": #"{"city":"Oslo"}"#, "amount": 500],
                ],
                into: "docs"
            )
            // The group's path is bound before the WHERE clause's value: both must land.
            let request = AggregateRequest(
                collection: "docs",
                aggregates: [.count, .sum("amount")],
                predicate: .compare("amount", .less, .integer(100)),
                groupBy: ["address"],
                groupPaths: [["city"]]
            )
            let answer: [[StorageValue]] = [[.null, 3, 6], [2, 1, 7], ["Oslo", 2, 15], [#"{"a":1}"#, 1, 4]]
            #expect(try AggregatePushDown.answer(backend, request) == answer)
            // The store asks SQLite (it declares groupsByNestedFields) and names the group.
            let rows = try store.aggregate(
                in: "docs",
                [.count, .sum("amount")],
                where: Column("amount") < 100,
                groupBy: [Column("address", "city")]
            )
            #expect(rows.map { $0["address.city"] } == [.null, 2, "Oslo", #"{"a":1}"#])
            #expect(rows.map { $0["sum(amount)"] } == [6, 7, 15, 4])
        }
    }
}
