import Foundation
import Storage
import Testing

/// `insert(jsonArray:)` from a file and `insert(jsonLines:)` on every backend: streamed, read
/// twice, with the same records, columns and keys as the same JSON in memory, and errors that
/// name where the input is wrong and store nothing.
struct JSONFileChecks {
    /// Rows whose types only the whole input decides: a column integer in the first rows and real
    /// or text in later ones, a key missing from early rows, nulls, nested values, non-ASCII.
    static let rows: [String] = [
        #"{"id": 1, "n": 1, "t": 7, "name": "Ann"}"#,
        #"{"id": 2, "n": 2, "t": 8, "tags": ["a", {"b": null}], "name": "Zoë 😀"}"#,
        #"{"id": 3, "n": 2.5, "t": "seven", "name": null}"#,
        #"{"id": 4, "late": true, "nested": {"x": [1, 2]}}"#,
        #"{"id": 5, "n": -0.0, "t": 9223372036854775807, "name": "line\nbreak \"quoted\""}"#,
    ]

    func filesImportAsTheSameTextInMemoryDoes(_ fixture: BackendFixture) throws {
        try TemporaryDirectory.with { directory in
            let store = try fixture.openStore(in: directory)
            let array = "[\n" + Self.rows.joined(separator: ",\n") + "\n]\n"
            let lines = Self.rows.joined(separator: "\n") + "\n"
            let arrayFile = directory.appendingPathComponent("rows.json")
            let linesFile = directory.appendingPathComponent("rows.ndjson")
            try Data(array.utf8).write(to: arrayFile)
            try Data(lines.utf8).write(to: linesFile)
            #expect(try store.insert(jsonArray: Data(array.utf8), into: "memory") == Self.rows.count)
            #expect(try store.insert(jsonArray: arrayFile, into: "array_file") == Self.rows.count)
            #expect(try store.insert(jsonLines: linesFile, into: "lines_file") == Self.rows.count)
            #expect(try store.insert(jsonLines: Data(lines.utf8), into: "lines_memory") == Self.rows.count)
            let expected = try #require(try store.schema(of: "memory"))
            let records = try store.fetchDictionaries(from: "memory", orderBy: [.ascending("id")])
            #expect(expected.column(named: "n")?.type == .real)
            #expect(expected.column(named: "t")?.type == .text)
            for name in ["array_file", "lines_file", "lines_memory"] {
                let schema = try #require(try store.schema(of: name))
                #expect(schema.columns == expected.columns, "\(name)")
                #expect(schema.primaryKey == "id")
                #expect(try store.fetchDictionaries(from: name, orderBy: [.ascending("id")]) == records, "\(name)")
            }
            // Rows without an `id` in some of them: an auto key, as in memory.
            try Data("{\"id\": 1}\n{\"v\": 2}\n".utf8).write(to: linesFile)
            #expect(try store.insert(jsonLines: linesFile, into: "auto") == 2)
            #expect(try store.schema(of: "auto")?.hasAutoKey == true)
            // A natural key: the same file again replaces its records.
            try Data(#"[{"code": "A", "v": 1}, {"code": "B", "v": 2}]"#.utf8).write(to: arrayFile)
            #expect(try store.insert(jsonArray: arrayFile, into: "coded", primaryKey: "code") == 2)
            #expect(try store.insert(jsonArray: arrayFile, into: "coded", primaryKey: "code") == 2)
            #expect(try store.count(in: "coded") == 2)
            // An empty array stores nothing and creates nothing.
            try Data("[ ]".utf8).write(to: arrayFile)
            #expect(try store.insert(jsonArray: arrayFile, into: "nothing") == 0)
            #expect(try store.schema(of: "nothing") == nil)
        }
    }

    func malformedFilesNameTheLineAndByteAndStoreNothing(_ fixture: BackendFixture) throws {
        try TemporaryDirectory.with { directory in
            let store = try fixture.openStore(in: directory)
            try store.insert(jsonArray: Data(#"[{"id": 1, "n": 5, "r": 1.5}]"#.utf8), into: "kept")
            let cases: [(String, String, StorageError.Code, String)] = [
                ("json", "[{\"id\": 2},\n{\"id\": 3", .invalidJSON, "is not closed at byte 20 (line 2)"),
                ("json", "[{\"id\": 2}] trailing", .invalidJSON, "text after the array at byte 12"),
                (
                    "json", "[{\"id\": 2},\n 7]", .invalidJSON,
                    "element 1 (line 2, byte 13): expected a JSON object, found a number"
                ),
                (
                    "json", "[{\"id\": 2},\n{\"id\": 3, \"a\": 1, \"a\": 2}]", .invalidJSON,
                    "element 1 (line 2, byte 12): an object holds key 'a' twice"
                ),
                ("json", "[{\"id\": 2},\n{\"id\": tru}]", .invalidJSON, "element 1 (line 2, byte 12): not valid JSON"),
                ("ndjson", "{\"id\": 2}\n\n{\"id\" 3}\n", .invalidJSON, "line 3 (byte 11): not valid JSON"),
                (
                    "ndjson", "{\"id\": 2, \"r\": 1}\n{\"id\": 3, \"r\": 9007199254740993}\n", .valueOutOfRange,
                    "line 2, byte 18: row 1: column 'r' is real"
                ),
                (
                    "ndjson", "{\"id\": 2, \"v\": 1}\n{\"id\": 2, \"v\": 2}\n", .constraintViolation,
                    "line 2, byte 18: rows 0 and 1"
                ),
            ]
            for (format, text, code, message) in cases {
                let file = directory.appendingPathComponent("bad." + format)
                try Data(text.utf8).write(to: file)
                do {
                    if format == "json" {
                        try store.insert(jsonArray: file, into: "kept")
                    } else {
                        try store.insert(
                            jsonLines: file,
                            into: "kept",
                            primaryKey: code == .constraintViolation ? "id" : nil
                        )
                    }
                    Issue.record("\(text) was stored")
                } catch let error as StorageError {
                    #expect(error.code == code, "\(text): \(error)")
                    #expect(error.message.contains(message), "\(text): \(error.message)")
                    #expect(error.collection == "kept")
                }
                #expect(
                    try store.fetchDictionaries(from: "kept") == [
                        ["id": .integer(1), "n": .integer(5), "r": .real(1.5)]
                    ],
                    "\(text)"
                )
            }
            let missing = directory.appendingPathComponent("missing.ndjson")
            #expect(throws: StorageError.self) { try store.insert(jsonLines: missing, into: "kept") }
        }
    }

    func progressReportsBothPasses(_ fixture: BackendFixture) throws {
        try TemporaryDirectory.with { directory in
            let store = try fixture.openStore(in: directory)
            let count = 9_000
            let file = directory.appendingPathComponent("many.ndjson")
            try Data((1...count).map { "{\"id\": \($0)}\n" }.joined().utf8).write(to: file)
            var steps: [StoreCopyProgress] = []
            #expect(try store.insert(jsonLines: file, into: "many", progress: { steps.append($0) }) == count)
            let reading = steps.filter { $0.phase == .reading }
            let importing = steps.filter { $0.phase == .importing }
            #expect(reading.last?.records == count && reading.count >= 2, "\(steps)")
            #expect(!importing.isEmpty && importing.allSatisfy { $0.total == count }, "\(steps)")
            #expect(steps.firstIndex { $0.phase == .importing }! > steps.lastIndex { $0.phase == .reading }!)
        }
    }

    func asyncFilesImport(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("json-files-async")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        let file = directory.url.appendingPathComponent("rows.json")
        try Data(("[" + Self.rows.joined(separator: ",") + "]").utf8).write(to: file)
        #expect(try await store.insert(jsonArray: file, into: "rows") == Self.rows.count)
        #expect(try await store.insert(jsonLines: Data(Self.rows.joined(separator: "\n").utf8), into: "lines") == 5)
        #expect(try await store.count(in: "rows") == 5)
        #expect(try await store.count(in: "lines") == 5)
    }
}

extension ConformanceSuite {
    static let jsonFileChecks: [ConformanceCheck] = [
        check("json files import as the same text in memory does") { fixture, _ in
            try JSONFileChecks().filesImportAsTheSameTextInMemoryDoes(fixture)
        },
        check("malformed json files name the line and byte and store nothing") { fixture, _ in
            try JSONFileChecks().malformedFilesNameTheLineAndByteAndStoreNothing(fixture)
        },
        check("json file progress reports both passes") { fixture, _ in
            try JSONFileChecks().progressReportsBothPasses(fixture)
        },
    ]

    static let jsonFileAsyncChecks: [ConformanceCheck] = [
        asyncCheck("json files import through the async api") { fixture, _ in
            try await JSONFileChecks().asyncFilesImport(fixture)
        }
    ]
}
