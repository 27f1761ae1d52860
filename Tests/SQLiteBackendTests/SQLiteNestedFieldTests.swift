import Foundation
import SQLiteBackend
import Storage
import Testing

/// SQLite's `json_extract` (the compiled form of a nested field) against `PreparedPredicate`'s
/// reading of the same JSON in Swift (what LMDB, the archive and memory use), over documents
/// chosen to disagree: invalid JSON, duplicate keys, escapes, every number form, whitespace,
/// deep nesting, and values that are not text.
struct SQLiteNestedFieldTests {
    private static let schema = CollectionSchema(
        name: "docs",
        columns: [
            ColumnDefinition(name: "id", type: .integer),
            ColumnDefinition(name: "j", type: .text),
            ColumnDefinition(name: "u", type: .untyped),
        ],
        primaryKey: "id"
    )

    private static let documents: [StorageValue] = {
        var texts = [
            #"{"a":1}"#, #"{"a":"x"}"#, #"{"a":true}"#, #"{"a":false}"#, #"{"a":null}"#, #"{"a":1.5}"#,
            #"{"a":1e2}"#, #"{"a":-0}"#, #"{"a":12345678901234567890}"#, #"{"a":-9223372036854775808}"#,
            #"{"a":[1,2]}"#, #"{"a":{"b":2}}"#, " { \"a\" : { \"b\" : \"y\" , \"c\" : [ 1 , {} ] } } ",
            #"{"a":1,"a":2}"#, #"{"a\"":1}"#, #"{"a":"\u00e9\n\"q\""}"#, #"{"a":"\ud83d\ude00"}"#, "not json",
            #"{"a":1"#, "[1,2]", "5", #""a""#, "", #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#, #"{"a":+1}"#,
            #"{"a.b":3}"#, #"{"$":4}"#, #"{"[0]":5}"#, #"{"a":{"b":{"c":[]}}}"#, #"{"a":"tab"#, "{\"a\":\"raw\ttab\"}",
            #"{"a":"Oslo"}"#, #"{"a":"oslo"}"#, #"{"a":"Ålesund"}"#, #"{"a":{"b":null}}"#, #"{"a":[]}"#,
            #"{"b":1,"a":{"b":-1.25}}"#, #"{"a":1E-2}"#, #"{"a":"1"}"#, #"{"a\/":1}"#, "{}", "null", "{\"a\":1}x",
        ]
        texts.append(String(repeating: "{\"a\":", count: 1_999) + "1" + String(repeating: "}", count: 1_999))
        texts.append(String(repeating: "[", count: 2_100) + String(repeating: "]", count: 2_100))
        return texts.map(StorageValue.text) + [.integer(5), .real(1.5), .null, .blob(Data(#"{"a":1}"#.utf8))]
    }()

    private static let paths: [[String]] = [
        ["a"], ["a", "b"], ["a", "b", "c"], ["a.b"], ["$"], ["[0]"], ["b"], ["a\""],
    ]

    /// Whether SQLite's path syntax can carry `path` (the store refuses the others).
    static func sortable(_ path: [String]) -> Bool { !path.contains { $0.contains("\"") } }

    private static func predicates(_ column: String, _ path: [String]) -> [StoragePredicate] {
        let terms: [StoragePredicate] = [
            .isNull(column), .compare(column, .equal, 1), .compare(column, .greater, 0),
            .compare(column, .less, "m"), .compare(column, .equal, "x"), .compare(column, .notEqual, 1.5),
            .compare(column, .greaterOrEqual, 100.0), .compare(column, .lessOrEqual, .integer(-1)),
            .like(column, "%"), .like(column, "o%"), .like(column, "[%"), .in(column, [1, "x", 2, .null]),
            .in(column, [1, "x", 1.5]), .compare(column, .equal, #"[1,2]"#), .compare(column, .equal, #"{"b":2}"#),
        ]
        return terms.flatMap { [StoragePredicate.nested(path: path, $0), .not(.nested(path: path, $0))] }
    }

    private static func withDocuments(_ body: (SQLiteStorageBackend, [[String: StorageValue]]) throws -> Void) throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(Self.schema)
                for (index, document) in Self.documents.enumerated() {
                    let text: StorageValue = if case .text = document { document } else { .null }
                    try tx.put([[.integer(Int64(index)), text, document]], into: "docs", columns: ["id", "j", "u"])
                }
            }
            let stored = try backend.read { tx in
                try tx.rows(ScanRequest(collection: "docs", columns: ["id", "j", "u"], ordering: [.ascending("id")]))
            }
            try body(backend, stored.map { Dictionary(uniqueKeysWithValues: zip(["id", "j", "u"], $0)) })
        }
    }

    @Test func filtersAgreeWithTheSwiftReading() throws {
        try Self.withDocuments { backend, records in
            for column in ["j", "u"] {
                for path in Self.paths {
                    for predicate in Self.predicates(column, path) {
                        let expected = records.filter { record in
                            PredicateEvaluator.matches(predicate, { record[$0] ?? .null })
                        }
                        .map { $0["id"]! }
                        let actual = try backend.read { try $0.column("id", of: "docs", where: predicate) }
                        #expect(actual == expected, "\(predicate)")
                        let count = try backend.read { try $0.count(in: "docs", where: predicate) }
                        #expect(count == expected.count, "count of \(predicate)")
                    }
                }
            }
        }
    }

    @Test func orderingAgreesWithTheSwiftReading() throws {
        try Self.withDocuments { backend, records in
            var quoted = Ordering(column: "j")
            quoted.path = ["a\""]
            let refused = ScanRequest(collection: "docs", columns: ["id"], ordering: [quoted])
            #expect(throws: StorageError.self) { try backend.read { try $0.rows(refused) } }
            for column in ["j", "u"] {
                for path in Self.paths where SQLiteNestedFieldTests.sortable(path) {
                    for descending in [false, true] {
                        var ordering = Ordering(column: column, descending: descending)
                        ordering.path = path
                        let full = [ordering, .ascending("id")]
                        let expected = records.sorted { lhs, rhs in
                            PredicateEvaluator.precedes(full, { lhs[$0] ?? .null }, { rhs[$0] ?? .null })
                        }
                        .map { $0["id"]! }
                        let actual = try backend.read { tx in
                            try tx.rows(ScanRequest(collection: "docs", columns: ["id"], ordering: full)).map { $0[0] }
                        }
                        #expect(actual == expected, "\(full)")
                        // Paged, with a condition on another field, through the cached statement too.
                        for _ in 0..<2 {
                            let page = try backend.read { tx in
                                try tx.rows(
                                    ScanRequest(
                                        collection: "docs",
                                        columns: ["id"],
                                        predicate: .not(.nested(path: ["b"], .isNull(column))),
                                        ordering: full,
                                        limit: 3,
                                        offset: 1
                                    )
                                )
                                .map { $0[0] }
                            }
                            let oracle = records.filter { record in
                                !NestedFieldOracle.isNull(record[column] ?? .null, ["b"])
                            }
                            .sorted { lhs, rhs in
                                PredicateEvaluator.precedes(full, { lhs[$0] ?? .null }, { rhs[$0] ?? .null })
                            }
                            .map { $0["id"]! }
                            #expect(page == Array(oracle.dropFirst(1).prefix(3)), "page of \(full)")
                        }
                    }
                }
            }
        }
    }

    /// A few documents whose field values are known, read by hand, so the comparison above does
    /// not only prove that both readings agree with each other.
    @Test func knownValues() throws {
        try Self.withDocuments { backend, _ throws in
            func ids(_ path: [String], _ term: StoragePredicate) throws -> [StorageValue] {
                try backend.read { try $0.column("id", of: "docs", where: .nested(path: path, term)) }
            }
            let index = { (text: String) in StorageValue.integer(Int64(Self.documents.firstIndex(of: .text(text))!)) }
            // Of two members with one key, the first is read.
            #expect(try !ids(["a"], .compare("j", .equal, 2)).contains(index(#"{"a":1,"a":2}"#)))
            #expect(try ids(["a"], .compare("j", .equal, 1)).contains(index(#"{"a":1,"a":2}"#)))
            #expect(try ids(["a"], .compare("j", .equal, 100)).contains(index(#"{"a":1e2}"#)))
            #expect(try ids(["a"], .compare("j", .equal, "é\n\"q\"")) == [index(#"{"a":"\u00e9\n\"q\""}"#)])
            #expect(try ids(["a"], .compare("j", .equal, "😀")) == [index(#"{"a":"\ud83d\ude00"}"#)])
            #expect(try ids(["a", "b"], .compare("j", .equal, "y")).count == 1)
            #expect(try ids(["a.b"], .compare("j", .equal, 3)) == [index(#"{"a.b":3}"#)])
            #expect(try ids(["a"], .compare("j", .equal, "raw\ttab")) == [])
        }
    }
}

/// The oracle for the paged check: whether the field at `path` reads as null.
enum NestedFieldOracle {
    static func isNull(_ value: StorageValue, _ path: [String]) -> Bool {
        PredicateEvaluator.evaluate(.nested(path: path, .isNull("c")), { _ in value }) ?? true
    }
}
