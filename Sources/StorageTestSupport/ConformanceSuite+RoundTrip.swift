import Foundation
import Storage
import Testing

extension ConformanceSuite {
    static let roundTripChecks: [ConformanceCheck] = [
        check("every mapped type round-trips and survives reopening") { fixture, directory in
            let values = [Everything.sample(1), Everything.sample(2, empty: true)]
            do {
                let store = try fixture.openStore(in: directory)
                try store.save(contentsOf: values)
                #expect(try store.fetch(Everything.self, id: 1) == values[0])
                #expect(try store.fetch(Everything.self, id: 2) == values[1])
            }
            let reopened = try fixture.openStore(in: directory)
            #expect(try reopened.fetchAll(Everything.self) == values)
        },
        check("dates keep the documented precision: a Double of seconds since 1970") { fixture, directory in
            struct Stamp: Codable, Equatable {
                var id: Int64
                var at: Date
            }
            var random = SeededGenerator(seed: 1_970)
            var stamps: [Stamp] = []
            for id in 0..<3_000 {
                let since1970 = Double.random(in: -4e9...4.2e9, using: &random)
                let date: Date
                switch id % 3 {
                case 0: date = Date(timeIntervalSince1970: since1970)  // a Unix timestamp: kept exactly
                case 1: date = Date(timeIntervalSinceReferenceDate: since1970 - 978_307_200)
                default: date = Date(timeIntervalSinceReferenceDate: Double.random(in: -1e3...1e3, using: &random))
                }
                stamps.append(Stamp(id: Int64(id), at: date))
            }
            stamps.append(Stamp(id: 3_001, at: Date(timeIntervalSinceReferenceDate: 0.1)))  // reads back 0.100000024
            do {
                let store = try fixture.openStore(in: directory)
                try store.save(contentsOf: stamps)
            }
            let back = try fixture.openStore(in: directory).fetchAll(Stamp.self, orderBy: [.ascending("id")])
            try #require(back.count == stamps.count)
            var exact = 0
            for (stamp, read) in zip(stamps, back) {
                let since1970 = stamp.at.timeIntervalSince1970
                let error = abs(read.at.timeIntervalSinceReferenceDate - stamp.at.timeIntervalSinceReferenceDate)
                // Half a unit in the last place of the seconds since 1970 (0.12 µs from 1985 to 2038).
                #expect(
                    error <= since1970.ulp / 2,
                    "\(stamp.at.timeIntervalSinceReferenceDate) read back as \(read.at.timeIntervalSinceReferenceDate)"
                )
                // Exact for a Unix timestamp, and for every date before 1985.
                if stamp.id % 3 == 0 || abs(since1970) <= abs(stamp.at.timeIntervalSinceReferenceDate) {
                    #expect(
                        read == stamp,
                        "\(stamp.at.timeIntervalSinceReferenceDate) read back as \(read.at.timeIntervalSinceReferenceDate)"
                    )
                }
                if read == stamp { exact += 1 }
            }
            #expect(exact > stamps.count / 2)
        },
        check("columns get real types, not text") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(Everything.sample(1))
            let row = try #require(try store.fetchDictionaries(from: "everything").first)
            #expect(row["int"] == .integer(Int64(Int.min)))
            #expect(row["flag"] == .integer(1))
            #expect(row["double"] == .real(3.141_592_653_589_793))
            #expect(row["date"] == .real(1_700_000_000.25))
            #expect(row["data"] == .blob(Data([0, 1, 2, 255, 0])))
            #expect(row["uuid"] == .text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
            #expect(row["url"] == .text("https://example.com/a?b=c&d=%20"))
            #expect(row["decimal"] == .text("12345.6789"))
            #expect(row["mood"] == .text("busy"))
            #expect(row["priority"] == .integer(9))
            #expect(row["color"] == .text("#ff8001"))
            #expect(row["tags"] == .text(#"["a","b"]"#))
            #expect(row["address"] == .text(#"{"city":"Springfield","street":"1 Main","zip":12345}"#))
            #expect(row["optionalInt"] == .integer(42))
        },
        check("types without id get auto-assigned keys that are never reused") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let first = try store.save(Note(text: "one"))
            let second = try store.save(Note(text: "two"))
            #expect(first != second)
            #expect(try store.fetch(Note.self, id: first) == Note(text: "one"))
            #expect(try store.fetch(Note.self, id: second) == Note(text: "two"))
            try store.delete(Note.self, id: second)
            let third = try store.save(Note(text: "three"))
            #expect(third != second && third != first)
            #expect(try store.count(Note.self) == 2)
        },
        check("fetch and delete accept Int, Int64, String, UUID and StorageValue keys") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(Member.all[0])
            #expect(try store.fetch(Member.self, id: 1)?.id == 1)
            #expect(try store.fetch(Member.self, id: Int64(1))?.id == 1)
            #expect(try store.fetch(Member.self, id: StorageValue.integer(1))?.id == 1)
            #expect(try store.fetch(Member.self, id: 99) == nil)
            let key = try store.save(Country(code: "NZ", name: "New Zealand"))
            #expect(key == .text("NZ"))
            #expect(try store.fetch(Country.self, id: "NZ")?.name == "New Zealand")
            let session = Session(id: UUID(), user: "u")
            try store.save(session)
            #expect(try store.fetch(Session.self, id: session.id) == session)
            #expect(try store.delete(Session.self, id: session.id))
            #expect(try store.delete(Session.self, id: session.id) == false)
            #expect(try store.delete(Country.self, id: "NZ"))
            #expect(try store.fetch(Country.self, id: "NZ") == nil)
        },
        check("save replaces the record with the same key") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            var member = Member.all[0]
            try store.save(member)
            member.name = "renamed"
            member.email = nil
            try store.save(member)
            #expect(try store.fetchAll(Member.self) == [member])
        },
        check("a type that gains or loses properties reads its old records") { fixture, directory in
            do {
                let store = try fixture.openStore(in: directory)
                try store.save(ProfileV1(id: 1, name: "old", legacy: "x"))
            }
            let store = try fixture.openStore(in: directory)
            #expect(try store.fetch(ProfileV2.self, id: 1) == ProfileV2(id: 1, name: "old", nickname: nil, visits: nil))
            try store.save(ProfileV2(id: 2, name: "new", nickname: "n", visits: 3))
            #expect(try store.fetch(ProfileV2.self, id: 2)?.visits == 3)
            #expect(try store.fetch(ProfileV1.self, id: 1) == ProfileV1(id: 1, name: "old", legacy: "x"))
            let missing = expectError(.missingValue) { _ = try store.fetch(ProfileV3Strict.self, id: 1) }
            #expect(missing?.column == "mandatory")
            #expect(try store.count(ProfileV2.self) == 2)
        },
        check("large values round-trip") { fixture, directory in
            struct Blob: Codable, Equatable {
                var id: Int64
                var data: Data
                var text: String
            }
            let store = try fixture.openStore(in: directory)
            let data = Data((0..<65_536).map { _ in UInt8.random(in: 0...255) })
            let text = String(repeating: "ünïcødé ✓ ", count: 10_000)
            let blob = Blob(id: 1, data: data, text: text)
            try store.save(blob)
            #expect(try store.fetch(Blob.self, id: 1) == blob)
            #expect(try fixture.openStore(in: directory).fetchAll(Blob.self) == [blob])
        },
        check("text keys look up exactly and sort byte-wise") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let codes = ["b", "B", "a", "ä", "aa", "A", "Z", "10", "9", ""]
            try store.save(contentsOf: codes.map { Country(code: $0, name: "n" + $0) })
            #expect(
                try store.fetchAll(Country.self).map(\.code)
                    == codes.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            )
            for code in codes { #expect(try store.fetch(Country.self, id: code)?.name == "n" + code) }
            #expect(try store.fetch(Country.self, id: "b ") == nil)
        },
        check("nil and empty values are kept apart") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(Everything.sample(1, empty: true))
            let back = try #require(try store.fetch(Everything.self, id: 1))
            #expect(back.data == Data())
            #expect(back.text == "")
            #expect(back.optionalText == nil)
            #expect(try store.count(Everything.self, where: Column("optionalText") == nil) == 1)
            #expect(try store.count(Everything.self, where: Column("text") == "") == 1)
        },
    ]
}
