internal import CPostgreSQL
import Foundation
import Storage

/// Statement parameters in PostgreSQL's binary format, laid out in one byte buffer: no
/// allocation per value, and no text conversion of numbers.
struct PostgreSQLParameters {
    private(set) var bytes: [UInt8] = []
    private(set) var offsets: [Int] = []
    private(set) var lengths: [Int32] = []

    var count: Int { offsets.count }
    /// Whether a value over `PostgreSQLRecordWriter.maximumValueBytes` was appended (as an empty
    /// one: it is never sent).
    private(set) var hasOversizedValue = false

    init() {}

    init(_ values: [StorageValue]) {
        for value in values { append(value) }
    }

    /// The fields of one COPY binary tuple (see `forEachField(of:_:)`), each a parameter: COPY
    /// and parameters share the binary formats. The fields are copied with one `memcpy` each and
    /// their lengths loaded whole, not byte by byte through `Slice` and a `reduce` per length
    /// (docs/BENCHMARKS.md).
    init(copyTuple tuple: UnsafeRawBufferPointer) {
        bytes.reserveCapacity(tuple.count)
        Self.forEachField(of: tuple) { offset, length in
            guard length >= 0 else {
                offsets.append(-1)
                lengths.append(0)
                return
            }
            offsets.append(bytes.count)
            lengths.append(length)
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: tuple[offset..<offset + Int(length)]))
        }
    }

    /// Calls `body` with the offset and the length (-1 for null) of each field of a COPY binary
    /// tuple: a 16-bit field count, then each field's 32-bit length and its bytes, in network byte
    /// order.
    @inline(__always)
    static func forEachField(of tuple: UnsafeRawBufferPointer, _ body: (_ offset: Int, _ length: Int32) -> Void) {
        let fields = tuple.count >= 2 ? Int(tuple.loadUnaligned(as: UInt16.self).bigEndian) : 0
        var offset = 2
        var field = 0
        while field < fields, offset + 4 <= tuple.count {
            let length = Int32(bitPattern: tuple.loadUnaligned(fromByteOffset: offset, as: UInt32.self).bigEndian)
            offset += 4
            body(offset, length)
            if length > 0 { offset += Int(length) }
            field += 1
        }
    }

    /// Appends one value: int8, float8, text or bytea, or SQL null.
    mutating func append(_ value: StorageValue) {
        if value.isNull {
            offsets.append(-1)
            lengths.append(0)
            return
        }
        offsets.append(bytes.count)
        lengths.append(Int32(clamping: appendPayload(value)))
    }

    /// Appends a one-dimensional array (binary array format) of `values`, each of `elementType`
    /// (int8, float8, text or bytea; nulls allowed).
    mutating func appendArray(_ values: [StorageValue], elementType: Oid) {
        let start = bytes.count
        offsets.append(start)
        lengths.append(0)
        append32(1)  // dimensions
        append32(values.contains(where: \.isNull) ? 1 : 0)
        append32(UInt32(elementType))
        append32(UInt32(values.count))
        append32(1)  // lower bound
        for value in values {
            guard !value.isNull else {
                append32(UInt32(bitPattern: -1))
                continue
            }
            let lengthAt = bytes.count
            append32(0)
            let length = UInt32(appendPayload(value)).bigEndian
            withUnsafeBytes(of: length) { bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0) }
        }
        lengths[lengths.count - 1] = Int32(clamping: bytes.count - start)
    }

    /// Appends the binary form of a non-null value.
    /// - Returns: its length in bytes.
    private mutating func appendPayload(_ value: StorageValue) -> Int {
        let start = bytes.count
        switch value {
        case .text(let text) where text.utf8.count > PostgreSQLRecordWriter.maximumValueBytes:
            // Not copied: `checkSize` refuses the statement before it is sent.
            hasOversizedValue = true
        case .blob(let data) where data.count > PostgreSQLRecordWriter.maximumValueBytes:
            hasOversizedValue = true
        case .null: break
        case .integer(let number): appendInteger(UInt64(bitPattern: number))
        case .real(let number): appendInteger(number.bitPattern)
        case .text(let text):
            var text = text
            text.withUTF8 { bytes.append(contentsOf: $0) }
        case .blob(let data): bytes.append(contentsOf: data)
        }
        return bytes.count - start
    }

    private mutating func append32(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    private mutating func appendInteger(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Throws when the server would refuse the parameters: a value over
    /// `PostgreSQLRecordWriter.maximumValueBytes`, or all of them over `maximumRecordBytes` (the
    /// protocol message that carries them has a limit, past which the server ends the
    /// connection). Checked before a statement is sent, so nothing is.
    /// - Throws: `StorageError` with code `.limitExceeded` naming the limit.
    func checkSize(_ context: String, collection: String?) throws {
        guard hasOversizedValue else {
            let total = bytes.count + 4 * count
            guard total > PostgreSQLRecordWriter.maximumRecordBytes else { return }
            throw StorageError(
                .limitExceeded,
                context + ": a statement's values take \(total) bytes, more than PostgreSQL takes in one statement"
                    + " (\(PostgreSQLRecordWriter.maximumRecordBytes) bytes)",
                collection: collection
            )
        }
        throw StorageError(
            .limitExceeded,
            context + ": a value in the statement is more than PostgreSQL holds in one value"
                + " (\(PostgreSQLRecordWriter.maximumValueBytes) bytes)",
            collection: collection
        )
    }

    /// Calls `body` with libpq's parameter arrays: values, lengths and formats (all binary).
    func withArrays<Result>(
        _ body: (
            Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?
        ) throws -> Result
    ) rethrows -> Result {
        // A non-empty buffer, so that a zero-length value still gets a non-null pointer (null
        // pointers are SQL nulls).
        let storage = bytes.isEmpty ? [0] : bytes
        let count = count
        // The formats and pointers on the stack (for a statement's usual few parameters): two
        // heap arrays per statement fewer.
        return try withUnsafeTemporaryAllocation(of: Int32.self, capacity: max(count, 1)) { formats in
            formats.initialize(repeating: 1)
            return try withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: max(count, 1)) {
                values in
                try storage.withUnsafeBufferPointer { buffer in
                    let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
                    for index in 0..<count {
                        let offset = offsets[index]
                        values.initializeElement(at: index, to: offset < 0 ? nil : base + offset)
                    }
                    return try lengths.withUnsafeBufferPointer { lengths in
                        try body(
                            Int32(count),
                            UnsafePointer(values.baseAddress),
                            lengths.baseAddress,
                            UnsafePointer(formats.baseAddress)
                        )
                    }
                }
            }
        }
    }
}
