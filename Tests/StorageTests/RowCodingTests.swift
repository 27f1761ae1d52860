import Foundation
import Testing

@testable import Storage

/// A temperature stored as one real number through its own `ColumnCodable` conformance (its
/// synthesized `Codable` form would be the JSON object `{"degrees":…}`).
private struct Celsius: ColumnCodable, Codable, Equatable {
    struct NotAReal: Error {}
    static let columnType = ColumnType.real
    var degrees: Double
    var storageValue: StorageValue { .real(degrees) }

    init(_ degrees: Double) { self.degrees = degrees }

    init(storageValue: StorageValue) throws {
        guard case .real(let degrees) = storageValue else { throw NotAReal() }
        self.degrees = degrees
    }
}

private struct Address: Codable, Equatable {
    var city: String
    var zip: Int
}

private enum Mood: String, Codable {
    case calm, busy
}

/// A model with a property of every kind the coders map.
private struct Person: Codable, Equatable {
    var id: Int
    var name: String
    var nickname: String?
    var height: Double
    var active: Bool
    var born: Date
    var photo: Data
    var address: Address
    var temperature: Celsius
    var tags: [String]
    var mood: Mood
    var score: Float?
    var level: Int8

    static func sample(_ number: Int) -> Person {
        Person(
            id: number,
            name: "person \(number)",
            nickname: number.isMultiple(of: 3) ? nil : "p\(number)",
            height: 1.5 + Double(number) / 100,
            active: number.isMultiple(of: 2),
            born: Date(timeIntervalSince1970: 1_000_000 + Double(number)),
            photo: Data([UInt8(number % 256), 1, 2]),
            address: Address(city: "City \(number)", zip: 1000 + number),
            temperature: Celsius(Double(number) / 2),
            tags: number.isMultiple(of: 4) ? [] : ["t\(number)", "x"],
            mood: number.isMultiple(of: 5) ? .busy : .calm,
            score: number.isMultiple(of: 7) ? nil : Float(number) / 4,
            level: Int8(number % 100)
        )
    }
}

/// The column names of `Person`, in property order.
private let personColumns = [
    "id", "name", "nickname", "height", "active", "born", "photo", "address", "temperature", "tags", "mood",
    "score", "level",
]

/// A row of a scan, as a backend hands it to the decoder.
private struct Row: StorageRow {
    var values: [StorageValue]
    func value(at index: Int) -> StorageValue { values[index] }
}

/// A decoder for rows of `columns` in collection "people", keyed by `id`.
private func decoder(_ columns: [String], typeName: String = "Person") -> RowDecoder {
    let schema = CollectionSchema(
        name: "people",
        columns: columns.map { ColumnDefinition(name: $0, type: .untyped) },
        primaryKey: "id"
    )
    return RowDecoder(typeName: typeName, collection: "people", plan: ReadPlan(schema))
}

/// The values `value` encodes to in `Person`'s layout.
private func encoded(_ value: Person) throws -> [StorageValue] {
    let encoder = try RowEncoder.discover(value)
    return encoder.values
}

/// A type whose `init(from:)` keeps its container, which it must not.
private struct Keeper: Decodable {
    nonisolated(unsafe) static var kept: KeyedDecodingContainer<CodingKeys>?
    enum CodingKeys: String, CodingKey { case id, name }
    var id: Int

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        Self.kept = container
    }
}

/// Two properties whose names differ only in Unicode normalization: one column, to a store.
private struct Twins: Encodable {
    enum CodingKeys: String, CodingKey {
        case composed = "caf\u{E9}"
        case decomposed = "cafe\u{301}"
    }
    var composed = 1
    var decomposed = 2
}

/// Read from the same collection as `Person`, with keys of its own type.
private struct Badge: Codable, Equatable {
    var id: Int
    var level: Int8
    var name: String
}

