import Foundation
import Storage

/// Nested values, stored as JSON text.
struct Nested: Codable, Equatable {
    var name: String
    var tags: [String]
    var counts: [String: Int]
}

/// A record with every mapped kind of value, in a collection with a unique index.
struct Sample: Codable, StorableModel {
    static let collectionName = "samples"
    static let indexes: [IndexDefinition] = [.init(["email"], unique: true), .init(["big"])]

    var id: Int64
    var email: String
    var real: Double
    var big: Int64
    var flag: Bool
    var blob: Data
    var nested: Nested
    var text: String
    var optional: String?
    var date: Date
    var uuid: UUID
    var decimal: Decimal

    /// Equal, with NaN equal to NaN (as the store compares reals).
    func matches(_ other: Sample) -> Bool {
        let sameReal = real == other.real || (real.isNaN && other.real.isNaN)
        guard id == other.id, email == other.email, sameReal, big == other.big, flag == other.flag else { return false }
        guard blob == other.blob, nested == other.nested, text.utf8.elementsEqual(other.text.utf8) else { return false }
        return optional == other.optional && date == other.date && uuid == other.uuid && decimal == other.decimal
    }

    /// The one-mebibyte blob of sample 1, made once (a million closure calls in a debug build,
    /// which the copy tests made again for each of their 75 cases).
    static let megabyte = Data(
        (0..<1_048_576).map { (byte: Int) -> UInt8 in UInt8(truncatingIfNeeded: byte &* 31 &+ 7) }
    )

    /// The samples. No NaN: the store refuses to save one (`.valueOutOfRange`: SQLite would keep
    /// it as null), so the most negative finite double stands where it would be.
    static func samples() -> [Sample] {
        let megabyte = Self.megabyte
        let reals: [Double] = [
            -.greatestFiniteMagnitude, .infinity, -.infinity, 1.5, -0.0, .greatestFiniteMagnitude,
            .leastNonzeroMagnitude,
        ]
        let bigs: [Int64] = [.min, .max, 0, -1, 1 << 53 + 1]
        return (0..<12).map { (index: Int) -> Sample in
            let blob: Data = index == 0 ? Data() : index == 1 ? megabyte : Data([0, 255, UInt8(index), 0])
            let text: String = index % 3 == 0 ? "" : "caf\u{E9} \u{1F600} and 'quotes'; -- \(index)"
            return Sample(
                id: Int64(index * 3 - 7),
                email: "user\(index)@example.com",
                real: reals[index % reals.count],
                big: bigs[index % bigs.count],
                flag: index % 2 == 0,
                blob: blob,
                nested: Nested(name: "n\(index) \"q\"", tags: ["a", "ü\u{301}", "\u{1F600}"], counts: ["x": index]),
                text: text,
                optional: index % 2 == 0 ? nil : "present \(index)",
                date: Date(timeIntervalSince1970: 1_700_000_000.125 + Double(index)),
                uuid: UUID(),
                decimal: Decimal(string: "12345.678\(index)")!
            )
        }
    }
}

/// A record with no key of its own: an auto-assigned key.
struct Entry: Codable, Equatable {
    var text: String
}

/// Settings copied with the store.
final class CopySettings: Settings, @unchecked Sendable {
    @Setting var greeting = "none"
    @Setting var launches = 0
}
