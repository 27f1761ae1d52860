import Foundation
import Storage

/// Reads the values of one archive, checking every length against the bytes that remain before
/// using it, so a damaged or hostile file gives a `StorageError` (`.corrupt`, naming the file),
/// never a crash or a large allocation.
///
/// Values are addressed by the offset of their tag. Containers carry their body length, so a
/// value is skipped without being read.
struct ArchiveReader {
    let bytes: [UInt8]
    /// The file, for error messages; `nil` for bytes that came from memory.
    let path: String?
    /// The offset of the root value.
    let rootOffset = ArchiveLayout.headerSize
    /// Where the values end (the checksum starts).
    let end: Int

    /// Checks the header and the checksum, and that the root value fills the file exactly.
    /// - Parameters:
    ///   - bytes: the whole file.
    ///   - path: the file's path, for messages; `nil` for an archive in memory.
    ///   - kind: what the archive must hold.
    ///   - verifyingChecksum: `false` only for the fuzzer, so that it reaches the value parser.
    /// - Throws: `StorageError` with code `.corrupt` naming the path when the header, the
    ///   checksum or the layout is wrong.
    init(bytes: [UInt8], path: String?, kind: ArchiveKind, verifyingChecksum: Bool = true) throws {
        self.bytes = bytes
        self.path = path
        let minimum = ArchiveLayout.headerSize + 1 + ArchiveLayout.trailerSize
        guard bytes.count >= minimum else {
            throw Self.corrupt("the archive is \(bytes.count) bytes long, shorter than any archive", path: path)
        }
        guard bytes.starts(with: ArchiveLayout.magic) else {
            throw Self.corrupt("the file is not an archive (wrong magic bytes)", path: path)
        }
        end = bytes.count - ArchiveLayout.trailerSize
        if verifyingChecksum {
            let stored =
                UInt32(bytes[end]) | UInt32(bytes[end + 1]) << 8 | UInt32(bytes[end + 2]) << 16
                | UInt32(bytes[end + 3]) << 24
            let computed = bytes.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[..<end])) }
            guard stored == computed else {
                throw Self.corrupt("the archive's checksum does not match its contents", path: path)
            }
        }
        guard bytes[4] == ArchiveLayout.version else {
            throw Self.corrupt("unsupported archive version \(bytes[4])", path: path)
        }
        guard bytes[5] == kind.rawValue else {
            throw Self.corrupt("the archive holds kind \(bytes[5]), expected \(kind)", path: path)
        }
        guard try skip(rootOffset) == end else {
            throw Self.corrupt("the root value does not end where the checksum starts", path: path)
        }
    }

    static func corrupt(_ message: String, path: String?) -> StorageError {
        StorageError(.corrupt, message + (path.map { " in \($0)" } ?? ""), path: path)
    }

    func corrupt(_ message: String, at offset: Int) -> StorageError {
        Self.corrupt("\(message) (at byte \(offset))", path: path)
    }

    // MARK: Primitives

    func tag(at offset: Int) throws -> ArchiveTag {
        guard offset >= 0, offset < end else { throw corrupt("a value is cut short", at: offset) }
        guard let tag = ArchiveTag(rawValue: bytes[offset]) else {
            throw corrupt("unknown type tag \(bytes[offset])", at: offset)
        }
        return tag
    }

    /// The 8 little-endian bytes at `offset`. Not generic: an unspecialized generic integer read
    /// went through `FixedWidthInteger`'s witness table for every shift.
    @inline(__always)
    func fixed(_: UInt64.Type, at offset: Int) throws -> UInt64 {
        guard offset >= 0, offset <= end - 8 else { throw corrupt("a number is cut short", at: offset) }
        return UInt64(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) })
    }

    @inline(__always)
    func fixed(_: Int64.Type, at offset: Int) throws -> Int64 {
        Int64(bitPattern: try fixed(UInt64.self, at: offset))
    }

    @inline(__always)
    func fixed(_: UInt32.Type, at offset: Int) throws -> UInt32 {
        guard offset >= 0, offset <= end - 4 else { throw corrupt("a number is cut short", at: offset) }
        return UInt32(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) })
    }

    /// A varint and the offset after it.
    @inline(__always)
    func varint(at offset: Int) throws -> (value: UInt64, next: Int) {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var position = offset
        while true {
            guard position < end else { throw corrupt("a length is cut short", at: offset) }
            let byte = bytes[position]
            position += 1
            guard shift < 64, shift < 63 || byte <= 1 else { throw corrupt("a length has too many bytes", at: offset) }
            value |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return (value, position) }
            shift += 7
        }
    }

    /// The byte range of a length-prefixed run starting at `offset` (the length's offset).
    @inline(__always)
    func run(at offset: Int) throws -> Range<Int> {
        let (length, start) = try varint(at: offset)
        guard length <= UInt64(end - start) else {
            throw corrupt("a length of \(length) bytes runs past the end of the archive", at: offset)
        }
        return start..<(start + Int(length))
    }

    /// The offset just after the value at `offset`.
    func skip(_ offset: Int) throws -> Int {
        switch try tag(at: offset) {
        case .null, .false, .true: return offset + 1
        case .int, .uint, .double, .date, .referenceDate: return try checked(offset + 9, from: offset)
        case .float: return try checked(offset + 5, from: offset)
        case .uuid: return try checked(offset + 17, from: offset)
        case .string, .data, .url, .decimal: return try run(at: offset + 1).upperBound
        case .keyed, .unkeyed: return try containerBody(at: offset).body.upperBound
        }
    }

    private func checked(_ next: Int, from offset: Int) throws -> Int {
        guard next <= end else { throw corrupt("a value is cut short", at: offset) }
        return next
    }

    /// The body range and entry count of the container at `offset`.
    func containerBody(at offset: Int) throws -> (body: Range<Int>, count: Int) {
        let length = try fixed(UInt32.self, at: offset + 1)
        let count = try fixed(UInt32.self, at: offset + 5)
        let start = offset + ArchiveLayout.containerHeaderSize
        guard UInt64(length) <= UInt64(end - start) else {
            throw corrupt("a container of \(length) bytes runs past the end of the archive", at: offset)
        }
        // Every entry takes at least one byte: a count above the length is a lie.
        guard count <= length else {
            throw corrupt("a container claims \(count) entries in \(length) bytes", at: offset)
        }
        return (start..<(start + Int(length)), Int(count))
    }

    func string(in range: Range<Int>, at offset: Int) throws -> String {
        let text = bytes.withUnsafeBufferPointer { all in
            String(validating: UnsafeBufferPointer(rebasing: all[range]), as: UTF8.self)
        }
        guard let text else {
            throw corrupt("text is not valid UTF-8", at: offset)
        }
        return text
    }

    // MARK: Containers

    /// One entry of a keyed container: where its key's bytes are, and its value's offset.
    struct Entry {
        var key: Range<Int>
        var value: Int
    }

    /// The entries of the keyed container at `offset`, checked to fill its body exactly.
    func keyedEntries(at offset: Int) throws -> [Entry] {
        guard try tag(at: offset) == .keyed else { throw corrupt("expected a keyed container", at: offset) }
        let (body, count) = try containerBody(at: offset)
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        var position = body.lowerBound
        for _ in 0..<count {
            let key = try run(at: position)
            guard key.upperBound < body.upperBound else { throw corrupt("a keyed entry is cut short", at: position) }
            let next = try skip(key.upperBound)
            guard next <= body.upperBound else { throw corrupt("a keyed entry overruns its container", at: position) }
            entries.append(Entry(key: key, value: key.upperBound))
            position = next
        }
        guard position == body.upperBound else { throw corrupt("a keyed container has trailing bytes", at: offset) }
        return entries
    }

    /// The offsets of the elements of the unkeyed container at `offset`.
    func unkeyedElements(at offset: Int) throws -> [Int] {
        guard try tag(at: offset) == .unkeyed else { throw corrupt("expected an unkeyed container", at: offset) }
        let (body, count) = try containerBody(at: offset)
        var elements: [Int] = []
        elements.reserveCapacity(count)
        var position = body.lowerBound
        for _ in 0..<count {
            guard position < body.upperBound else { throw corrupt("an unkeyed container is cut short", at: offset) }
            elements.append(position)
            position = try skip(position)
            guard position <= body.upperBound else {
                throw corrupt("an element overruns its container", at: offset)
            }
        }
        guard position == body.upperBound else { throw corrupt("an unkeyed container has trailing bytes", at: offset) }
        return elements
    }

    /// Whether the key bytes at `range` equal `key`'s UTF-8.
    @inline(__always)
    func key(at range: Range<Int>, equals key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard range.count == key.count else { return false }
        guard !key.isEmpty else { return true }
        return bytes.withUnsafeBufferPointer { all in
            memcmp(all.baseAddress! + range.lowerBound, key.baseAddress!, key.count) == 0
        }
    }
}
