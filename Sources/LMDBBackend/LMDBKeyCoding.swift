import Foundation
import Storage

/// The byte form of values in LMDB keys, ordered so that comparing bytes (LMDB's default key
/// order) compares values as `StorageValue.compare` (SQLite) does: null < numbers < text < blob.
///
/// Each value is one self-delimiting component: a tag byte, then
/// - numbers: integers and reals share one form, so they interleave by value. A number inside
///   the Int64 range is its floor (Int64, big-endian, sign bit flipped) followed by its fraction
///   (the bits of a Double in [0, 1), big-endian; for a real between -0.5 and 0, where the
///   fraction would round, the complement of the real's own bits); `3` and `3.0` have the same
///   bytes, as they are equal in SQLite. Reals outside the Int64 range get tags of their own,
///   below and above.
/// - text and blobs: their bytes with `00` escaped as `00 FF`, ended by `00 01`, so a value
///   sorts before every longer value it is a prefix of, and a component is never a prefix of
///   another.
///
/// A primary key is one component; an index key is one component per indexed column followed by
/// the primary key's component, so entries of equal values are unique and ordered by key.
enum LMDBKeyCoding {
    static let nullTag: UInt8 = 0x05
    static let lowNumberTag: UInt8 = 0x10
    static let numberTag: UInt8 = 0x11
    static let highNumberTag: UInt8 = 0x12
    static let textTag: UInt8 = 0x20
    static let blobTag: UInt8 = 0x30

    /// Appends the component of `value` to `bytes`.
    static func append(_ value: StorageValue, to bytes: inout [UInt8]) {
        switch value {
        case .null:
            bytes.append(nullTag)
        case .integer(let number):
            bytes.append(numberTag)
            appendBigEndian(UInt64(bitPattern: number) ^ (1 << 63), to: &bytes)
            appendBigEndian(0, to: &bytes)
        case .real(let number):
            appendReal(number, to: &bytes)
        case .text(let text):
            bytes.append(textTag)
            appendEscaped(text.utf8, to: &bytes)
        case .blob(let data):
            bytes.append(blobTag)
            appendEscaped(data, to: &bytes)
        }
    }

    /// Calls `body` with the component of the integer `number` (the bytes of
    /// `encode(.integer(number))`) in memory on the stack: a key look-up by an integer then
    /// allocates no array (scripts/count-check.py holds a look-up's allocations).
    @inline(__always)
    static func withInteger<R>(_ number: Int64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        return try withUnsafeMutableBytes(of: &words) { bytes in
            bytes[0] = numberTag
            bytes.storeBytes(of: (UInt64(bitPattern: number) ^ (1 << 63)).bigEndian, toByteOffset: 1, as: UInt64.self)
            return try body(UnsafeRawBufferPointer(rebasing: bytes[0..<17]))
        }
    }

    /// The component of `value` alone.
    static func encode(_ value: StorageValue) -> [UInt8] {
        var bytes: [UInt8] = []
        // A number takes 17 bytes: reserved at once rather than grown on the way.
        bytes.reserveCapacity(17)
        append(value, to: &bytes)
        return bytes
    }

    private static func appendReal(_ number: Double, to bytes: inout [UInt8]) {
        if number.isNaN {
            // SQLite stores NaN as NULL.
            bytes.append(nullTag)
        } else if number < -9_223_372_036_854_775_808.0 {
            bytes.append(lowNumberTag)
            appendBigEndian(orderedBits(number), to: &bytes)
        } else if number >= 9_223_372_036_854_775_808.0 {
            bytes.append(highNumberTag)
            appendBigEndian(orderedBits(number), to: &bytes)
        } else {
            let floor = number.rounded(.down)
            bytes.append(numberTag)
            appendBigEndian(UInt64(bitPattern: Int64(floor)) ^ (1 << 63), to: &bytes)
            if number < 0 && number > -0.5 {
                // Here `number + 1` would round (to 1.0 for tiny values), so different values
                // would share a key. The complement of a negative Double's bits orders like its
                // value, and lies above the bits of every fraction up to 0.5 (those of
                // [-1, -0.5]), so the order within floor -1 holds.
                appendBigEndian(~number.bitPattern, to: &bytes)
            } else {
                // Exact everywhere else (Sterbenz); a non-negative Double's bits order like its
                // value.
                appendBigEndian((number - floor).bitPattern, to: &bytes)
            }
        }
    }

    /// A Double's bits, changed so unsigned comparison orders them like the values.
    private static func orderedBits(_ number: Double) -> UInt64 {
        let bits = number.bitPattern
        return number.sign == .minus ? ~bits : bits | (1 << 63)
    }

    /// One append of eight bytes rather than eight appends, each checking capacity and
    /// uniqueness (a key is encoded for every insert and look-up).
    private static func appendBigEndian(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    private static func appendEscaped<S: Sequence<UInt8>>(_ source: S, to bytes: inout [UInt8]) {
        for byte in source {
            bytes.append(byte)
            if byte == 0 { bytes.append(0xFF) }
        }
        bytes.append(0)
        bytes.append(1)
    }

    /// The offset just past the component starting at `offset`, or `nil` when the bytes are not
    /// a component.
    static func skipComponent(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        guard offset < bytes.count else { return nil }
        switch bytes[offset] {
        case nullTag:
            return offset + 1
        case lowNumberTag, highNumberTag:
            return offset + 9 <= bytes.count ? offset + 9 : nil
        case numberTag:
            return offset + 17 <= bytes.count ? offset + 17 : nil
        case textTag, blobTag:
            var index = offset + 1
            while index + 1 < bytes.count {
                if bytes[index] == 0 {
                    if bytes[index + 1] == 1 { return index + 2 }
                    index += 2
                } else {
                    index += 1
                }
            }
            return nil
        default:
            return nil
        }
    }

    /// Compares two byte strings as LMDB's default key order does.
    static func compare(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int {
        let common = min(lhs.count, rhs.count)
        if common > 0 {
            let order = memcmp(lhs.baseAddress!, rhs.baseAddress!, common)
            if order != 0 { return order < 0 ? -1 : 1 }
        }
        return lhs.count == rhs.count ? 0 : (lhs.count < rhs.count ? -1 : 1)
    }

    /// Whether a key is past an inclusive upper bound on its leading components: it is when it
    /// neither starts with `bound` nor sorts before it.
    static func isPast(_ key: UnsafeRawBufferPointer, _ bound: [UInt8]) -> Bool {
        bound.withUnsafeBytes { bound in
            if key.count >= bound.count
                && (bound.isEmpty || memcmp(key.baseAddress!, bound.baseAddress!, bound.count) == 0)
            {
                return false
            }
            return compare(key, bound) > 0
        }
    }
}
