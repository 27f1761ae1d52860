import Foundation
import Storage
import Testing

@testable import FileArchiveBackend

private struct Address: Codable, Equatable {
    var street: String
    var zip: Int?
}

private struct Profile: Codable, Equatable {
    var id: UUID
    var name: String
    var age: Int
    var score: Double
    var ratio: Float
    var small: Int8
    var big: UInt64
    var active: Bool
    var born: Date
    var avatar: Data
    var homepage: URL
    var balance: Decimal
    var nickname: String?
    var tags: [String]
    var address: Address
    var previous: [Address]
    var counts: [String: Int]
    var matrix: [[Double]]
}

private func sampleProfile() -> Profile {
    Profile(
        id: UUID(),
        name: "Ada ✓",
        age: 36,
        score: 0.1 + 0.2,
        ratio: 1.5,
        small: -8,
        big: UInt64.max,
        active: true,
        born: Date(timeIntervalSince1970: -1_234_567.25),
        avatar: Data([0, 1, 2, 255]),
        homepage: URL(string: "https://example.com/a?b=c")!,
        balance: Decimal(string: "12345.678")!,
        nickname: nil,
        tags: ["a", "", "ünï"],
        address: Address(street: "Main", zip: 1234),
        previous: [Address(street: "Old", zip: nil)],
        counts: ["x": 1, "y": 2],
        matrix: [[1, 2], [], [3]]
    )
}

@Test func aValueRoundTripsThroughTheArchive() throws {
    let profile = sampleProfile()
    let data = try ArchiveEncoder().encode(profile)
    #expect(try ArchiveDecoder().decode(Profile.self, from: data) == profile)
}

private struct ProfileV1: Codable, Equatable {
    var name: String
    var age: Int
    var legacy: String
}

private struct ProfileV2: Codable, Equatable {
    var name: String
    var age: Int
    var email: String?
    var nicknames: [String]?
}

@Test func archivesOfAnOlderVersionOfATypeStillDecode() throws {
    let old = try ArchiveEncoder().encode(ProfileV1(name: "a", age: 3, legacy: "gone"))
    // The removed key is ignored, the added optional keys read as nil.
    #expect(try ArchiveDecoder().decode(ProfileV2.self, from: old) == ProfileV2(name: "a", age: 3))
    let new = try ArchiveEncoder().encode(ProfileV2(name: "b", age: 4, email: "e", nicknames: ["x"]))
    do {
        _ = try ArchiveDecoder().decode(ProfileV1.self, from: new)
        Issue.record("a missing required key decoded")
    } catch DecodingError.keyNotFound(let key, _) {
        #expect(key.stringValue == "legacy")
    }
}

private indirect enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case group([Shape], name: String?)
    case empty
}

private class Base: Codable {
    var id: Int
    init(id: Int) { self.id = id }
}

private final class Derived: Base {
    var extra: String

    init(id: Int, extra: String) {
        self.extra = extra
        super.init(id: id)
    }

    private enum CodingKeys: String, CodingKey { case extra }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        extra = try container.decode(String.self, forKey: .extra)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(extra, forKey: .extra)
        try super.encode(to: container.superEncoder())
    }
}

/// Encodes through nested containers obtained up front, as hand-written `encode(to:)` methods do.
private struct Nested: Codable, Equatable {
    var a: Int
    var inner: [String]
    var point: [String: Double]

    private enum CodingKeys: String, CodingKey { case a, inner, point }
    private enum PointKeys: String, CodingKey { case x, y }

    init(a: Int, inner: [String], point: [String: Double]) {
        self.a = a
        self.inner = inner
        self.point = point
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        a = try container.decode(Int.self, forKey: .a)
        var list = try container.nestedUnkeyedContainer(forKey: .inner)
        inner = []
        while !list.isAtEnd { inner.append(try list.decode(String.self)) }
        let point = try container.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
        self.point = ["x": try point.decode(Double.self, forKey: .x), "y": try point.decode(Double.self, forKey: .y)]
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var list = container.nestedUnkeyedContainer(forKey: .inner)
        for text in inner { try list.encode(text) }
        var point = container.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
        try point.encode(self.point["x"]!, forKey: .x)
        try point.encode(self.point["y"]!, forKey: .y)
        try container.encode(a, forKey: .a)
    }
}

@Test func enumsClassesAndNestedContainersRoundTrip() throws {
    let shape = Shape.group([.circle(radius: 2), .empty, .group([], name: "inner")], name: nil)
    #expect(try ArchiveDecoder().decode(Shape.self, from: ArchiveEncoder().encode(shape)) == shape)
    let derived = try ArchiveDecoder().decode(Derived.self, from: ArchiveEncoder().encode(Derived(id: 7, extra: "e")))
    #expect(derived.id == 7 && derived.extra == "e")
    let nested = Nested(a: 1, inner: ["p", "q"], point: ["x": 1.5, "y": -2])
    #expect(try ArchiveDecoder().decode(Nested.self, from: ArchiveEncoder().encode(nested)) == nested)
    let values: [Int?] = [1, nil, 3]
    #expect(try ArchiveDecoder().decode([Int?].self, from: ArchiveEncoder().encode(values)) == values)
    #expect(try ArchiveDecoder().decode(String.self, from: ArchiveEncoder().encode("top")) == "top")
}

/// Writes into a nested container after its parent moved on: the archive cannot hold that.
private struct Interleaved: Encodable {
    private enum CodingKeys: String, CodingKey { case first, second }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var first = container.nestedUnkeyedContainer(forKey: .first)
        try container.encode(1, forKey: .second)
        try first.encode(2)
    }
}

@Test func writingToAFinishedContainerIsAnError() {
    #expect(throws: EncodingError.self) { try ArchiveEncoder().encode(Interleaved()) }
}

@Test func numbersThatDoNotFitTheirTypeAreErrors() throws {
    let data = try ArchiveEncoder().encode([300, -1])
    #expect(throws: DecodingError.self) { try ArchiveDecoder().decode([UInt8].self, from: data) }
    #expect(try ArchiveDecoder().decode([Int16].self, from: data) == [300, -1])
    #expect(try ArchiveDecoder().decode([Double].self, from: data) == [300, -1])
}
