import Foundation
import Storage
import Testing

// The decoder reads a plain property straight from the backend's row by its typed read
// (`StorageRow.text(at:)` and the others) and a property whose column it expects by position;
// these models take the other paths: keys asked in another order, nulls, columns a record lacks,
// values of another kind.

/// Asks for its keys in an order that depends on the record: odd ids read them backwards.
struct Shuffled: Codable, Equatable, StorableModel {
    static let collectionName = "shuffled"
    var id: Int64
    var name: String
    var count: Int
    var ratio: Double
    var when: Date
    var bytes: Data
    var flag: Bool

    enum CodingKeys: String, CodingKey { case id, name, count, ratio, when, bytes, flag }

    init(id: Int64) {
        self.id = id
        name = "name \(id)"
        count = Int(id) * 7
        ratio = Double(id) / 4
        when = Date(timeIntervalSince1970: 1_600_000_000 + Double(id))
        bytes = Data([UInt8(truncatingIfNeeded: id), 0, 0xff])
        flag = id % 3 == 0
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        if id % 2 == 1 {
            flag = try container.decode(Bool.self, forKey: .flag)
            bytes = try container.decode(Data.self, forKey: .bytes)
            when = try container.decode(Date.self, forKey: .when)
            ratio = try container.decode(Double.self, forKey: .ratio)
            count = try container.decode(Int.self, forKey: .count)
            name = try container.decode(String.self, forKey: .name)
        } else {
            name = try container.decode(String.self, forKey: .name)
            count = try container.decode(Int.self, forKey: .count)
            ratio = try container.decode(Double.self, forKey: .ratio)
            when = try container.decode(Date.self, forKey: .when)
            bytes = try container.decode(Data.self, forKey: .bytes)
            flag = try container.decode(Bool.self, forKey: .flag)
        }
    }
}

/// The first version of a model, before its optional properties existed.
struct OptionalsBefore: Codable, Equatable, StorableModel {
    static let collectionName = "optionals"
    var id: Int64
    var name: String
}

/// The model with an optional property of every kind the typed reads serve, and a custom one.
struct OptionalsAfter: Codable, Equatable, StorableModel {
    static let collectionName = "optionals"
    var id: Int64
    var name: String
    var text: String?
    var number: Int?
    var small: UInt8?
    var real: Double?
    var float: Float?
    var flag: Bool?
    var when: Date?
    var bytes: Data?
    var color: Color?
}

/// Reads the integer column `value` of `VersionOne` as a Bool.
struct VersionFlag: Codable, Equatable, StorableModel {
    static let collectionName = "versioned"
    var id: Int64
    var value: Bool
}

/// Reads the integer column `value` of `VersionOne` as a Date (seconds since 1970).
struct VersionDate: Codable, Equatable, StorableModel {
    static let collectionName = "versioned"
    var id: Int64
    var value: Date
}

/// Reads the column `value` as a Float.
struct VersionFloat: Codable, Equatable, StorableModel {
    static let collectionName = "versioned"
    var id: Int64
    var value: Float
}

/// Keeps the keyed container its `init(from:)` was given, which the `Decoder` protocol does not
/// allow: a later use must throw, never read freed memory or another decode's record.
struct KeepsContainer: Codable, Equatable, StorableModel {
    static let collectionName = "keeps"
    var id: Int64
    var name: String

    enum CodingKeys: String, CodingKey { case id, name }

    /// The container of the last decode.
    final class Kept: @unchecked Sendable {
        private let lock = NSLock()
        private var container: KeyedDecodingContainer<CodingKeys>?
        var value: KeyedDecodingContainer<CodingKeys>? {
            get { lock.withLock { container } }
            set { lock.withLock { container = newValue } }
        }
    }
    static let kept = Kept()

    init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        Self.kept.value = container
    }
}

/// Reads the records of `Shuffled` through two key types, asking for their containers in an
/// order that depends on the record: the decoder keeps a container for later records, which
/// must only ever be handed out for its own key type.
struct TwoKeyTypes: Decodable, Equatable, StorableModel {
    static let collectionName = "shuffled"
    var id: Int64
    var name: String
    var count: Int

    enum IdentityKeys: String, CodingKey { case id, name }
    enum CountKeys: String, CodingKey { case count }

    init(id: Int64, name: String, count: Int) {
        self.id = id
        self.name = name
        self.count = count
    }

    init(from decoder: any Decoder) throws {
        let identity = try decoder.container(keyedBy: IdentityKeys.self)
        id = try identity.decode(Int64.self, forKey: .id)
        if id % 2 == 1 {
            count = try decoder.container(keyedBy: CountKeys.self).decode(Int.self, forKey: .count)
            name = try decoder.container(keyedBy: IdentityKeys.self).decode(String.self, forKey: .name)
        } else {
            name = try identity.decode(String.self, forKey: .name)
            count = try decoder.container(keyedBy: CountKeys.self).decode(Int.self, forKey: .count)
        }
    }
}

