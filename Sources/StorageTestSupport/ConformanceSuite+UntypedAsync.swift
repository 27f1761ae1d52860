import Foundation
import Storage
import Testing

/// The untyped calls of issue 14 through their async overloads and inside transactions, on
/// every backend: natural keys, counting and deleting a collection by name.
struct UntypedAsyncChecks {
    func naturalKeysCountsAndDeletesByNameAreAsync(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("untyped-async")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        let airports = Data(
            #"[{"iata": "CDG", "elevation": 392}, {"iata": "LHR", "elevation": 83}, {"iata": "AMS", "elevation": -11}]"#
                .utf8
        )
        #expect(try await store.insert(jsonArray: airports, into: "airports", primaryKey: "iata") == 3)
        // The same file again replaces; the rows are keyed by what they carry.
        try await store.insert(jsonArray: airports, into: "airports", primaryKey: "iata")
        #expect(try await store.count(in: "airports") == 3)
        #expect(try await store.count(in: "airports", where: Column("elevation") < 100) == 2)

        let rows: [[String: Any]] = [["iata": "BER", "elevation": 48]]
        #expect(try await store.insert(dictionaries: rows, into: "airports", primaryKey: "iata") == 1)
        #expect(try await store.count(in: "airports", where: Column("iata") == "BER") == 1)
        await #expect(throws: StorageError.self) {
            let keyless: [[String: Any]] = [["elevation": 1]]
            try await store.insert(dictionaries: keyless, into: "airports", primaryKey: "iata")
        }

        #expect(try await store.deleteAll(from: "airports", where: Column("elevation") < 50) == 2)
        #expect(try await store.fetchDictionaries(from: "airports").map { $0["iata"] } == [.text("CDG"), .text("LHR")])
        #expect(try await store.count(in: "airports") == 2)

        // Inside one transaction: a write, a count that sees it, a delete by name.
        let counted = try await store.transaction { tx in
            try tx.insert(dictionaries: [["iata": "NRT", "elevation": 43]], into: "airports", primaryKey: "iata")
            let seen = try tx.count(in: "airports")
            try tx.deleteAll(from: "airports", where: Column("iata") == "CDG")
            return seen
        }
        #expect(counted == 3)
        let left = try await store.read { tx in try tx.count(in: "airports") }
        #expect(left == 2)
        #expect(
            try await store.fetchDictionaries(from: "airports", orderBy: [.ascending("iata")]).map { $0["iata"] } == [
                .text("LHR"), .text("NRT"),
            ]
        )
    }
}

extension ConformanceSuite {
    static let untypedAsyncAsyncChecks: [ConformanceCheck] = [
        asyncCheck("natural keys counts and deletes by name are async") { fixture, _ in
            try await UntypedAsyncChecks().naturalKeysCountsAndDeletesByNameAreAsync(fixture)
        }
    ]
}
