// The libFuzzer entry point for the reflective row decoder: arbitrary rows of StorageValues
// (as any backend may hand back from a damaged or foreign store) decoded into a Codable type
// that uses every mapping. Not a SwiftPM target: scripts/fuzz-run.sh compiles it into the
// Storage module with `-sanitize=fuzzer,address`.
import Foundation

private enum FuzzMood: String, Codable { case calm, busy }
private enum FuzzLevel: Int, Codable {
    case low = 1
    case high = 9
}

private struct FuzzNested: Codable {
    var name: String
    var values: [Int?]
    var child: [String: Double]?
}

/// A custom column coding, checked by its own initializer.
private struct FuzzHex: Codable, ColumnCodable {
    var value: UInt32
    static var columnType: ColumnType { .text }
    var storageValue: StorageValue { .text(String(value, radix: 16)) }
    init(storageValue: StorageValue) throws {
        guard case .text(let text) = storageValue, let value = UInt32(text, radix: 16) else {
            throw StorageError(.typeMismatch, "not hex: \(storageValue)")
        }
        self.value = value
    }
}

private struct FuzzModel: Codable {
    var id: Int64
    var int: Int
    var int8: Int8
    var uint16: UInt16
    var uint64: UInt64
    var double: Double
    var float: Float
    var flag: Bool
    var text: String
    var data: Data
    var date: Date
    var uuid: UUID
    var url: URL?
    var decimal: Decimal?
    var mood: FuzzMood
    var level: FuzzLevel?
    var nested: FuzzNested?
    var list: [String]
    var hex: FuzzHex?
    var optionalInt: Int32?
    var optionalText: String?
}

private let modelColumns = [
    "id", "int", "int8", "uint16", "uint64", "double", "float", "flag", "text", "data", "date", "uuid", "url",
    "decimal", "mood", "level", "nested", "list", "hex", "optionalInt", "optionalText",
]

private struct FuzzRow: StorageRow {
    var values: [StorageValue]
    func value(at index: Int) -> StorageValue { index < values.count ? values[index] : .null }
}

/// Reads values from the input: a tag byte, then the payload.
private struct FuzzReader {
    var bytes: UnsafeRawBufferPointer
    var offset = 0

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func take(_ count: Int) -> UnsafeRawBufferPointer {
        let end = min(bytes.count, offset + count)
        defer { offset = end }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
    }

    mutating func word() -> UInt64 {
        take(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func value() -> StorageValue? {
        guard let tag = byte() else { return nil }
        switch tag % 8 {
        case 0: return .null
        case 1: return .integer(Int64(bitPattern: word()))
        case 2: return .integer(Int64(Int8(bitPattern: byte() ?? 0)))
        case 3: return .real(Double(bitPattern: word()))
        case 4, 5:
            let count = Int(byte() ?? 0)
            return .text(String(decoding: take(count), as: UTF8.self))
        case 6: return .blob(Data(take(Int(byte() ?? 0))))
        default:
            return .text(
                ["calm", "busy", "1", "9", "ff", "{\"name\":\"n\",\"values\":[1,null]}", "[\"a\"]"][
                    Int(byte() ?? 0) % 7
                ]
            )
        }
    }
}

/// The first byte picks the column layout: the model's own order, or shuffled, with columns
/// missing or extra (so the decoder's by-position fast path and its by-name fallback both run).
/// The rest is a row of values.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRows(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let layout = data[0]
    var columns = modelColumns
    if layout & 1 != 0 { columns.reverse() }
    if layout & 2 != 0 { columns.remove(at: Int(layout >> 3) % columns.count) }
    if layout & 4 != 0 { columns.insert("extra", at: Int(layout >> 3) % columns.count) }
    var reader = FuzzReader(bytes: UnsafeRawBufferPointer(start: data + 1, count: size - 1))
    var values: [StorageValue] = []
    while values.count < columns.count, let value = reader.value() { values.append(value) }
    let schema = CollectionSchema(
        name: "fuzz",
        columns: columns.map { ColumnDefinition(name: $0, type: .untyped) },
        primaryKey: "id"
    )
    let decoder = RowDecoder(typeName: "FuzzModel", collection: "fuzz", plan: ReadPlan(schema))
    do {
        _ = try decoder.decode(FuzzModel.self, from: FuzzRow(values: values))
    } catch is StorageError {
        // A refusal is fine; only a crash, a leak or an overflow is a finding.
    } catch {
        fatalError("the row decoder threw an error that is not a StorageError: \(error)")
    }
    return 0
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
    func text(_ string: String) -> [UInt8] { [4, UInt8(string.utf8.count)] + Array(string.utf8) }
    func integer(_ number: Int8) -> [UInt8] { [2, UInt8(bitPattern: number)] }
    var row: [UInt8] = [0]
    row += integer(1) + integer(-2) + integer(3) + integer(4) + integer(5)
    row += [3, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0] + [3, 0x40, 0, 0, 0, 0, 0, 0, 0] + integer(1)
    row += text("hello") + [6, 2, 0, 255] + integer(100)
    row += text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F") + text("https://example.com") + text("1.25")
    row += [7, 0] + [7, 3] + [7, 5] + [7, 6] + [7, 4] + integer(7) + [0]
    _ = FileManager.default.createFile(atPath: folder + "/seed-0", contents: Data(row))
    return 0
}
