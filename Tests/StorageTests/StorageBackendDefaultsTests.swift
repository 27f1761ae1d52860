import Foundation
import Storage
import StorageTestSupport
import Testing

/// A backend that implements only the protocol's requirements without defaults, forwarding to
/// the in-memory backend, so the default `get` (a scan) is what answers key look-ups.
private final class ScanOnlyBackend: StorageBackend {
    let base = InMemoryStorageBackend()

    func read<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result {
        try base.read { try body(ScanOnlyTransaction(base: $0, writer: nil)) }
    }

    func write<Result>(_ body: (any BackendWriteTransaction) throws -> Result) throws -> Result {
        try base.write { try body(ScanOnlyTransaction(base: $0, writer: $0)) }
    }
}

private final class ScanOnlyTransaction: BackendWriteTransaction {
    let base: any BackendReadTransaction
    let writer: (any BackendWriteTransaction)?

    init(base: any BackendReadTransaction, writer: (any BackendWriteTransaction)?) {
        self.base = base
        self.writer = writer
    }

    func schema(of collection: String) throws -> CollectionSchema? { try base.schema(of: collection) }
    func scan(_ request: ScanRequest, _ body: (any StorageRow) throws -> Bool) throws { try base.scan(request, body) }
    func count(in collection: String, where predicate: StoragePredicate?) throws -> Int {
        try base.count(in: collection, where: predicate)
    }
    func collectionNames() throws -> [String] { try base.collectionNames() }
    func dropCollection(_ collection: String) throws { try writer!.dropCollection(collection) }
    func prepareCollection(_ schema: CollectionSchema) throws -> CollectionSchema {
        try writer!.prepareCollection(schema)
    }
    func makeWriter(for collection: String, columns: [String]) throws -> any RecordWriter {
        try writer!.makeWriter(for: collection, columns: columns)
    }
    func delete(from collection: String, key: StorageValue) throws -> Bool {
        try writer!.delete(from: collection, key: key)
    }
    func deleteAll(from collection: String, where predicate: StoragePredicate?) throws -> [StorageValue] {
        try writer!.deleteAll(from: collection, where: predicate)
    }
}

@Suite struct StorageBackendDefaultsTests {
    struct Item: Codable, Equatable {
        var id: String
        var size: Int
    }

    @Test func theDefaultGetFindsRecordsByKeyThroughAScan() throws {
        let store = ObjectStore(backend: ScanOnlyBackend())
        try store.save(contentsOf: [Item(id: "a", size: 1), Item(id: "b", size: 2)])
        #expect(try store.fetch(Item.self, id: "b") == Item(id: "b", size: 2))
        #expect(try store.fetch(Item.self, id: "c") == nil)
        try store.transaction { tx in
            try tx.save(Item(id: "c", size: 3))
            #expect(try tx.fetch(Item.self, id: "c")?.size == 3)
        }
    }
}
