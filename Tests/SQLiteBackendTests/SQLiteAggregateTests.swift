import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// SQLite computes counts, integer sums and averages and extremes in SQL, and leaves real sums and
/// overflowing partial sums to the one-pass computation (the conformance suite checks the answers
/// are the same either way).
@Suite struct SQLiteAggregateTests {
    @Test func groupByRunsInSQLiteAndDeclinesWhatItWouldRoundOrOverflow() throws {
        try TemporaryDirectory.with("sqlite-aggregates") { directory in
            let backend = try SQLiteStorageBackend(path: directory.appendingPathComponent("a.sqlite").path)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            try store.insert(dictionaries: AggregatePushDown.sales, into: "sales")
            #expect(try AggregatePushDown.answer(backend, AggregatePushDown.grouped) == AggregatePushDown.groupedAnswer)
            var overflowing = AggregatePushDown.grouped
            overflowing.predicate = nil
            #expect(try AggregatePushDown.answer(backend, overflowing) == nil)
            var real = AggregatePushDown.grouped
            real.aggregates = [.sum("price")]
            #expect(try AggregatePushDown.answer(backend, real) == nil)
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
