// The public API contract (kept byte for byte in Tests/ConformanceTests; docs/DESIGN.md describes it)
// run on PostgreSQL. AsyncContractTests.swift and ObservationSettingsContractTests.swift in this
// folder are symbolic links to those copies, so they stay identical; they reuse
// `contractStores(in:)`, which here opens a PostgreSQL store. APIContractTests.swift itself
// defines `contractStores(in:)` for the embedded backends only, so its checks are repeated below,
// unchanged but for the store: keep them in step with that file.
import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// The stores the linked contract files run on: one PostgreSQL store, in a schema of its own
/// for `dir`.
func contractStores(in dir: URL) throws -> [ObjectStore] {
    [try PostgreSQLTestServer.openStore(path: DiskBackend.postgresql.storePath(in: dir))]
}

private struct ContractAddress: Codable, Equatable { var city: String }

private struct ContractPerson: Codable, Equatable, StorableModel {
    static let collectionName = "contract_people"
    static let indexes: [IndexDefinition] = [.init(["age"]), .init(["email"], unique: true)]
    var id: Int64
    var name: String
    var age: Int
    var email: String?
    var tags: [String]
    var address: ContractAddress?
}

private struct ContractNote: Codable, Equatable { var text: String }

private struct ContractColor: Codable, Equatable, ColumnCodable {
    var hex: String
    init(hex: String) { self.hex = hex }
    static var columnType: ColumnType { .text }
    var storageValue: StorageValue { .text(hex) }
    init(storageValue: StorageValue) throws {
        guard case .text(let text) = storageValue else { throw CocoaError(.coderReadCorrupt) }
        hex = text
    }
}

/// `publicAPIContract` of APIContractTests.swift, on a PostgreSQL store.
@Test func publicAPIContractOnPostgreSQL() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    for store in try contractStores(in: dir) {
        let people = (1...20).map {
            ContractPerson(
                id: Int64($0),
                name: "p\($0)",
                age: 20 + $0,
                email: $0 % 2 == 0 ? nil : "p\($0)@x",
                tags: ["t"],
                address: ContractAddress(city: "c")
            )
        }
        let key: StorageValue = try store.save(people[0])
        try store.save(contentsOf: people)
        #expect(try store.fetch(ContractPerson.self, id: key) == people[0])
        #expect(try store.fetch(ContractPerson.self, id: 2)?.name == "p2")
        let some = try store.fetchAll(
            ContractPerson.self,
            where: Column("age") >= 30 && Column("name").like("p%"),
            orderBy: [.ascending("name")],
            limit: 3
        )
        #expect(some.count == 3)
        #expect(try store.count(ContractPerson.self, where: Column("email") == nil) == 10)
        var streamed = 0
        try store.forEach(ContractPerson.self, where: Column("age") > 35) { _ in streamed += 1 }
        #expect(streamed == 5)
        try store.delete(ContractPerson.self, id: 1)
        try store.deleteAll(ContractPerson.self, where: Column("age") < 25)
        try store.transaction { tx in
            try tx.save(ContractNote(text: "in a transaction"))
            _ = try tx.fetch(ContractPerson.self, id: 10)
            try tx.delete(ContractPerson.self, id: 10)
            _ = try tx.count(ContractPerson.self, where: nil)
        }
        let noteKey = try store.save(ContractNote(text: "auto key"))
        #expect(try store.fetch(ContractNote.self, id: noteKey)?.text == "auto key")
        try store.insert(jsonArray: Data(#"[{"id": 1, "v": 1.5}, {"id": 2, "v": null}]"#.utf8), into: "raw")
        try store.insert(dictionaries: [["id": 3, "v": 2]], into: "raw")
        let rows: [[String: StorageValue]] = try store.fetchDictionaries(from: "raw", where: Column("v") != nil)
        #expect(rows.count == 2)
        _ = ContractColor(hex: "#fff").storageValue
    }
}
