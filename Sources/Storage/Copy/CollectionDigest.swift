import Foundation

/// An order-independent digest of a collection: its record count and two sums of 64-bit hashes
/// of each record's canonical form. Two stores holding the same records (in any order, under
/// any engine) have the same digest.
///
/// A record's canonical form is its non-null values, each after its column's name folded to
/// lower case, in the order of those folded names: so the digest depends neither on the order of
/// the columns nor on columns that are null (a column one engine has and another lacks). A value
/// is hashed with its storage class; reals with every zero as `+0.0` and every NaN as one NaN,
/// as `StorageValue` compares them.
package struct CollectionDigest: Sendable, Hashable, CustomStringConvertible {
    /// The records.
    package var count = 0
    /// The wrapping sum of each record's first hash.
    package var first: UInt64 = 0
    /// The wrapping sum of each record's second hash.
    package var second: UInt64 = 0

    package init() {}

    package var description: String {
        String(count) + " records, digest " + Self.hex(first) + Self.hex(second)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Adds the record whose values are `value(at:)` for the columns `columns` (folded, sorted).
    mutating func add(columns: [[UInt8]], _ value: (Int) -> StorageValue) {
        var hasher = RecordHasher()
        for index in columns.indices {
            let stored = value(index)
            if stored.isNull { continue }
            hasher.feed(columns[index])
            hasher.feed(stored)
        }
        let (a, b) = hasher.finish()
        count += 1
        first &+= a
        second &+= b
    }

    /// The canonical column order of `schema`: the folded names, sorted, with the stored names
    /// in the same order.
    static func canonicalColumns(of schema: CollectionSchema) -> (folded: [[UInt8]], names: [String]) {
        let pairs = schema.columns.map { (Array(Identifier.folded($0.name).utf8), $0.name) }
            .sorted { $0.0.lexicographicallyPrecedes($1.0) }
        return (pairs.map(\.0), pairs.map(\.1))
    }

    /// A record's canonical values, by folded column name, nulls left out: what two records
    /// are compared by when a digest differs.
    static func canonicalRecord(columns: [[UInt8]], _ value: (Int) -> StorageValue) -> [[UInt8]: StorageValue] {
        var record: [[UInt8]: StorageValue] = [:]
        for index in columns.indices {
            let stored = value(index)
            if !stored.isNull { record[columns[index]] = stored }
        }
        return record
    }
}

/// Two 64-bit hashes of a record's canonical bytes, fed 8 bytes at a time (a multiply and a
/// rotation per word in each lane, with different constants), each finished with a 64-bit mixer;
/// enough to tell differing records apart in a digest (it is no defence against crafted
/// collisions).
struct RecordHasher {
    private var a: UInt64 = 0xcbf2_9ce4_8422_2325
    private var b: UInt64 = 0x6c62_272e_07bb_0142

    mutating func feed(word: UInt64) {
        a = ((a ^ word) &* 0x9e37_79b9_7f4a_7c15).rotatedLeft(by: 31)
        b = ((b ^ word) &* 0xc2b2_ae3d_27d4_eb4f).rotatedLeft(by: 27) &+ 0x1656_67b1_9e37_79f9
    }

    mutating func feed(byte: UInt8) {
        feed(word: UInt64(byte) | 0x100)
    }

    /// The count, then the bytes 8 at a time, the last few packed into one word.
    mutating func feed(bytes: UnsafeRawBufferPointer) {
        feed(word: UInt64(bytes.count))
        var offset = 0
        while offset + 8 <= bytes.count {
            feed(word: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        if offset < bytes.count {
            var last: UInt64 = 0
            for index in offset..<bytes.count { last = last << 8 | UInt64(bytes[index]) }
            feed(word: last)
        }
    }

    mutating func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed(bytes: $0) }
    }

    mutating func feed(_ value: StorageValue) {
        switch value {
        case .null:
            feed(byte: 0)
        case .integer(let number):
            feed(byte: 1)
            feed(word: UInt64(bitPattern: number))
        case .real(let number):
            feed(byte: 2)
            feed(word: StorageValue.canonicalBits(of: number))
        case .text(let text):
            feed(byte: 3)
            var text = text
            text.withUTF8 { feed(bytes: UnsafeRawBufferPointer($0)) }
        case .blob(let data):
            feed(byte: 4)
            data.withUnsafeBytes { feed(bytes: $0) }
        }
    }

    func finish() -> (UInt64, UInt64) {
        (Self.mix(a), Self.mix(b ^ 0x5851_f42d_4c95_7f2d))
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x &*= 0xff51_afd7_ed55_8ccd
        x ^= x >> 33
        x &*= 0xc4ce_b9fe_1a85_ec53
        x ^= x >> 33
        return x
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(by count: UInt64) -> UInt64 {
        (self << count) | (self >> (64 - count))
    }
}
