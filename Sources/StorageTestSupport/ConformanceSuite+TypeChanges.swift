import Foundation
import Storage
import Testing

// Three versions of one model, as an app's releases might declare it.
struct VersionOne: Codable, Equatable, StorableModel {
    static let collectionName = "versioned"
    var id: Int64
    var value: Int
}

struct VersionText: Codable, Equatable, StorableModel {
    static let collectionName = "versioned"
    var id: Int64
    var value: String
}

struct VersionBytes: Codable, Equatable, StorableModel {
    static let collectionName = "versioned"
    var id: Int64
    var value: Data
}

struct VersionReal: Codable, Equatable, StorableModel {
    static let collectionName = "versioned"
    var id: Int64
    var value: Double
}

struct VersionTextKey: Codable, Equatable, StorableModel {
    static let collectionName = "versioned"
    var id: String
    var value: Int
}

extension ConformanceSuite {
    static let typeChangeChecks: [ConformanceCheck] = [
        check("a numeric primary key keeps its type: text keys are refused, typed or untyped") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(VersionOne(id: 1, value: 5))
            let typed = expectError(.schemaMismatch) { try store.save(VersionTextKey(id: "A7", value: 6)) }
            #expect(typed?.column == "id")
            try store.insert(jsonArray: Data(#"[{"id": 1, "v": 1}]"#.utf8), into: "keyed")
            let untyped = expectError(.schemaMismatch) {
                try store.insert(jsonArray: Data(#"[{"id": "A7", "v": 2}]"#.utf8), into: "keyed")
            }
            #expect(untyped?.column == "id")
            #expect(try store.count(in: "keyed") == 1)
            #expect(try store.fetchAll(VersionOne.self) == [VersionOne(id: 1, value: 5)])
        },
        check("a property whose type changes unsafely is refused at save, and nothing is written") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(VersionOne(id: 1, value: 5))
            let error = expectError(.schemaMismatch) { try store.save(VersionBytes(id: 2, value: Data([1]))) }
            #expect(error?.collection == "versioned")
            #expect(error?.column == "value")
            #expect(error?.message.contains("integer") == true && error?.message.contains("blob") == true)
            #expect(error?.message.contains("VersionBytes") == true)
            #expect(try store.count(VersionOne.self) == 1)
            #expect(try store.fetchAll(VersionOne.self) == [VersionOne(id: 1, value: 5)])
        },
        check("integer → real and integer → text widen the column, and both versions read") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(VersionOne(id: 1, value: 5))
            try store.save(VersionReal(id: 2, value: 2.5))
            #expect(try store.fetch(VersionOne.self, id: 1) == VersionOne(id: 1, value: 5))
            #expect(try store.fetchAll(VersionReal.self).map(\.value) == [5, 2.5])

            // A real column does not become text: SQLite would shorten its digits.
            let real = expectError(.schemaMismatch) { try store.save(VersionText(id: 3, value: "x")) }
            #expect(real?.message.contains("real") == true)
            #expect(try store.count(VersionOne.self) == 2)

            let other = directory.appendingPathComponent("other", isDirectory: true)
            try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
            let fresh = try fixture.openStore(in: other)
            try fresh.save(VersionOne(id: 1, value: Int.min))
            try fresh.save(VersionText(id: 2, value: "abc"))
            #expect(try fresh.fetch(VersionOne.self, id: 1) == VersionOne(id: 1, value: Int.min))
            #expect(try fresh.fetchAll(VersionText.self).map(\.value) == [String(Int.min), "abc"])
            #expect(try fresh.count(VersionText.self, where: Column("value") == "abc") == 1)
        },
        check("an integer no Double holds is never rounded into a real column: the write is refused") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            let big: Int64 = 9_007_199_254_740_993  // 2^53 + 1
            // Typed: an Int column holding it is not widened by a Double property's save.
            try store.save(VersionOne(id: 1, value: Int(big)))
            try store.save(VersionOne(id: 2, value: 1 << 60))  // past 2^53, but a Double holds it
            let widening = expectError(.valueOutOfRange) { try store.save(VersionReal(id: 3, value: 0.5)) }
            #expect(widening?.collection == "versioned")
            #expect(widening?.column == "value")
            #expect(widening?.key == .integer(1))
            #expect(try store.schema(of: "versioned")?.column(named: "value")?.type == .integer)
            #expect(try store.fetchAll(VersionOne.self).map(\.value) == [Int(big), 1 << 60])
            try store.delete(VersionOne.self, id: 1)
            try store.save(VersionReal(id: 3, value: 0.5))  // 2^60 alone widens exactly
            #expect(try store.fetchAll(VersionReal.self).map(\.value) == [0x1p60, 0.5])
            // (An Int property's save into the real column is refused as a narrowing, whatever the value.)
            #expect(throws: StorageError.self) { try store.save(VersionOne(id: 4, value: 1)) }

            // Untyped: widening a column that holds it, one batch holding it beside a fraction, and
            // a later batch bringing it to a real column. Nothing of a refused batch is stored.
            try store.insert(jsonArray: Data(#"[{"id": 1, "v": 9007199254740993}]"#.utf8), into: "imported")
            let untyped = expectError(.valueOutOfRange) {
                try store.insert(jsonArray: Data(#"[{"id": 2, "v": 0.5}, {"id": 3, "v": 7}]"#.utf8), into: "imported")
            }
            #expect(untyped?.key == .integer(1))
            #expect(try store.count(in: "imported") == 1)
            let mixed = expectError(.valueOutOfRange) {
                try store.insert(
                    jsonArray: Data(#"[{"id": 1, "w": 0.25}, {"id": 2, "w": -9007199254740993}]"#.utf8),
                    into: "fresh"
                )
            }
            #expect(mixed?.column == "w")
            #expect(mixed?.message.contains("row 1") == true)
            #expect(try store.count(in: "fresh") == 0)
            try store.insert(jsonArray: Data(#"[{"id": 1, "r": 0.5}]"#.utf8), into: "reals")
            let arriving = expectError(.valueOutOfRange) {
                try store.insert(jsonArray: Data(#"[{"id": 2, "r": 9223372036854775807}]"#.utf8), into: "reals")
            }
            #expect(arriving?.column == "r")
            try store.insert(jsonArray: Data(#"[{"id": 2, "r": 4503599627370497}]"#.utf8), into: "reals")
            let reals = try store.fetchDictionaries(from: "reals", orderBy: [.ascending("id")]).map { $0["r"] }
            #expect(reals == [.real(0.5), .real(4_503_599_627_370_497)])
            try store.close()

            // After reopening, the stored values are as written.
            let reopened = try fixture.openStore(in: directory)
            defer { try? reopened.close() }
            let imported = try reopened.fetchDictionaries(from: "imported").map { $0["v"] }
            #expect(imported == [.integer(9_007_199_254_740_993)])
        },
    ]
}