@Suite struct RowEncoderTests {
    @Test func discoveryLearnsTheColumnsInPropertyOrderWithTheirTypes() throws {
        var person = Person.sample(1)
        person.born = Date(timeIntervalSince1970: 86_400.5)
        let encoder = try RowEncoder.discover(person)
        #expect(encoder.columns.map(\.name) == personColumns)
        let types: [ColumnType] = [
            .integer, .text, .text, .real, .integer, .real, .blob, .text, .real, .text, .text, .real, .integer,
        ]
        #expect(encoder.columns.map(\.type) == types)
        #expect(encoder.columns.allSatisfy { !$0.isNullable })
        #expect(
            encoder.values == [
                .integer(1), .text("person 1"), .text("p1"), .real(person.height), .integer(0), .real(86_400.5),
                .blob(Data([1, 1, 2])), .text(#"{"city":"City 1","zip":1001}"#), .real(0.5), .text(#"["t1","x"]"#),
                .text("calm"), .real(0.25), .integer(1),
            ]
        )
    }

    /// A nil claims its column, typed from the property's static type, and marks it nullable.
    @Test func discoveryTypesANilFromThePropertysType() throws {
        struct Sparse: Codable {
            var id: Int
            var note: String?
            var when: Date?
            var temperature: Celsius?
            var address: Address?
            var count: UInt16?
        }
        let encoder = try RowEncoder.discover(Sparse(id: 3))
        #expect(encoder.columns.map(\.name) == ["id", "note", "when", "temperature", "address", "count"])
        #expect(encoder.columns.map(\.type) == [.integer, .text, .real, .real, .text, .integer])
        #expect(encoder.columns.map(\.isNullable) == [false, true, true, true, true, true])
        #expect(encoder.values == [.integer(3), .null, .null, .null, .null, .null])
    }

    @Test func discoveryExtendsAKnownLayout() throws {
        let known = [ColumnDefinition(name: "legacy", type: .blob), ColumnDefinition(name: "name", type: .text)]
        let encoder = try RowEncoder.discover(Person.sample(2), extending: known)
        #expect(encoder.columns.map(\.name) == ["legacy", "name"] + personColumns.filter { $0 != "name" })
        #expect(encoder.values[0] == .null)
        #expect(encoder.values[1] == .text("person 2"))
        #expect(encoder.values[2] == .integer(2))
    }

    /// A layout in another order than the properties: each value lands in its column's slot,
    /// for record after record, with nothing left over from the record before.
    @Test func encodingFillsAKnownLayoutRecordAfterRecord() throws {
        let layout = try RowEncoder.discover(Person.sample(1)).columns
        let reordered = Array(layout.reversed()) + [ColumnDefinition(name: "extra", type: .text)]
        let encoder = RowEncoder(typeName: "Person", columns: reordered)
        let discovering = try RowEncoder.discover(Person.sample(1))
        for number in 0..<50 {
            let person = Person.sample(number)
            try encoder.encode(person)
            try discovering.encode(person)
            #expect(encoder.columns == reordered)
            #expect(encoder.values == Array(discovering.values.reversed()) + [.null], "record \(number)")
            #expect(encoder.values[reordered.count - 4] == (person.nickname.map { .text($0) } ?? .null))
        }
    }

