/// The type tag that starts every value of an archive (see docs/ARCHIVE_FORMAT.md).
enum ArchiveTag: UInt8 {
    case null = 0x00
    case `false` = 0x01
    case `true` = 0x02
    /// Signed integer: 8 bytes, little-endian two's complement.
    case int = 0x03
    /// Unsigned integer: 8 bytes, little-endian.
    case uint = 0x04
    /// Double: the 8 bytes of its IEEE 754 bit pattern, little-endian.
    case double = 0x05
    /// Float: the 4 bytes of its IEEE 754 bit pattern, little-endian.
    case float = 0x06
    /// UTF-8 text: a varint byte count, then the bytes.
    case string = 0x07
    /// Bytes: a varint byte count, then the bytes.
    case data = 0x08
    /// Date: seconds since 1970-01-01 00:00:00 UTC as a double. Read, no longer written: a Double
    /// of seconds since 1970 cannot hold every `Date` (see `referenceDate`).
    case date = 0x09
    /// URL: its absolute string, as `string`.
    case url = 0x0A
    /// UUID: its 16 bytes.
    case uuid = 0x0B
    /// Decimal: its description (`"12.34"`), as `string`.
    case decimal = 0x0C
    /// Date: seconds since 2001-01-01 00:00:00 UTC (Foundation's reference date) as a double:
    /// `Date`'s own representation, so it reads back equal. Seconds since 1970 need a larger
    /// exponent from 1985 on, and lose the low bits of about half of the dates made today.
    case referenceDate = 0x0D
    /// Keyed container: u32 byte length of the body, u32 entry count, then entries (key as a
    /// varint length and UTF-8 bytes, then a value).
    case keyed = 0x10
    /// Unkeyed container: u32 byte length of the body, u32 element count, then values.
    case unkeyed = 0x11
}

/// What an archive file holds, recorded in its header.
enum ArchiveKind: UInt8 {
    /// A value written by `FileArchive.write` or `ArchiveEncoder`.
    case document = 0
    /// One record of a collection.
    case record = 1
    /// A collection's schema.
    case schema = 2
    /// A commit's journal.
    case journal = 3
}

/// Constants of the file layout.
enum ArchiveLayout {
    /// "SWAR": Swift archive.
    static let magic: [UInt8] = [0x53, 0x57, 0x41, 0x52]
    static let version: UInt8 = 1
    /// Magic, version, kind, two reserved bytes.
    static let headerSize = 8
    /// The CRC-32 at the end.
    static let trailerSize = 4
    /// Tag, u32 body length, u32 count.
    static let containerHeaderSize = 9
    /// The deepest nesting of values an encoder writes and a decoder follows, counted the same
    /// way on both sides: one level for every value that is not a primitive of the format
    /// (each class, struct, array, dictionary or optional coded through `Codable`) and every
    /// nested container or super encoder; the root value is level 1.
    static let maximumDepth = 64
    /// The largest archive, checksum included: 2 GiB. The reader refuses a larger file before
    /// reading it, and the writer never writes one.
    static let maximumSize = 1 << 31
}
