import Foundation
import Storage

// The model types the conformance suite stores. They cover every mapping in DESIGN.md.

enum Mood: String, Codable, Equatable, CaseIterable { case calm, busy }
enum Priority: Int, Codable, Equatable {
    case low = 1
    case high = 9
}

struct Address: Codable, Equatable {
    var street: String
    var city: String
    var zip: Int?
}

/// A custom column coding (ORIGINS.md §4): a color stored as hex text.
struct Color: Codable, Equatable, ColumnCodable {
    var red: UInt8
    var green: UInt8
    var blue: UInt8

    static var columnType: ColumnType { .text }
    var storageValue: StorageValue {
        .text(String(format: "#%02x%02x%02x", red, green, blue))
    }

    init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    init(storageValue: StorageValue) throws {
        guard case .text(let text) = storageValue, text.count == 7, text.hasPrefix("#"),
            let number = UInt32(text.dropFirst(), radix: 16)
        else { throw StorageError(.typeMismatch, "not a hex color: \(storageValue)") }
        red = UInt8(number >> 16)
        green = UInt8((number >> 8) & 0xff)
        blue = UInt8(number & 0xff)
    }
}

/// Every mapped type at once.
struct Everything: Codable, Equatable, StorableModel {
    static let collectionName = "everything"
    var id: Int64
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var double: Double
    var float: Float
    var flag: Bool
    var text: String
    var data: Data
    var date: Date
    var uuid: UUID
    var url: URL
    var decimal: Decimal
    var mood: Mood
    var priority: Priority
    var color: Color
    var address: Address
    var tags: [String]
    var scores: [String: Double]
    var optionalText: String?
    var optionalInt: Int?
    var optionalDate: Date?
    var optionalAddress: Address?
    var optionalMood: Mood?

    static func sample(_ id: Int64, empty: Bool = false) -> Everything {
        Everything(
            id: id,
            int: empty ? 0 : Int.min,
            int8: -8,
            int16: 1_600,
            int32: -32_000,
            uint8: 255,
            uint16: 65_535,
            uint32: 4_000_000_000,
            uint64: UInt64(Int64.max),
            double: empty ? 0 : 3.141_592_653_589_793,
            float: 1.5,
            flag: !empty,
            text: empty ? "" : "héllo \"quoted\" 'single'; DROP TABLE x; -- \u{1F600}",
            data: empty ? Data() : Data([0, 1, 2, 255, 0]),
            date: Date(timeIntervalSince1970: 1_700_000_000.25),
            uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            url: URL(string: "https://example.com/a?b=c&d=%20")!,
            decimal: Decimal(string: "12345.6789")!,
            mood: .busy,
            priority: .high,
            color: Color(red: 255, green: 128, blue: 1),
            address: Address(street: "1 Main", city: "Springfield", zip: empty ? nil : 12_345),
            tags: empty ? [] : ["a", "b"],
            scores: empty ? [:] : ["x": 1.5],
            optionalText: empty ? nil : "present",
            optionalInt: empty ? nil : 42,
            optionalDate: empty ? nil : Date(timeIntervalSince1970: 0),
            optionalAddress: empty ? nil : Address(street: "2 Side", city: "Shelbyville", zip: nil),
            optionalMood: empty ? nil : .calm
        )
    }
}

/// A type with no `id`: it gets auto-assigned keys.
struct Note: Codable, Equatable {
    var text: String
}

/// The record the query tests filter and sort.
struct Member: Codable, Equatable, StorableModel {
    static let collectionName = "members"
    static let indexes: [IndexDefinition] = [.init(["age"]), .init(["email"], unique: true)]
    var id: Int64
    var name: String
    var age: Int
    var email: String?
    var score: Double?

    static let all: [Member] = (1...40).map { number in
        Member(
            id: Int64(number),
            name: ["Ann", "bob", "Cid", "dora", "Éva", "al_x", "A%b"][number % 7] + String(number % 5),
            age: 15 + (number * 7) % 50,
            email: number % 4 == 0 ? nil : "m\(number)@example.com",
            score: number % 3 == 0 ? nil : Double(number) / 4
        )
    }
}

/// A type with a text primary key named by `StorableModel.primaryKey`.
struct Country: Codable, Equatable, StorableModel {
    static let primaryKey = "code"
    var code: String
    var name: String
}

/// A type keyed by UUID.
struct Session: Codable, Equatable {
    var id: UUID
    var user: String
}

/// Two versions of one type, for schema evolution without migrations.
struct ProfileV1: Codable, Equatable, StorableModel {
    static let collectionName = "profiles"
    var id: Int64
    var name: String
    var legacy: String
}

struct ProfileV2: Codable, Equatable, StorableModel {
    static let collectionName = "profiles"
    var id: Int64
    var name: String
    var nickname: String?
    var visits: Int?
}

struct ProfileV3Strict: Codable, Equatable, StorableModel {
    static let collectionName = "profiles"
    var id: Int64
    var name: String
    var mandatory: String
}

/// Reads JSON-ingested rows back as a typed value.
struct Reading: Codable, Equatable, StorableModel {
    static let collectionName = "readings"
    var id: Int64
    var value: Double?
    var label: String?
    var meta: [String: Int]?
}

/// Narrow reads for type-mismatch checks.
struct NarrowReading: Codable, StorableModel {
    static let collectionName = "narrow"
    var id: Int64
    var small: UInt8
}

struct TextAsInt: Codable, StorableModel {
    static let collectionName = "narrow"
    var id: Int64
    var word: Int
}

/// A model whose collection name is hostile.
struct HostileName: Codable, StorableModel {
    static let collectionName = "x\"; DROP TABLE members; --"
    var id: Int64
}

struct Counter: Codable, Equatable {
    var id: Int64
    var thread: Int
    var step: Int
}
