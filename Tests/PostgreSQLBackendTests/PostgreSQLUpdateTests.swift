import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Update-where on PostgreSQL: one `UPDATE … RETURNING` whose keys reach other stores' change
/// streams, and the core path for a predicate or a value the SQL does not take.
@Suite struct PostgreSQLUpdateTests {
    struct Item: Codable, Equatable {
        var id: Int64
        var text: String
        var amount: Int
    }

    @Test func anUpdateIsOneStatementAndOtherStoresHearOfEveryKey() async throws {
        try await withStoreAsync("update") { writer, path in
            let observer = try PostgreSQLTestServer.openStore(path: path)
            defer { try? observer.close() }
            let changes = observer.changes(of: Item.self)
            try await writer.save(contentsOf: (1...10).map { Item(id: Int64($0), text: "t\($0)", amount: $0) })
            let pushed = try writer.backend.write { transaction -> [StorageValue]? in
                try (transaction as? any BulkUpdatingWriteTransaction)?.updateAll(
                    in: "Item",
                    columns: ["text"],
                    values: [.text("pushed")],
                    where: Column("amount") > 7
                )
            }
            #expect(pushed.map(Set.init) == [.integer(8), .integer(9), .integer(10)])
            // LIKE on a number column is not compiled: nil, nothing changed, and the store's
            // update takes the core path with the same answer.
            let declined = try writer.backend.write { transaction -> [StorageValue]? in
                try (transaction as? any BulkUpdatingWriteTransaction)?.updateAll(
                    in: "Item",
                    columns: ["text"],
                    values: [.text("never")],
                    where: Column("amount").like("1%")
                )
            }
            #expect(declined == nil)
            #expect(try await writer.update(Item.self, set: ["text": "like"], where: Column("amount").like("1%")) == 2)
            #expect(try await writer.update(Item.self, set: ["amount": 0], where: Column("id") <= 2) == 2)

            var heard: [Set<StorageValue>] = []
            for await change in changes {
                heard.append(Set(change.upserted))
                if heard.count == 4 { break }
            }
            #expect(heard == [Set((1...10).map { StorageValue.integer($0) }), [8, 9, 10], [1, 10], [1, 2]])
            let texts = try await observer.fetchAll(Item.self, orderBy: [.ascending("id")]).map(\.text)
            #expect(
                texts == [
                    "like", "t2", "t3", "t4", "t5", "t6", "t7", "pushed", "pushed", "like",
                ]
            )
        }
    }
}
