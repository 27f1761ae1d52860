import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// PostgreSQL computes counts, exact integer sums and averages and extremes in SQL, detects a sum
/// beyond `Int64` itself, and leaves real sums and `bytea` extremes to the one-pass computation.
@Suite struct PostgreSQLAggregateTests {
    @Test func groupByRunsInPostgreSQLWithExactSums() throws {
        try TemporaryDirectory.with("postgres-aggregates") { directory in
            let store = try PostgreSQLTestServer.openStore(path: DiskBackend.postgresql.storePath(in: directory))
            defer { try? store.close() }
            try store.insert(dictionaries: AggregatePushDown.sales, into: "sales")
            let backend = store.backend
            #expect(try AggregatePushDown.answer(backend, AggregatePushDown.grouped) == AggregatePushDown.groupedAnswer)
            var overflowing = AggregatePushDown.grouped
            overflowing.predicate = nil
            overflowing.aggregates = [.sum("amount")]
            let error = expectStorageError(.valueOutOfRange) { _ = try AggregatePushDown.answer(backend, overflowing) }
            #expect(error?.collection == "sales")
            overflowing.aggregates = [.average("amount")]
            #expect(try AggregatePushDown.answer(backend, overflowing)?.first == [.null, 4_611_686_018_427_387_904.0])
            var real = AggregatePushDown.grouped
            real.aggregates = [.sum("price")]
            #expect(try AggregatePushDown.answer(backend, real) == nil)
        }
    }
}