/// A model that a bitwise copy may not move (it holds a weak reference), read from the
/// records of `VersionOne`: `fetchAll` collects such values by moving each one, not by
/// `realloc`.
struct HoldsWeakReference: Decodable, Equatable, StorableModel {
    static let collectionName = "versioned"
    final class Owner {}
    var id: Int64
    var value: Int
    weak var owner: Owner?

    enum CodingKeys: String, CodingKey { case id, value }

    init(id: Int64, value: Int) {
        self.id = id
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        value = try container.decode(Int.self, forKey: .value)
    }

    static func == (left: Self, right: Self) -> Bool { left.id == right.id && left.value == right.value }
}

/// Reads the records of `Shuffled` through two one-byte key types whose keys share their bytes:
/// `Other.count` is the same byte as `First.name`. Odd records ask for `count` where `name` is
/// expected, so a decoder that matched keys by their byte alone, whatever their type, would
/// read the name's column for the count.
struct SameKeyBytes: Decodable, Equatable, StorableModel {
    static let collectionName = "shuffled"
    var id: Int64
    var name: String
    var count: Int

    enum First: CodingKey { case id, name }
    enum Other: CodingKey { case id, count }

    init(id: Int64, name: String, count: Int) {
        self.id = id
        self.name = name
        self.count = count
    }

    init(from decoder: any Decoder) throws {
        let first = try decoder.container(keyedBy: First.self)
        id = try first.decode(Int64.self, forKey: .id)
        if id % 2 == 1 {
            count = try decoder.container(keyedBy: Other.self).decode(Int.self, forKey: .count)
            name = try first.decode(String.self, forKey: .name)
        } else {
            name = try first.decode(String.self, forKey: .name)
            count = try decoder.container(keyedBy: Other.self).decode(Int.self, forKey: .count)
        }
    }
}

/// Reads the records of `Shuffled` with the name only.
struct ShuffledName: Codable, Equatable, StorableModel {
    static let collectionName = "shuffled"
    var id: Int64
    var name: String
}

/// Reads the records of `Shuffled`, and requires a column they lack: its look-ups fail, naming
/// this type.
struct ShuffledNeedsMore: Codable, Equatable, StorableModel {
    static let collectionName = "shuffled"
    var id: Int64
    var name: String
    var missing: Int
}

