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
