import Foundation
import Storage

/// The byte form of a record: a format byte, then one entry per non-null field, each a varint
/// field id, a type tag and the payload. Fields are found by id, never by position or name, so a
/// record written before a column was added (or after one stopped being written) still decodes:
/// a field it lacks reads as null, a field nobody asks for is skipped.
///
/// Payloads: integers zig-zag varints, reals 8 bytes little-endian, text and blobs a varint length
/// and the bytes.
enum LMDBRecordCoding {
    static let formatVersion: UInt8 = 1
    static let integerTag: UInt8 = 1
    static let realTag: UInt8 = 2
    static let textTag: UInt8 = 3
    static let blobTag: UInt8 = 4

    /// Appends one field; null fields are not written (they read as null).
    static func appendField(_ field: Int, _ value: StorageValue, to bytes: inout [UInt8]) {
        switch value {
        case .null:
            return
        case .integer(let number):
            appendVarint(UInt64(field), to: &bytes)
            bytes.append(integerTag)
            appendVarint(UInt64(bitPattern: (number << 1) ^ (number >> 63)), to: &bytes)
        case .real(let number):
            appendVarint(UInt64(field), to: &bytes)
            bytes.append(realTag)
            var bits = number.bitPattern
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: bits))
                bits >>= 8
            }
        case .text(let text):
            appendVarint(UInt64(field), to: &bytes)
            bytes.append(textTag)
            var text = text
            text.withUTF8 { utf8 in
                appendVarint(UInt64(utf8.count), to: &bytes)
                bytes.append(contentsOf: utf8)
            }
        case .blob(let data):
            appendVarint(UInt64(field), to: &bytes)
            bytes.append(blobTag)
            appendVarint(UInt64(data.count), to: &bytes)
            bytes.append(contentsOf: data)
        }
    }

    /// The most bytes `writeField` writes for `value` (a varint takes at most 10).
    static func maximumFieldSize(_ value: StorageValue) -> Int {
        switch value {
        case .null: 0
        case .integer: 21
        case .real: 19
        case .text(let text): 21 + text.utf8.count
        case .blob(let data): 21 + data.count
        }
    }

    /// Writes one field as `appendField` appends it, to raw memory with room for
    /// `maximumFieldSize(value)` bytes: an append to an array checks its capacity and uniqueness
    /// per byte, which was a tenth of an insert.
    /// - Returns: the number of bytes written.
    static func writeField(_ field: Int, _ value: StorageValue, to out: UnsafeMutableRawPointer) -> Int {
        var offset = 0
        func tag(_ tag: UInt8) {
            offset = writeVarint(UInt64(field), to: out, at: offset)
            out.storeBytes(of: tag, toByteOffset: offset, as: UInt8.self)
            offset += 1
        }
        switch value {
        case .null:
            return 0
        case .integer(let number):
            tag(integerTag)
            return writeVarint(UInt64(bitPattern: (number << 1) ^ (number >> 63)), to: out, at: offset)
        case .real(let number):
            tag(realTag)
            withUnsafeBytes(of: number.bitPattern.littleEndian) { bytes in
                (out + offset).copyMemory(from: bytes.baseAddress!, byteCount: 8)
            }
            return offset + 8
        case .text(let text):
            tag(textTag)
            // A native string's bytes where they are; `withUTF8` needs a copy of the string.
            let written = text.utf8.withContiguousStorageIfAvailable { utf8 -> Int in
                let start = writeVarint(UInt64(utf8.count), to: out, at: offset)
                if let base = utf8.baseAddress { (out + start).copyMemory(from: base, byteCount: utf8.count) }
                return start + utf8.count
            }
            if let written { return written }
            var copy = text
            return copy.withUTF8 { utf8 in
                offset = writeVarint(UInt64(utf8.count), to: out, at: offset)
                if let base = utf8.baseAddress { (out + offset).copyMemory(from: base, byteCount: utf8.count) }
                return offset + utf8.count
            }
        case .blob(let data):
            tag(blobTag)
            offset = writeVarint(UInt64(data.count), to: out, at: offset)
            data.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { (out + offset).copyMemory(from: base, byteCount: bytes.count) }
            }
            return offset + data.count
        }
    }

    /// Writes a varint at `offset`; returns the offset past it.
    static func writeVarint(_ value: UInt64, to out: UnsafeMutableRawPointer, at offset: Int) -> Int {
        var value = value
        var offset = offset
        while value >= 0x80 {
            out.storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, toByteOffset: offset, as: UInt8.self)
            offset += 1
            value >>= 7
        }
        out.storeBytes(of: UInt8(value), toByteOffset: offset, as: UInt8.self)
        return offset + 1
    }

    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    @inline(__always)
    static func readVarint(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count && shift < 64 {
            let byte = bytes[offset]
            offset += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
        return nil
    }

    /// Walks the fields of a record: calls `body` with each field id, the offsets where its entry
    /// and its tag start, and the offset past it.
    /// - Returns: `false` when the bytes are not a well-formed record.
    @inline(__always)
    static func forEachField(
        in record: UnsafeRawBufferPointer,
        _ body: (_ field: Int, _ start: Int, _ tagOffset: Int, _ end: Int) -> Void
    ) -> Bool {
        guard record.count >= 1, record[0] == formatVersion else { return false }
        var offset = 1
        while offset < record.count {
            let start = offset
            guard let field = readVarint(record, &offset), field <= UInt64(Int32.max), offset < record.count else {
                return false
            }
            let tagOffset = offset
            guard let end = endOfValue(in: record, tagOffset: tagOffset) else { return false }
            body(Int(field), start, tagOffset, end)
            offset = end
        }
        return true
    }

    /// The offset past the value whose tag is at `tagOffset`. Inlined into `forEachField`: a
    /// call per field cost about a tenth of loading a ten-field record.
    @inline(__always)
    static func endOfValue(in record: UnsafeRawBufferPointer, tagOffset: Int) -> Int? {
        var offset = tagOffset + 1
        switch record[tagOffset] {
        case integerTag:
            return readVarint(record, &offset) == nil ? nil : offset
        case realTag:
            return offset + 8 <= record.count ? offset + 8 : nil
        case textTag, blobTag:
            guard let length = readVarint(record, &offset), length <= UInt64(record.count - offset) else {
                return nil
            }
            return offset + Int(length)
        default:
            return nil
        }
    }

    /// A blob's bytes as `Data`. `Data(bytes:count:)` copies with one `memcpy`; `Data(_:)` of the
    /// buffer would go through the generic sequence initializer.
    @inline(__always)
    static func copy(_ bytes: UnsafeRawBufferPointer) -> Data {
        bytes.isEmpty ? Data() : Data(bytes: bytes.baseAddress!, count: bytes.count)
    }

    /// Decodes (copies out) the value whose tag is at `tagOffset`.
    static func value(in record: UnsafeRawBufferPointer, tagOffset: Int) -> StorageValue {
        var offset = tagOffset + 1
        switch record[tagOffset] {
        case integerTag:
            guard let raw = readVarint(record, &offset) else { return .null }
            return .integer(Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1))))
        case realTag:
            var bits: UInt64 = 0
            for index in (0..<8).reversed() { bits = bits << 8 | UInt64(record[offset + index]) }
            return .real(Double(bitPattern: bits))
        case textTag:
            guard let length = readVarint(record, &offset) else { return .null }
            let slice = UnsafeRawBufferPointer(rebasing: record[offset..<offset + Int(length)])
            return .text(String(decoding: slice, as: UTF8.self))
        case blobTag:
            guard let length = readVarint(record, &offset) else { return .null }
            return .blob(copy(UnsafeRawBufferPointer(rebasing: record[offset..<offset + Int(length)])))
        default:
            return .null
        }
    }
}

