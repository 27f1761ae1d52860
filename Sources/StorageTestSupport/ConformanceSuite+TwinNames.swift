import Foundation
import Storage
import Testing

/// `café` spelt with `é` (NFC).
let composedCafe = "caf\u{E9}"
/// `café` spelt with `e` and a combining acute accent (NFD): one name with `composedCafe`.
let decomposedCafe = "cafe\u{301}"

/// Two properties whose names differ only in Unicode normalization.
struct TwinProperties: Codable, Equatable, StorableModel {
    var id: Int64
    var a: Int
    var b: Int

    enum CodingKeys: String, CodingKey {
        case id
        case a = "caf\u{E9}"
        case b = "cafe\u{301}"
    }
}

/// A property named `café` in NFC, and one named in NFD, stored in the same collection.
struct ComposedName: Codable, Equatable, StorableModel {
    static let collectionName = "spelt"
    var id: Int64
    var value: Int

    enum CodingKeys: String, CodingKey {
        case id
        case value = "caf\u{E9}"
    }
}

struct DecomposedName: Codable, Equatable, StorableModel {
    static let collectionName = "spelt"
    var id: Int64
    var value: Int

    enum CodingKeys: String, CodingKey {
        case id
        case value = "cafe\u{301}"
    }
}

extension ConformanceSuite {
    /// Expects `error` to name both spellings of `café`, escaped so they can be told apart.
    static func expectBothSpellings(_ error: StorageError?, sourceLocation: SourceLocation = #_sourceLocation) {
        let message = error?.message ?? ""
        #expect(message.contains("caf\\u{00E9}"), "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(message.contains("cafe\\u{0301}"), "\(String(describing: error))", sourceLocation: sourceLocation)
    }

    static let twinNameChecks: [ConformanceCheck] = [
        check("two properties named alike but for Unicode normalization are refused, naming both, nothing written") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            expectBothSpellings(expectError(.schemaMismatch) { try store.save(TwinProperties(id: 1, a: 1, b: 2)) })
            expectError(.schemaMismatch) { try store.save(contentsOf: [TwinProperties(id: 1, a: 1, b: 2)]) }
            #expect(try store.collectionNames().isEmpty)
            // A collection keeps one spelling: a type spelling a stored column the other way is
            // refused, and so is a query naming it so.
            try store.save(ComposedName(id: 1, value: 1))
            expectBothSpellings(expectError(.schemaMismatch) { try store.save(DecomposedName(id: 2, value: 2)) })
            expectError(.unknownColumn) {
                _ = try store.fetchAll(ComposedName.self, where: Column(decomposedCafe) == 1)
            }
            #expect(
                try store.fetchAll(ComposedName.self, where: Column(composedCafe) == 1) == [
                    ComposedName(id: 1, value: 1)
                ]
            )
            #expect(try store.fetchDictionaries(from: "spelt") == [["id": 1, composedCafe: 1]])
        },
        check("a JSON object holding a key twice, or in two normalizations, is .invalidJSON naming row and key") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            let repeated = expectError(.invalidJSON) {
                try store.insert(jsonArray: Data(#"[{"id":0,"a":0},{"id":1,"a":1,"a":2}]"#.utf8), into: "j")
            }
            #expect(repeated?.message.contains("row 1") == true, "\(String(describing: repeated))")
            #expect(repeated?.message.contains("'a'") == true, "\(String(describing: repeated))")
            let twins = expectError(.invalidJSON) {
                try store.insert(
                    jsonArray: Data("[{\"id\":1,\"\(composedCafe)\":1,\"\(decomposedCafe)\":2}]".utf8),
                    into: "j"
                )
            }
            #expect(twins?.message.contains("row 0") == true, "\(String(describing: twins))")
            expectBothSpellings(twins)
            // Written with escapes, and inside a nested object (stored as JSON text).
            expectError(.invalidJSON) {
                try store.insert(jsonArray: Data(#"[{"id":1,"caf\u00e9":1,"cafe\u0301":2}]"#.utf8), into: "j")
            }
            expectError(.invalidJSON) {
                try store.insert(jsonArray: Data(#"[{"id":1,"n":{"k":1,"k":2}}]"#.utf8), into: "j")
            }
            #expect(try store.collectionNames().isEmpty)
            // The same key in different objects, and in an object nested in another, is no repeat.
            try store.insert(jsonArray: Data(#"[{"id":1,"a":{"a":1}},{"id":2,"a":[{"a":1},{"a":2}]}]"#.utf8), into: "j")
            #expect(try store.count(in: "j") == 2)
        },
        check("every untyped path refuses a second spelling of a name, in a batch or beside the stored schema") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            // Across the rows of one batch.
            let rows: [[String: Any]] = [["id": 1, composedCafe: 1], ["id": 2, decomposedCafe: 2]]
            expectBothSpellings(expectError(.schemaMismatch) { try store.insert(dictionaries: rows, into: "d") })
            expectError(.schemaMismatch) {
                try store.insert(
                    jsonArray: Data("[{\"id\":1,\"\(composedCafe)\":1},{\"id\":2,\"\(decomposedCafe)\":2}]".utf8),
                    into: "d"
                )
            }
            // CSV headers.
            expectError(.invalidCSV) {
                try store.insert(csv: Data("id,\(composedCafe),\(decomposedCafe)\n1,1,2\n".utf8), into: "d")
            }
            expectError(.invalidCSV) { try store.insert(csv: Data("id,a,a\n1,1,2\n".utf8), into: "d") }
            #expect(try store.collectionNames().isEmpty)
            // Beside the stored schema, on every path.
            try store.insert(dictionaries: [["id": 1, composedCafe: 1]], into: "d")
            expectBothSpellings(
                expectError(.schemaMismatch) {
                    try store.insert(dictionaries: [["id": 2, decomposedCafe: 2]], into: "d")
                }
            )
            expectError(.schemaMismatch) {
                try store.insert(jsonArray: Data("[{\"id\":2,\"\(decomposedCafe)\":2}]".utf8), into: "d")
            }
            expectError(.schemaMismatch) { try store.insert(csv: Data("id,\(decomposedCafe)\n2,2\n".utf8), into: "d") }
            expectError(.schemaMismatch) { try store.insert(dictionaries: [["id": 2, "ID": 2]], into: "d") }
            #expect(try store.fetchDictionaries(from: "d") == [["id": 1, composedCafe: 1]])
        },
    ]
}
