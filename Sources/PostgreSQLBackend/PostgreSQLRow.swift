internal import CPostgreSQL
import Foundation
import Storage

/// One row of a binary-format result, read by column position straight from libpq's buffer.
/// Valid only while its result is alive (during the scan callback).
struct PostgreSQLRow: StorageRow {
    let result: OpaquePointer
    var row: Int32
    /// The column types of the result, by position.
    let types: [Oid]

    init(result: OpaquePointer, row: Int32 = 0, types: [Oid]) {
        self.result = result
        self.row = row
        self.types = types
    }

    /// The column types of `result`.
    static func types(of result: OpaquePointer) -> [Oid] {
        (0..<PQnfields(result)).map { PQftype(result, $0) }
    }

    func value(at index: Int) -> StorageValue {
        let column = Int32(index)
        guard index < types.count, PQgetisnull(result, row, column) == 0 else { return .null }
        let length = Int(PQgetlength(result, row, column))
        guard let pointer = PQgetvalue(result, row, column) else { return .null }
        let raw = UnsafeRawPointer(pointer)
        switch types[index] {
        case PostgreSQLType.int8:
            return .integer(Int64(bigEndian: raw.loadUnaligned(as: Int64.self)))
        case PostgreSQLType.int4:
            return .integer(Int64(Int32(bigEndian: raw.loadUnaligned(as: Int32.self))))
        case PostgreSQLType.int2:
            return .integer(Int64(Int16(bigEndian: raw.loadUnaligned(as: Int16.self))))
        case PostgreSQLType.oid:
            return .integer(Int64(UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self))))
        case PostgreSQLType.bool:
            return .integer(raw.load(as: UInt8.self) == 0 ? 0 : 1)
        case PostgreSQLType.float8:
            return .real(Double(bitPattern: UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))))
        case PostgreSQLType.float4:
            return .real(Double(Float(bitPattern: UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self)))))
        case PostgreSQLType.bytea:
            return .blob(Data(bytes: raw, count: length))
        default:
            // text, varchar, name and anything else this backend never asks for: binary text is
            // the UTF-8 bytes themselves.
            return .text(String(decoding: UnsafeRawBufferPointer(start: raw, count: length), as: UTF8.self))
        }
    }

    // The typed reads decode the binary field straight from libpq's buffer, as `value(at:)`
    // does, without making a `StorageValue`: the length first (a fixed-width number's length
    // tells a value from a null, which libpq reports with length 0), then the bytes.

    /// The bytes and length of the field at `index` when its column's type is `type`-like (as
    /// `accepts` says) and the field is not null; `nil` otherwise.
    @inline(__always)
    private func field(at index: Int, _ accepts: (Oid) -> Bool) -> (bytes: UnsafeRawPointer, length: Int, type: Oid)? {
        guard index >= 0, index < types.count else { return nil }
        let type = types[index]
        guard accepts(type) else { return nil }
        let column = Int32(truncatingIfNeeded: index)
        let length = Int(PQgetlength(result, row, column))
        if length == 0, PQgetisnull(result, row, column) != 0 { return nil }
        guard let pointer = PQgetvalue(result, row, column) else { return nil }
        return (UnsafeRawPointer(pointer), length, type)
    }

    func text(at index: Int) -> String? {
        guard let field = field(at: index, PostgreSQLType.readsAsText) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: field.bytes, count: field.length), as: UTF8.self)
    }

    func integer(at index: Int) -> Int64? {
        guard let field = field(at: index, PostgreSQLType.readsAsInteger) else { return nil }
        let raw = field.bytes
        switch field.type {
        case PostgreSQLType.int8: return Int64(bigEndian: raw.loadUnaligned(as: Int64.self))
        case PostgreSQLType.int4: return Int64(Int32(bigEndian: raw.loadUnaligned(as: Int32.self)))
        case PostgreSQLType.int2: return Int64(Int16(bigEndian: raw.loadUnaligned(as: Int16.self)))
        case PostgreSQLType.oid: return Int64(UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self)))
        default: return raw.load(as: UInt8.self) == 0 ? 0 : 1
        }
    }

    func real(at index: Int) -> Double? {
        guard let field = field(at: index, PostgreSQLType.readsAsReal) else { return nil }
        let raw = field.bytes
        if field.type == PostgreSQLType.float8 {
            return Double(bitPattern: UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)))
        }
        return Double(Float(bitPattern: UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self))))
    }

    func blob(at index: Int) -> Data? {
        guard let field = field(at: index, { $0 == PostgreSQLType.bytea }) else { return nil }
        return Data(bytes: field.bytes, count: field.length)
    }
}

extension PostgreSQLType {
    /// Whether `value(at:)` reads a field of `type` as `.integer`.
    @inline(__always)
    static func readsAsInteger(_ type: Oid) -> Bool {
        type == int8 || type == int4 || type == int2 || type == oid || type == bool
    }

    /// Whether `value(at:)` reads a field of `type` as `.real`.
    @inline(__always)
    static func readsAsReal(_ type: Oid) -> Bool {
        type == float8 || type == float4
    }

    /// Whether `value(at:)` reads a field of `type` as `.text`: every type it does not read as
    /// a number or bytes.
    @inline(__always)
    static func readsAsText(_ type: Oid) -> Bool {
        !readsAsInteger(type) && !readsAsReal(type) && type != bytea
    }
}