/// A record read in place from the mapped bytes: one pass finds where each field starts, and a
/// value is decoded (copied out) only when asked for. Reused for every row of a scan; valid only
/// while its transaction is open and the bytes it was loaded with are current.
final class LMDBRow: StorageRow {
    /// For each requested column, its field id, or -1 when the collection has no such column.
    private let requested: [Int]
    /// Where each field's tag is in the current record, by field id; -1 when absent. Raw memory
    /// rather than stored `var`s: every access to a stored `var` of a class pays a dynamic
    /// exclusivity check, and this is touched once per field per record.
    private let offsets: UnsafeMutableBufferPointer<Int>
    private let record: UnsafeMutablePointer<UnsafeRawBufferPointer>

    init(requested: [Int], fieldCount: Int) {
        self.requested = requested
        offsets = UnsafeMutableBufferPointer.allocate(capacity: max(fieldCount, 1))
        offsets.initialize(repeating: -1)
        record = UnsafeMutablePointer.allocate(capacity: 1)
        record.initialize(to: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    deinit {
        offsets.deallocate()
        record.deallocate()
    }

    /// Points the row at a record's bytes.
    /// - Returns: `false` when the bytes are not a record.
    func load(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let offsets = self.offsets
        offsets.update(repeating: -1)
        record.pointee = bytes
        return LMDBRecordCoding.forEachField(in: bytes) { field, _, tagOffset, _ in
            if field < offsets.count { offsets[field] = tagOffset }
        }
    }

    /// The value of a field of the current record.
    func value(field: Int) -> StorageValue {
        guard field >= 0, field < offsets.count else { return .null }
        let offset = offsets[field]
        return offset < 0 ? .null : LMDBRecordCoding.value(in: record.pointee, tagOffset: offset)
    }

    func value(at index: Int) -> StorageValue {
        value(field: requested[index])
    }

    /// Where the tag of the field at `index` of the requested columns is, when the current record
    /// has that field and its tag is `tag`; `nil` otherwise (the typed reads then answer `nil`,
    /// and the caller reads `value(at:)`).
    @inline(__always)
    private func payload(at index: Int, tag: UInt8) -> Int? {
        let field = requested[index]
        guard field >= 0, field < offsets.count else { return nil }
        let offset = offsets[field]
        guard offset >= 0, record.pointee[offset] == tag else { return nil }
        return offset + 1
    }

    // The typed reads decode the payload straight from the record bytes, as `value(at:)` does,
    // without making a `StorageValue`.

    func text(at index: Int) -> String? {
        guard var offset = payload(at: index, tag: LMDBRecordCoding.textTag) else { return nil }
        let record = self.record.pointee
        guard let length = LMDBRecordCoding.readVarint(record, &offset) else { return nil }
        return String(
            decoding: UnsafeRawBufferPointer(rebasing: record[offset..<offset + Int(length)]),
            as: UTF8.self
        )
    }

    func withText<Result>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result? {
        guard var offset = payload(at: index, tag: LMDBRecordCoding.textTag) else { return nil }
        let record = self.record.pointee
        guard let length = LMDBRecordCoding.readVarint(record, &offset) else { return nil }
        return try body(UnsafeRawBufferPointer(rebasing: record[offset..<offset + Int(length)]))
    }

    func integer(at index: Int) -> Int64? {
        guard var offset = payload(at: index, tag: LMDBRecordCoding.integerTag),
            let raw = LMDBRecordCoding.readVarint(record.pointee, &offset)
        else { return nil }
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    func real(at index: Int) -> Double? {
        guard let offset = payload(at: index, tag: LMDBRecordCoding.realTag) else { return nil }
        // `load` checked that the eight bytes are there.
        let bits = UInt64(littleEndian: record.pointee.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        return Double(bitPattern: bits)
    }

    func blob(at index: Int) -> Data? {
        guard var offset = payload(at: index, tag: LMDBRecordCoding.blobTag) else { return nil }
        let record = self.record.pointee
        guard let length = LMDBRecordCoding.readVarint(record, &offset) else { return nil }
        return LMDBRecordCoding.copy(UnsafeRawBufferPointer(rebasing: record[offset..<offset + Int(length)]))
    }
}