    /// A column a record does not write (a hand-written `encode(to:)` that skips a nil) is null
    /// in that record, whatever the record before held.
    @Test func aColumnARecordLeavesOutIsNull() throws {
        struct Skipping: Encodable {
            enum CodingKeys: CodingKey { case id, note }
            var id: Int
            var note: String?

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(id, forKey: .id)
                if let note { try container.encode(note, forKey: .note) }
            }
        }
        let encoder = try RowEncoder.discover(Skipping(id: 1, note: "first"))
        #expect(encoder.values == [.integer(1), .text("first")])
        for number in 2..<6 {
            let note = number.isMultiple(of: 2) ? nil : "note \(number)"
            try encoder.encode(Skipping(id: number, note: note))
            #expect(encoder.values == [.integer(Int64(number)), note.map { .text($0) } ?? .null])
        }
    }

    @Test func aPropertyTheLayoutLacksIsAPlanMiss() throws {
        let layout = try RowEncoder.discover(Person.sample(1)).columns.filter { $0.name != "tags" }
        let encoder = RowEncoder(typeName: "Person", columns: layout)
        let miss = #expect(throws: PlanMiss.self) { try encoder.encode(Person.sample(1)) }
        #expect(miss?.column == "tags")
        let smaller = RowEncoder(typeName: "Address", columns: [ColumnDefinition(name: "zip", type: .integer)])
        let city = #expect(throws: PlanMiss.self) { try smaller.encode(Address(city: "Oslo", zip: 150)) }
        #expect(city?.column == "city")
        let fitting = RowEncoder(
            typeName: "Address",
            columns: [ColumnDefinition(name: "zip", type: .integer), ColumnDefinition(name: "city", type: .text)]
        )
        try fitting.encode(Address(city: "Oslo", zip: 150))
        #expect(fitting.values == [.integer(150), .text("Oslo")])
    }

    @Test func twoPropertiesSpeltAsOneNameAreRefused() throws {
        let error = #expect(throws: StorageError.self) { try RowEncoder.discover(Twins()) }
        #expect(error?.code == .schemaMismatch)
        // The second spelling, byte for byte (`==` on strings would take either).
        #expect(error?.column.map { Array($0.utf8) } == Array("cafe\u{301}".utf8))
        #expect(error?.message.contains("are one name") == true)
    }

    @Test func valuesThatCannotBeStoredAreRefusedNamingTheColumn() throws {
        struct Huge: Encodable {
            var id = 1
            var big = UInt64.max
        }
        let huge = #expect(throws: StorageError.self) { try RowEncoder.discover(Huge()) }
        #expect(huge?.code == .valueOutOfRange)
        #expect(huge?.column == "big")
        let bare = #expect(throws: StorageError.self) { try RowEncoder.discover([1, 2, 3]) }
        #expect(bare?.code == .unsupportedType)
    }
}

@Suite struct RowDecoderTests {
    @Test func decodesARowByPosition() throws {
        let decoder = decoder(personColumns)
        for number in [0, 1, 3, 7] {
            let person = Person.sample(number)
            #expect(try decoder.decode(Person.self, from: Row(values: try encoded(person))) == person)
        }
    }

    /// Rows whose columns are in another order, with a column the type lacks: found by name.
    @Test func decodesARowByName() throws {
        let person = Person.sample(5)
        var columns = ["unused"] + personColumns.reversed()
        columns.swapAt(3, 7)
        let byName = Dictionary(uniqueKeysWithValues: zip(personColumns, try encoded(person)))
        let row = Row(values: columns.map { byName[$0] ?? .text("not a person's") })
        let decoder = decoder(columns)
        #expect(try decoder.decode(Person.self, from: row) == person)
        #expect(try decoder.decode(Person.self, from: row) == person)
    }

    /// One decoder for a thousand rows, its keyed container made once and handed out again:
    /// each row reads as its own values, nulls and all, whichever way it was read into.
    @Test func oneDecoderReadsEveryRowOfAScan() throws {
        let decoder = decoder(personColumns)
        let slot = UnsafeMutablePointer<Person>.allocate(capacity: 1)
        defer { slot.deallocate() }
        for number in 0..<1000 {
            let person = Person.sample(number)
            let row = Row(values: try encoded(person))
            if number.isMultiple(of: 2) {
                #expect(try decoder.decode(Person.self, from: row) == person, "row \(number)")
            } else {
                try decoder.decode(Person.self, from: row, into: slot)
                #expect(slot.move() == person, "row \(number)")
            }
        }
    }

    /// Two types read through one decoder in turn (their key types share the decoder's
    /// positions): each reads its own properties.
    @Test func typesWithOtherKeysShareADecoder() throws {
        let decoder = decoder(["id", "name", "level"], typeName: "Badge")
        for number in 0..<200 {
            let row = Row(values: [.integer(Int64(number)), .text("b\(number)"), .integer(Int64(number % 90))])
            let badge = try decoder.decode(Badge.self, from: row)
            #expect(badge == Badge(id: number, level: Int8(number % 90), name: "b\(number)"))
            let pair = try decoder.decode(IDAndName.self, from: row)
            #expect(pair.id == number && pair.name == "b\(number)")
        }
    }

    @Test func aMissingColumnIsNamedUnlessThePropertyIsOptional() throws {
        let decoder = decoder(["id", "name"])
        let row = Row(values: [.integer(9), .text("n")])
        let error = #expect(throws: StorageError.self) { try decoder.decode(Badge.self, from: row) }
        #expect(error?.code == .missingValue)
        #expect(error?.column == "level")
        #expect(error?.collection == "people")
        #expect(error?.key == .integer(9))
        #expect(error?.message.hasPrefix("record 9: ") == true)
        struct Loose: Decodable, Equatable {
            var id: Int
            var level: Int8?
            var nickname: String?
        }
        #expect(try decoder.decode(Loose.self, from: row) == Loose(id: 9, level: nil, nickname: nil))
    }

