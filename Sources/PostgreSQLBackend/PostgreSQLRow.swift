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
}

/// A row of values copied out of a result: what a stream keeps when it must hand its connection
/// to another statement before its rows are read.
struct BufferedRow: StorageRow {
    let values: [StorageValue]

    func value(at index: Int) -> StorageValue {
        index < values.count ? values[index] : .null
    }
}
