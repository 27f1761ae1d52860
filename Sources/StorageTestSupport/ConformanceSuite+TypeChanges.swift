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
    ]
}