    @Test func aNullForARequiredPropertyIsAMissingValueNamingTheColumn() throws {
        let decoder = decoder(personColumns)
        for (index, column) in personColumns.enumerated() where !["nickname", "score"].contains(column) {
            var values = try encoded(Person.sample(1))
            values[index] = .null
            let error = #expect(throws: StorageError.self) {
                try decoder.decode(Person.self, from: Row(values: values))
            }
            #expect(error?.code == .missingValue, "\(column)")
            #expect(error?.column == column)
        }
    }

    /// A stored value of the wrong kind fails naming its column (and the record, as a column can
    /// hold values of several types), then the decoder reads the next row as usual.
    @Test func aValueOfAnotherTypeIsAMismatchNamingTheColumn() throws {
        let cases: [(column: String, value: StorageValue, code: StorageError.Code)] = [
            ("name", .integer(4), .typeMismatch),
            ("height", .text("tall"), .typeMismatch),
            ("active", .integer(2), .typeMismatch),
            ("born", .text("yesterday"), .typeMismatch),
            ("photo", .text("png"), .typeMismatch),
            ("address", .text("{\"city\":1}"), .typeMismatch),
            ("temperature", .integer(20), .typeMismatch),
            ("tags", .integer(1), .typeMismatch),
            ("mood", .text("angry"), .typeMismatch),
            ("score", .real(0.1), .valueOutOfRange),
            ("level", .integer(300), .valueOutOfRange),
        ]
        let decoder = decoder(personColumns)
        for (column, value, code) in cases {
            var values = try encoded(Person.sample(2))
            values[personColumns.firstIndex(of: column)!] = value
            let error = #expect(throws: StorageError.self) {
                try decoder.decode(Person.self, from: Row(values: values))
            }
            #expect(error?.code == code, "\(column)")
            #expect(error?.column == column)
            #expect(error?.key == .integer(2))
            #expect(try decoder.decode(Person.self, from: Row(values: try encoded(Person.sample(3)))) == .sample(3))
        }
    }

    @Test func aValueThatIsNotARecordIsRefused() throws {
        let error = #expect(throws: StorageError.self) {
            try decoder(["id"]).decode(Int.self, from: Row(values: [.integer(1)]))
        }
        #expect(error?.code == .unsupportedType)
    }

    /// A container kept past `init(from:)` reads nulls while its decoder lives (there is no row
    /// then) and throws `.misuse` once the decoder is gone, even when a new decoder has taken
    /// over what the old one used.
    @Test func aContainerThatOutlivesItsDecoderThrowsMisuse() throws {
        var decoding: RowDecoder? = decoder(["id", "name"])
        for number in 0..<3 {
            let keeper = try decoding!.decode(Keeper.self, from: Row(values: [.integer(Int64(number)), .text("k")]))
            #expect(keeper.id == number)
        }
        let kept = try #require(Keeper.kept)
        #expect(try kept.decodeIfPresent(String.self, forKey: .name) == nil)
        #expect(throws: StorageError.self) { try kept.decode(String.self, forKey: .name) }
        decoding = nil
        let outlived = #expect(throws: StorageError.self) { try kept.decode(Int.self, forKey: .id) }
        #expect(outlived?.code == .misuse)
        #expect((#expect(throws: StorageError.self) { try kept.decodeNil(forKey: .name) })?.code == .misuse)
        let successor = decoder(["id", "name"])
        let row = Row(values: [.integer(8), .text("new")])
        #expect(try successor.decode(Keeper.self, from: row).id == 8)
        let stale = #expect(throws: StorageError.self) { try kept.decodeIfPresent(String.self, forKey: .name) }
        #expect(stale?.code == .misuse)
    }
}

private struct IDAndName: Decodable {
    enum Keys: String, CodingKey { case id, name }
    var id: Int
    var name: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        name = try container.decode(String.self, forKey: .name)
        id = try container.decode(Int.self, forKey: .id)
    }
}
