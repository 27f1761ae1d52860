import Foundation
import Storage
import Testing

/// The public-domain airport list in `Tests/Fixtures/airports.csv` (see `Tests/Fixtures/README.md`)
/// ingested as CSV and as JSON on every backend, checked against a plain-Swift reading of the file.
struct FixtureDataChecks {
    static let airportsFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Fixtures/airports.csv")

    /// The oracle: the file read with nothing but `split` and a quote-aware field loop (the file
    /// has quoted names with commas and doubled quotes, and no line breaks inside quotes).
    static func oracle() throws -> [[String: String]] {
        let text = try String(contentsOf: airportsFile, encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        let header = lines.removeFirst().split(separator: ",").map(String.init)
        return lines.map { line in
            var fields: [String] = []
            var field = ""
            var quoted = false
            var previous: Character = " "
            for character in line {
                if character == "\"" {
                    if !quoted && previous == "\"" { field.append("\"") }
                    quoted.toggle()
                } else if character == "," && !quoted {
                    fields.append(field)
                    field = ""
                } else {
                    field.append(character)
                }
                previous = character
            }
            fields.append(field)
            return Dictionary(uniqueKeysWithValues: zip(header, fields))
        }
    }

    func airportsAsCSVAndJSONMatchThePlainSwiftOracle(_ fixture: BackendFixture) throws {
        let expected = try Self.oracle()
        #expect(expected.count == 3376)
        let texans = expected.filter { $0["state"] == "TX" }.count
        let northOf60 = expected.filter { Double($0["latitude"]!)! > 60 }.count
        try TemporaryDirectory.with { directory in
            let store = try fixture.openStore(in: directory)
            #expect(try store.insert(csv: Self.airportsFile, into: "airports", primaryKey: "iata") == 3376)
            // Importing the same file again replaces its records: the key is the IATA code.
            try store.insert(csv: Self.airportsFile, into: "airports", primaryKey: "iata")
            let rows = try store.fetchDictionaries(from: "airports")
            #expect(rows.count == expected.count)
            #expect(try store.fetchDictionaries(from: "airports", where: Column("state") == "TX").count == texans)
            #expect(try store.fetchDictionaries(from: "airports", where: Column("latitude") > 60.0).count == northOf60)
            let byCode = Dictionary(uniqueKeysWithValues: rows.map { ($0["iata"]!, $0) })
            for airport in expected {
                let row = try #require(byCode[.text(airport["iata"]!)])
                #expect(row["name"] == .text(airport["name"]!))
                #expect(row["latitude"] == .real(Double(airport["latitude"]!)!))
            }
            #expect(byCode[.text("DBN")]?["name"] == .text("W. H. \"Bud\" Barron"))

            // The same records as JSON (numbers as numbers) give the same answers.
            let objects: [[String: Any]] = expected.map { airport in
                var object: [String: Any] = airport
                object["latitude"] = Double(airport["latitude"]!)!
                object["longitude"] = Double(airport["longitude"]!)!
                return object
            }
            try store.insert(jsonArray: try JSONSerialization.data(withJSONObject: objects), into: "airports_json")
            #expect(try store.fetchDictionaries(from: "airports_json").count == expected.count)
            #expect(try store.fetchDictionaries(from: "airports_json", where: Column("state") == "TX").count == texans)
            #expect(
                try store.fetchDictionaries(from: "airports_json", where: Column("latitude") > 60.0).count == northOf60
            )
        }
    }
}

extension ConformanceSuite {
    static let fixtureDataChecks: [ConformanceCheck] = [
        check("airports as CSV and JSON match the plain swift oracle") { fixture, _ in
            try FixtureDataChecks().airportsAsCSVAndJSONMatchThePlainSwiftOracle(fixture)
        }
    ]
}
