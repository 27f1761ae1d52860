import Foundation
import Storage
import Synchronization

/// A backend that forwards everything to another and counts the record reads (scans, key
/// look-ups, counts) its transactions make: the conformance suite's proof that eager loading
/// costs one query per level, on every engine. It hides the wrapped transactions' optional
/// abilities, so the store takes its generic paths through it.
final class CountingStorageBackend: StorageBackend {
    private let wrapped: any StorageBackend
    private let reads = Atomic<Int>(0)

    init(_ wrapped: any StorageBackend) {
        self.wrapped = wrapped
    }

    /// The reads made so far.
    var readCount: Int { reads.load(ordering: .relaxed) }

    func countRead() { reads.wrappingAdd(1, ordering: .relaxed) }

    var readsWithoutWaiting: Bool { false }
    var isReadOnly: Bool { wrapped.isReadOnly }

    func read<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result {
        try wrapped.read { try body(CountingReadTransaction(wrapped: $0, backend: self)) }
    }

    func write<Result>(_ body: (any BackendWriteTransaction) throws -> Result) throws -> Result {
        try wrapped.write { try body(CountingWriteTransaction(wrapped: $0, backend: self)) }
    }

    /// Closing is left to the store that owns the wrapped backend.
    func close() throws {}
}

/// A read transaction that counts its record reads.
class CountingReadTransaction: BackendReadTransaction {
    let base: any BackendReadTransaction
    let backend: CountingStorageBackend

    init(wrapped: any BackendReadTransaction, backend: CountingStorageBackend) {
        base = wrapped
        self.backend = backend
    }

    func schema(of collection: String) throws -> CollectionSchema? { try base.schema(of: collection) }

    func scan(_ request: ScanRequest, _ body: (any StorageRow) throws -> Bool) throws {
        backend.countRead()
        try base.scan(request, body)
    }

    func count(in collection: String, where predicate: StoragePredicate?) throws -> Int {
        backend.countRead()
        return try base.count(in: collection, where: predicate)
    }

    func collectionNames() throws -> [String] { try base.collectionNames() }
    func nextAutoKey(in collection: String) throws -> Int64? { try base.nextAutoKey(in: collection) }
    func expectedRowCount(of request: ScanRequest) throws -> Int? { try base.expectedRowCount(of: request) }
    var schemaStamp: Int64? { base.schemaStamp }
    var ordersByNestedFields: Bool { base.ordersByNestedFields }

    func get(
        _ collection: String,
        key: StorageValue,
        columns: [String],
        _ body: (any StorageRow) throws -> Void
    ) throws -> Bool {
        backend.countRead()
        return try base.get(collection, key: key, columns: columns, body)
    }
}

/// A write transaction that counts its record reads.
final class CountingWriteTransaction: CountingReadTransaction, BackendWriteTransaction {
    private let writer: any BackendWriteTransaction

    init(wrapped: any BackendWriteTransaction, backend: CountingStorageBackend) {
        writer = wrapped
        super.init(wrapped: wrapped, backend: backend)
    }

    func prepareCollection(_ schema: CollectionSchema) throws -> CollectionSchema {
        try writer.prepareCollection(schema)
    }

    func makeWriter(for collection: String, columns: [String]) throws -> any RecordWriter {
        try writer.makeWriter(for: collection, columns: columns)
    }

    func delete(from collection: String, key: StorageValue) throws -> Bool {
        try writer.delete(from: collection, key: key)
    }

    func deleteAll(from collection: String, where predicate: StoragePredicate?) throws -> [StorageValue] {
        try writer.deleteAll(from: collection, where: predicate)
    }

    func dropCollection(_ collection: String) throws { try writer.dropCollection(collection) }

    func raiseNextAutoKey(in collection: String, to key: Int64) throws {
        try writer.raiseNextAutoKey(in: collection, to: key)
    }
}
