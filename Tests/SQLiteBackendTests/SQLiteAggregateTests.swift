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
}