extension ConformanceSuite {
    static let typedReadChecks: [ConformanceCheck] = [
        check("one-byte keys of two key types that share their bytes each read their own column") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            let values = (1...40).map { Shuffled(id: Int64($0)) }
            try store.save(contentsOf: values)
            let expected = values.map { SameKeyBytes(id: $0.id, name: $0.name, count: $0.count) }
            #expect(try store.fetchAll(SameKeyBytes.self) == expected)
            for value in expected.prefix(10) { #expect(try store.fetch(SameKeyBytes.self, id: value.id) == value) }
            var streamed: [SameKeyBytes] = []
            try store.forEach(SameKeyBytes.self) { streamed.append($0) }
            #expect(streamed == expected)
        },
        check("look-ups of two types in one collection, alternately, each read as their own type") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            let values = (1...6).map { Shuffled(id: Int64($0)) }
            try store.save(contentsOf: values)
            try store.save(Country(code: "FR", name: "France"))
            for value in values {
                let name = ShuffledName(id: value.id, name: value.name)
                #expect(try store.fetch(ShuffledName.self, id: value.id) == name)
                #expect(try store.fetch(Shuffled.self, id: value.id) == value)
                #expect(try store.fetch(Country.self, id: "FR")?.name == "France")
                // Kept for the collection's read plan by the look-ups above, a decoder is only
                // handed to look-ups of the type it was kept for: the error names this type.
                let failure = expectError(.missingValue) { _ = try store.fetch(ShuffledNeedsMore.self, id: value.id) }
                #expect(failure?.message.contains("ShuffledNeedsMore") == true)
                #expect(failure?.message.contains("ShuffledName") == false)
            }
        },
        check("fetchAll collects records past several growths of its buffer, and a failure part-way loses none") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            // 0 and 1 read as Bool; 2 does not, and record 150 holds it.
            let values = (1...200).map { VersionOne(id: Int64($0), value: $0 == 150 ? 2 : $0 % 2) }
            try store.save(contentsOf: values)
            #expect(try store.fetchAll(VersionOne.self) == values)
            #expect(try store.fetchAll(VersionOne.self, limit: 17) == Array(values.prefix(17)))
            let failure = expectError(.typeMismatch) { _ = try store.fetchAll(VersionFlag.self) }
            #expect(failure?.key == .integer(150))
            #expect(try store.fetchAll(VersionFlag.self, limit: 149).count == 149)
        },
        check("values a bitwise copy may not move are collected past several growths of the buffer") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            #expect(!_isBitwiseTakable(HoldsWeakReference.self))
            let values = (1...200).map { VersionOne(id: Int64($0), value: $0 * 3) }
            try store.save(contentsOf: values)
            let read = try store.fetchAll(HoldsWeakReference.self)
            #expect(read == values.map { HoldsWeakReference(id: $0.id, value: $0.value) })
        },
        check("a type decoding through two key types gets each its own container, record after record") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            let values = (1...60).map { Shuffled(id: Int64($0)) }
            try store.save(contentsOf: values)
            let expected = values.map { TwoKeyTypes(id: $0.id, name: $0.name, count: $0.count) }
            #expect(try store.fetchAll(TwoKeyTypes.self) == expected)
            for value in expected.prefix(10) { #expect(try store.fetch(TwoKeyTypes.self, id: value.id) == value) }
            var streamed: [TwoKeyTypes] = []
            try store.forEach(TwoKeyTypes.self) { streamed.append($0) }
            #expect(streamed == expected)
        },
        check("a keyed container kept past its decode throws when used, even while another decode runs") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: [KeepsContainer(id: 1, name: "one"), KeepsContainer(id: 2, name: "two")])
            try store.save(contentsOf: [Shuffled(id: 2), Shuffled(id: 4)])
            #expect(try store.fetchAll(KeepsContainer.self).map(\.name) == ["one", "two"])
            let kept = try #require(KeepsContainer.kept.value)
            #expect(throws: (any Error).self) { _ = try kept.decode(String.self, forKey: .name) }
            // The decoders of these records may reuse what the kept container reached its
            // decoder through: it still reads nothing.
            var names: [String] = []
            try store.forEach(Shuffled.self) { value in
                names.append(value.name)
                #expect(throws: (any Error).self) { _ = try kept.decode(String.self, forKey: .name) }
                #expect(throws: (any Error).self) { _ = try kept.decode(Int64.self, forKey: .id) }
                #expect(!kept.contains(.name))
            }
            #expect(names == ["name 2", "name 4"])
        },
        check("a type that asks for its keys in another order per record reads every record right") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            let values = (1...9).map { Shuffled(id: Int64($0)) }
            try store.save(contentsOf: values)
            #expect(try store.fetchAll(Shuffled.self) == values)
            for value in values { #expect(try store.fetch(Shuffled.self, id: value.id) == value) }
            var streamed: [Shuffled] = []
            try store.forEach(Shuffled.self) { streamed.append($0) }
            #expect(streamed == values)
        },
        check("optional properties read values, nulls and columns a record lacks alike") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(OptionalsBefore(id: 1, name: "before"))
            let full = OptionalsAfter(
                id: 2,
                name: "full",
                text: "text",
                number: -5,
                small: 200,
                real: 2.5,
                float: 0.25,
                flag: true,
                when: Date(timeIntervalSince1970: 1_000),
                bytes: Data([1, 2, 3]),
                color: Color(red: 1, green: 2, blue: 3)
            )
            let empty = OptionalsAfter(id: 3, name: "empty")
            try store.save(contentsOf: [full, empty])
            let lacking = OptionalsAfter(id: 1, name: "before")
            #expect(try store.fetchAll(OptionalsAfter.self) == [lacking, full, empty])
            #expect(try store.fetch(OptionalsAfter.self, id: 1) == lacking)
            #expect(try store.fetch(OptionalsAfter.self, id: 2) == full)
            #expect(try store.fetch(OptionalsAfter.self, id: 3) == empty)
            #expect(try store.fetchAll(OptionalsBefore.self).map(\.name) == ["before", "full", "empty"])
        },
        check("a value of another kind than the property's takes the general path, with its errors") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: [VersionOne(id: 1, value: 1), VersionOne(id: 2, value: 1_600_000_001)])
            #expect(try store.fetch(VersionDate.self, id: 2)?.value == Date(timeIntervalSince1970: 1_600_000_001))
            #expect(try store.fetch(VersionFlag.self, id: 1)?.value == true)
            #expect(try store.fetch(VersionFloat.self, id: 1)?.value == 1)
            // 1,600,000,001 is no Bool, and not a Float without rounding.
            let flag = expectError(.typeMismatch) { _ = try store.fetchAll(VersionFlag.self) }
            #expect(flag?.column == "value")
            #expect(flag?.key == .integer(2))
            let float = expectError(.valueOutOfRange) { _ = try store.fetch(VersionFloat.self, id: 2) }
            #expect(float?.column == "value")
            // A real read as an integer property, exactly and not.
            try store.save(VersionReal(id: 3, value: 4))
            try store.save(VersionReal(id: 4, value: 4.5))
            #expect(try store.fetch(VersionOne.self, id: 3)?.value == 4)
            let fraction = expectError(.typeMismatch) { _ = try store.fetch(VersionOne.self, id: 4) }
            #expect(fraction?.column == "value")
        },
    ]
}
