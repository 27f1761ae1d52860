// The libFuzzer entry point for the LMDB backend's decoders: the record format
// (LMDBRecordCoding, read through LMDBRow as a scan does), the key components (LMDBKeyCoding)
// and the collection entries of the metadata database (JSON into LMDBCollection). Not a SwiftPM
// target: scripts/fuzz-run.sh compiles it with the LMDBBackend sources and
// `-sanitize=fuzzer,address`.
import Foundation
import Storage

/// Whether two values are the same, reals compared by their bits.
private func same(_ lhs: StorageValue, _ rhs: StorageValue) -> Bool {
    if case .real(let a) = lhs, case .real(let b) = rhs { return a.bitPattern == b.bitPattern }
    return lhs == rhs
}

/// The first byte picks what the rest is:
/// - 0: a stored record, read as a scan reads it; when it is well formed, its values are
///   written again and must read back the same, and each value's key component must order as
///   `StorageValue.compare` orders the values.
/// - 1: index or primary keys: a chain of key components, walked as a range scan walks them.
/// - 2: a collection's entry in the metadata database.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecords(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    switch data[0] % 3 {
    case 0: fuzzRecord(input)
    case 1: fuzzKey(input)
    default: fuzzCollectionEntry(input)
    }
    return 0
}

private func fuzzRecord(_ input: UnsafeRawBufferPointer) {
    let fieldCount = 8
    let row = LMDBRow(requested: Array(-1..<fieldCount + 1), fieldCount: fieldCount)
    guard row.load(input) else { return }
    let values = (0..<fieldCount + 2).map { row.value(at: $0) }
    // Field ids past fieldCount are skipped by the row, so compare the ones it keeps.
    var bytes = [LMDBRecordCoding.formatVersion]
    for field in 0..<fieldCount { LMDBRecordCoding.appendField(field, values[field + 1], to: &bytes) }
    bytes.withUnsafeBytes { again in
        let copy = LMDBRow(requested: Array(0..<fieldCount), fieldCount: fieldCount)
        guard copy.load(again) else { fatalError("a record written from decoded values does not decode") }
        for field in 0..<fieldCount where !same(copy.value(at: field), values[field + 1]) {
            fatalError("field \(field) reads back as \(copy.value(at: field)), not \(values[field + 1])")
        }
    }
    let present = values.filter { !$0.isNull }
    for (index, lhs) in present.enumerated() {
        for rhs in present[index...] {
            if case .real(let number) = lhs, number.isNaN { continue }
            if case .real(let number) = rhs, number.isNaN { continue }
            let keys = (LMDBKeyCoding.encode(lhs), LMDBKeyCoding.encode(rhs))
            let order = keys.0.withUnsafeBytes { a in keys.1.withUnsafeBytes { b in LMDBKeyCoding.compare(a, b) } }
            let expected = StorageValue.compare(lhs, rhs).signum()
            if order != expected {
                fatalError("keys of \(lhs) and \(rhs) order as \(order), the values as \(expected)")
            }
            let end = keys.0.withUnsafeBytes { LMDBKeyCoding.skipComponent(in: $0, at: 0) }
            if end != keys.0.count { fatalError("the key component of \(lhs) does not end where it should") }
        }
    }
}

private func fuzzKey(_ input: UnsafeRawBufferPointer) {
    var offset = 0
    while let next = LMDBKeyCoding.skipComponent(in: input, at: offset) {
        guard next > offset, next <= input.count else { fatalError("a key component ends at \(next)") }
        offset = next
    }
    // A range scan's bound test, with the input's first half as the bound.
    let bound = Array(input.prefix(input.count / 2))
    _ = LMDBKeyCoding.isPast(input, bound)
}

private func fuzzCollectionEntry(_ input: UnsafeRawBufferPointer) {
    guard let collection = try? JSONDecoder().decode(LMDBCollection.self, from: Data(input)) else { return }
    let info = LMDBCollectionInfo(collection)
    _ = info.fields(of: collection.fields.map(\.name) + ["missing"])
    _ = collection.keyField
    _ = collection.keyType
    _ = info.schema.columns.count
}

/// With `FUZZ_SEEDS=folder` set, writes a starting corpus there, then lets the run go on.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
)
    -> CInt
{
    guard let folder = ProcessInfo.processInfo.environment["FUZZ_SEEDS"] else { return 0 }
    var record = [LMDBRecordCoding.formatVersion]
    let values: [StorageValue] = [.integer(-5), .real(2.5), .text("a\u{0}b"), .blob(Data([0, 1])), .integer(.max)]
    for (field, value) in values.enumerated() { LMDBRecordCoding.appendField(field, value, to: &record) }
    var key: [UInt8] = []
    for value in values + [.null, .real(-1e300), .real(1e300)] { LMDBKeyCoding.append(value, to: &key) }
    let schema = CollectionSchema(
        name: "people",
        columns: [.init(name: "id", type: .integer), .init(name: "name", type: .text)],
        primaryKey: "id",
        indexes: [.init(["name"], unique: true)]
    )
    let entry = (try? JSONEncoder().encode(LMDBCollection(creating: schema))).map { [UInt8]($0) } ?? []
    for (index, seed) in [[0] + record, [1] + key, [2] + entry].enumerated() {
        _ = FileManager.default.createFile(atPath: folder + "/seed-\(index)", contents: Data(seed))
    }
    return 0
}
