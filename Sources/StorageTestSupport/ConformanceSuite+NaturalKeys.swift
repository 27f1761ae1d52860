import Foundation
import Storage
import Testing

extension ConformanceSuite {
    static let naturalKeyChecks: [ConformanceCheck] = [
        check("a natural key makes a second import replace, and bad keys name the row") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let airports = Data(
                #"""
                [{"iata": "CDG", "name": "Paris-Charles de Gaulle", "elevation": 392},
                 {"iata": "LHR", "name": "Heathrow", "elevation": 83},
                 {"iata": "LHR", "name": "Heathrow", "elevation": 83}]
                """#.utf8
            )
            #expect(try store.insert(jsonArray: airports, into: "airports", primaryKey: "iata") == 3)
            try store.insert(jsonArray: airports, into: "airports", primaryKey: "iata")
            #expect(try store.count(in: "airports") == 2)
            #expect(try store.count(in: "airports", where: Column("elevation") > 100) == 1)

            let missing = expectError(.invalidKey) {
                try store.insert(
                    dictionaries: [["iata": "AMS", "elevation": -11], ["name": "nowhere"]],
                    into: "airports",
                    primaryKey: "iata"
                )
            }
            #expect(missing?.message.contains("row 1") == true)
            let clash = expectError(.constraintViolation) {
                try store.insert(
                    dictionaries: [["iata": "AMS", "elevation": -11], ["iata": "AMS", "elevation": -3]],
                    into: "airports",
                    primaryKey: "iata"
                )
            }
            #expect(clash?.message.contains("rows 0 and 1") == true)
            #expect(clash?.key == .text("AMS"))
            _ = expectError(.schemaMismatch) {
                try store.insert(dictionaries: [["name": "x"]], into: "airports", primaryKey: "name")
            }
            #expect(try store.count(in: "airports") == 2)

            #expect(try store.deleteAll(from: "airports", where: Column("iata") == "LHR") == 1)
            #expect(try store.fetchDictionaries(from: "airports").map { $0["iata"] } == [.text("CDG")])
            #expect(try store.count(in: "never") == 0)
            #expect(try store.deleteAll(from: "never") == 0)
            _ = expectError(.unknownColumn) { _ = try store.count(in: "airports", where: Column("nope") == 1) }
        }
    ]
}
