import Foundation

/// The record every measurement uses, with deterministic values.
struct Person: Codable, Equatable {
    var id: Int64
    var firstName: String
    var lastName: String
    var email: String
    var age: Int
    var height: Double
    var score: Double
    var isActive: Bool
    var createdAt: Date
    var avatar: Data

    /// `count` people with ids 1...count, strings of 8 to 24 characters, a 16-byte avatar, ages 18 to 80.
    static func make(_ count: Int) -> [Person] {
        Array(PeopleSequence(count: count))
    }
}

/// The people of `Person.make(count)`, made one at a time as they are iterated, so that a load of
/// ten million records never holds them all as Swift values (the scaling benchmark's inserts).
struct PeopleSequence: Sequence {
    let count: Int

    var underestimatedCount: Int { count }

    func makeIterator() -> Iterator { Iterator(count: count) }

    struct Iterator: IteratorProtocol {
        let count: Int
        private var index = 0
        private var generator = SplitMix64(seed: 42)

        init(count: Int) { self.count = count }

        private mutating func word(_ length: Int) -> String {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(length)
            for _ in 0..<length { bytes.append(UInt8(97 + generator.next() % 26)) }
            return String(decoding: bytes, as: UTF8.self)
        }

        mutating func next() -> Person? {
            guard index < count else { return nil }
            index += 1
            let firstName = word(8 + Int(generator.next() % 9))
            let lastName = word(8 + Int(generator.next() % 17))
            let email = word(8) + "@" + word(7) + ".com"
            let age = 18 + Int(generator.next() % 63)
            let height = 1.5 + Double(generator.next() % 500) / 1_000
            let score = Double(generator.next() % 1_000_000) / 100
            let isActive = generator.next() % 2 == 0
            let createdAt = Date(timeIntervalSince1970: 1_600_000_000 + Double(generator.next() % 100_000_000))
            var avatar = Data(count: 16)
            for byte in 0..<16 { avatar[byte] = UInt8(truncatingIfNeeded: generator.next()) }
            return Person(
                id: Int64(index),
                firstName: firstName,
                lastName: lastName,
                email: email,
                age: age,
                height: height,
                score: score,
                isActive: isActive,
                createdAt: createdAt,
                avatar: avatar
            )
        }
    }
}

extension Person {
    /// The people as a JSON array, as a server would send them: dates as seconds since 1970,
    /// the avatar as base64 text.
    static func jsonArray(_ people: [Person]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return try encoder.encode(people)
    }

    /// The people as NDJSON, one object per line as `jsonArray` encodes each (a log or an
    /// export streams them so).
    static func jsonLines(_ people: [Person]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        var data = Data()
        for person in people {
            data.append(try encoder.encode(person))
            data.append(UInt8(ascii: "\n"))
        }
        return data
    }

    /// The people as CSV with a header row, as a spreadsheet exports them: dates as seconds since
    /// 1970, the avatar as base64 text, no field needing quotes.
    static func csv(_ people: [Person]) -> Data {
        var text = "id,firstName,lastName,email,age,height,score,isActive,createdAt,avatar\n"
        for person in people { text += csvLine(person) }
        return Data(text.utf8)
    }

    /// One person's CSV line, with its line feed.
    static func csvLine(_ person: Person) -> String {
        "\(person.id),\(person.firstName),\(person.lastName),\(person.email),\(person.age),"
            + "\(person.height),\(person.score),\(person.isActive ? 1 : 0),"
            + "\(person.createdAt.timeIntervalSince1970),\(person.avatar.base64EncodedString())\n"
    }

    /// `count` ids drawn at random (deterministically) from 1...`upperBound`.
    static func randomIDs(_ count: Int, upTo upperBound: Int) -> [Int64] {
        var generator = SplitMix64(seed: 7)
        return (0..<count).map { _ in Int64(generator.next() % UInt64(max(upperBound, 1))) + 1 }
    }

    /// Whether the person passes the filter every backend measures: `age BETWEEN 30 AND 39`.
    var isInFilter: Bool { age >= 30 && age <= 39 }
}

/// A small deterministic generator, so every run stores the same data.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
