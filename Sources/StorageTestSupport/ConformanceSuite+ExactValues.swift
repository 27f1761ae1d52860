import Foundation
import Storage
import Testing

/// A record of every number kind whose edge values the suite stores.
struct Measurement: Codable, Equatable {
    var id: Int64
    var double: Double
    var float: Float?
    var integer: Int64
    var decimal: Decimal?
}

/// The same collection read with a Float where a Double was written.
struct FloatMeasurement: Codable, StorableModel {
    static let collectionName = "Measurement"
    var id: Int64
    var double: Float
}

extension ConformanceSuite {
    static let exactValueChecks: [ConformanceCheck] = [
        check("extreme numbers are stored bit for bit, NaN is refused and writes nothing") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let doubles: [Double] = [
                .infinity, -.infinity, 1e308, -1e308, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
                -.leastNonzeroMagnitude, .leastNormalMagnitude / 3, 0.1, 1 / 3, 0,
            ]
            let integers: [Int64] = [.min, .max, .min + 1, .max - 1, 0, -1]
            let decimal = try #require(Decimal(string: "123456789012345678901234567.891"))
            var expected: [Measurement] = []
            for (index, double) in doubles.enumerated() {
                expected.append(
                    Measurement(
                        id: Int64(index),
                        double: double,
                        float: Float(exactly: double) ?? .infinity,
                        integer: integers[index % integers.count],
                        decimal: index == 0 ? decimal : Decimal(index)
                    )
                )
            }
            try store.save(contentsOf: expected)
            let back = try store.fetchAll(Measurement.self, orderBy: [.ascending("id")])
            #expect(back == expected)
            #expect(back.map(\.double.bitPattern) == expected.map(\.double.bitPattern))
            #expect(back.map { $0.float?.bitPattern } == expected.map { $0.float?.bitPattern })
            #expect(back.first?.decimal?.description == "123456789012345678901234567.891")

            // NaN: refused everywhere (SQLite would keep null), nothing written, counts agree.
            let nan = expectError(.valueOutOfRange) {
                try store.save(Measurement(id: 99, double: .nan, float: nil, integer: 0, decimal: nil))
            }
            #expect(nan?.column == "double")
            _ = expectError(.valueOutOfRange) {
                try store.save(Measurement(id: 99, double: 1, float: .nan, integer: 0, decimal: nil))
            }
            _ = expectError(.valueOutOfRange) {
                try store.save(Measurement(id: 99, double: 1, float: nil, integer: 0, decimal: .nan))
            }
            #expect(try store.count(Measurement.self) == expected.count)
            #expect(try store.count(Measurement.self, where: Column("double") == nil) == 0)
            #expect(try store.fetch(Measurement.self, id: 99) == nil)

            // -0.0 is stored as 0.0 on every backend (SQLite drops the sign of a whole real).
            try store.save(Measurement(id: 100, double: -0.0, float: -0.0, integer: 0, decimal: nil))
            let zero = try #require(try store.fetch(Measurement.self, id: 100))
            #expect(zero.double.bitPattern == (0.0).bitPattern)
            #expect(zero.float?.bitPattern == Float(0).bitPattern)

            // A Double that is no Float is an error when read as a Float, not a rounding.
            _ = expectError(.valueOutOfRange) { _ = try store.fetchAll(FloatMeasurement.self) }
        },
        check("UInt64 beyond Int64 is refused when typed and kept exactly from JSON") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            struct Big: Codable, StorableModel {
                static let collectionName = "big"
                var id: Int64
                var value: UInt64
            }
            _ = expectError(.valueOutOfRange) { try store.save(Big(id: 1, value: .max)) }
            #expect(try store.count(in: "big", where: nil) == 0)

            let json = #"[{"id": 1, "n": 18446744073709551615}, {"id": 2, "n": 123456789012345678901234567890}]"#
            try store.insert(jsonArray: Data(json.utf8), into: "numbers")
            let rows = try store.fetchDictionaries(from: "numbers", orderBy: [.ascending("id")])
            #expect(rows.map { $0["n"] } == [.text("18446744073709551615"), .text("123456789012345678901234567890")])
        },
        check("NaN in untyped rows is refused naming the row, and nothing is stored") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let rows: [[String: Any]] = [["id": 1, "x": 1.5], ["id": 2, "x": Double.nan], ["id": 3, "x": NSNull()]]
            let error = expectError(.valueOutOfRange) { try store.insert(dictionaries: rows, into: "nan") }
            #expect(error?.message.contains("row 1") == true)
            #expect(error?.column == "x")
            #expect(try store.fetchDictionaries(from: "nan").isEmpty)
            try store.insert(dictionaries: [rows[0], rows[2], ["id": 4, "x": -Double.infinity]], into: "nan")
            #expect(try store.count(in: "nan", where: Column("x") == nil) == 1)
            let back = try store.fetchDictionaries(from: "nan", orderBy: [.ascending("id")]).map { $0["x"] }
            #expect(back == [.real(1.5), .null, .real(-.infinity)])
        },
    ]
}
