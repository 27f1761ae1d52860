import Foundation

/// Appends the bytes of one archive: header, values, and the checksum at `finish()`.
///
/// Containers are written in place: `beginContainer` leaves room for the body length and the
/// count, which `endContainer` and `incrementCount` fill in, so no value is ever copied twice.
///
/// An archive larger than `maximumSize` is never finished (`finish()` returns `nil`): the reader
/// refuses such a file, so the writer refuses it first. A text or bytes value that would pass
/// the limit is not copied at all, so a refusal costs no memory beyond the value itself.
struct ArchiveWriter {
    private(set) var bytes: [UInt8]
    /// The largest archive this writer finishes, checksum included.
    let maximumSize: Int
    /// Set when a container grew past what its u32 length field can hold, or the archive past
    /// `maximumSize`.
    private var overflowed = false

    /// Starts an archive of `kind` with its header.
    /// - Parameters:
    ///   - kind: what the archive holds.
    ///   - capacity: the bytes reserved at first.
    ///   - maximumSize: `ArchiveLayout.maximumSize`; smaller only in tests.
    init(kind: ArchiveKind, capacity: Int = 256, maximumSize: Int = ArchiveLayout.maximumSize) {
        self.maximumSize = maximumSize
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(contentsOf: ArchiveLayout.magic)
        bytes.append(ArchiveLayout.version)
        bytes.append(kind.rawValue)
        bytes.append(0)
        bytes.append(0)
    }

    var count: Int { bytes.count }

    @inline(__always)
    mutating func append(_ tag: ArchiveTag) {
        bytes.append(tag.rawValue)
    }

    /// Appends raw bytes. Through a typed buffer: `append(contentsOf:)` of a raw buffer goes
    /// byte by byte, of a typed one it is a single copy.
    @inline(__always)
    private mutating func appendRaw(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        bytes.append(
            contentsOf: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: buffer.count)
        )
    }

    @inline(__always)
    mutating func appendFixed<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { appendRaw($0) }
    }

    /// An unsigned LEB128 varint: 7 bits a byte, low bits first.
    @inline(__always)
    mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    @inline(__always)
    mutating func appendBytes(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count <= maximumSize - bytes.count else {
            // Not copied: the archive can no longer be finished. An empty run keeps the
            // containers' offsets valid for the writes that follow.
            overflowed = true
            appendVarint(0)
            return
        }
        appendVarint(UInt64(buffer.count))
        appendRaw(buffer)
    }

    mutating func appendText(_ tag: ArchiveTag, _ text: String) {
        append(tag)
        var text = text
        text.withUTF8 { appendBytes(UnsafeRawBufferPointer($0)) }
    }

    /// A key of a keyed container (no tag).
    mutating func appendKey(_ key: String) {
        var key = key
        key.withUTF8 { appendBytes(UnsafeRawBufferPointer($0)) }
    }

    mutating func appendInt(_ value: Int64) {
        append(.int)
        appendFixed(value)
    }

    mutating func appendUInt(_ value: UInt64) {
        append(.uint)
        appendFixed(value)
    }

    mutating func appendDouble(_ value: Double) {
        append(.double)
        appendFixed(value.bitPattern)
    }

    mutating func appendFloat(_ value: Float) {
        append(.float)
        appendFixed(value.bitPattern)
    }

    mutating func appendBool(_ value: Bool) {
        append(value ? .true : .false)
    }

    mutating func appendData(_ data: Data) {
        append(.data)
        data.withUnsafeBytes { appendBytes($0) }
    }

    mutating func appendUUID(_ uuid: UUID) {
        append(.uuid)
        withUnsafeBytes(of: uuid.uuid) { appendRaw($0) }
    }

    /// Starts a keyed or unkeyed container; returns its offset for `endContainer`.
    mutating func beginContainer(_ tag: ArchiveTag) -> Int {
        let start = bytes.count
        bytes.append(tag.rawValue)
        appendFixed(UInt64(0))
        return start
    }

    /// Adds one to the entry count of the container at `start`.
    @inline(__always)
    mutating func incrementCount(ofContainerAt start: Int) {
        let offset = start + 5
        let current =
            UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
        if current == UInt32.max { overflowed = true }
        patch(current &+ 1, at: offset)
    }

    /// Writes the body length of the container at `start`: everything appended since.
    mutating func endContainer(at start: Int) {
        let length = bytes.count - start - ArchiveLayout.containerHeaderSize
        if length > Int(UInt32.max) { overflowed = true }
        patch(UInt32(truncatingIfNeeded: length), at: start + 1)
    }

    /// Writes the body length and the entry count of the container at `start`.
    mutating func endContainer(at start: Int, count: UInt32) {
        endContainer(at: start)
        patch(count, at: start + 5)
    }

    /// The entry count written so far in the container at `start`.
    func count(ofContainerAt start: Int) -> Int {
        Int(bytes[start + 5]) | Int(bytes[start + 6]) << 8 | Int(bytes[start + 7]) << 16 | Int(bytes[start + 8]) << 24
    }

    private mutating func patch(_ value: UInt32, at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: value >> 24)
    }

    /// The finished archive, with its checksum; `nil` when it would be larger than
    /// `maximumSize` or a container outgrew its length field.
    mutating func finish() -> [UInt8]? {
        guard !overflowed, bytes.count <= maximumSize - ArchiveLayout.trailerSize else { return nil }
        let crc = CRC32.checksum(bytes)
        appendFixed(crc)
        return bytes
    }
}
