import Foundation
import Storage
import Testing

extension ConformanceSuite {
    static let hostileNames: [String] = [
        "", "a\"b", "a'b", "a;b", "x; DROP TABLE members; --", "a\0b", String(repeating: "n", count: 10_000),
        "sqlite_master", "SQLITE_x", "../../etc/passwd", "/abs", "a b", "_hidden", "a\nb", "tab\tname",
    ]

    static let hostileInputChecks: [ConformanceCheck] = [
        check("hostile collection and column names are refused and change nothing") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all.prefix(3))
            for name in hostileNames {
                expectError(.invalidIdentifier) { try store.insert(dictionaries: [["id": 1]], into: name) }
                expectError(.invalidIdentifier) { _ = try store.fetchDictionaries(from: name) }
                // Column names take any key but these (see `hostileColumnChecks`).
                if name.isEmpty || name.contains("\0") || name.utf8.count > 255 {
                    let error = expectError(.invalidIdentifier) {
                        try store.insert(dictionaries: [["id": 1, name: 2]], into: "ok")
                    }
                    #expect(error?.message.unicodeScalars.contains("\0") == false)
                }
            }
            expectError(.invalidIdentifier) { try store.save(HostileName(id: 1)) }
            #expect(try store.count(Member.self) == 3)
            #expect(try store.fetchDictionaries(from: "ok").isEmpty)
        },
        check("more columns than a collection may hold are refused with .limitExceeded, nothing written") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            let limit = CollectionSchema.maximumColumnCount
            func row(_ id: Int, _ columns: Range<Int>) -> [String: Any] {
                var row: [String: Any] = ["id": id]
                // Short text, so that a full row stays within every engine's row size (PostgreSQL keeps
                // a row of fixed-size values within one 8 KiB page).
                for column in columns { row["c\(column)"] = "v" }
                return row
            }
            // The key and `limit` more: one column too many, on creation.
            let refused = expectError(.limitExceeded) {
                try store.insert(dictionaries: [row(1, 0..<limit)], into: "wide")
            }
            #expect(refused?.message.contains("\(limit)") == true, "\(String(describing: refused))")
            #expect(try store.fetchDictionaries(from: "wide").isEmpty)
            #expect(try store.backend.read { try $0.schema(of: "wide") } == nil)
            // Exactly the limit is taken; one more column, added later, is not.
            try store.insert(dictionaries: [row(1, 0..<limit - 1)], into: "wide")
            expectError(.limitExceeded) { try store.insert(dictionaries: [row(2, limit..<limit + 1)], into: "wide") }
            #expect(try store.fetchDictionaries(from: "wide").map { $0["id"] } == [.integer(1)])
            #expect(try store.backend.read { try $0.schema(of: "wide") }?.columns.count == limit)
        },
        check("names that differ only in ASCII case are the same name") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.insert(dictionaries: [["id": 1, "Name": "x"]], into: "Cased")
            try store.insert(dictionaries: [["id": 2, "Name": "y"]], into: "cased")
            #expect(try store.fetchDictionaries(from: "CASED").count == 2)
            let clash = expectError(.schemaMismatch) {
                try store.insert(dictionaries: [["id": 3, "name": "z"]], into: "cased")
            }
            #expect(clash?.column == "name")
            expectError(.schemaMismatch) { try store.insert(dictionaries: [["id": 4, "a": 1, "A": 2]], into: "other") }
            #expect(try store.fetchDictionaries(from: "cased").count == 2)
            #expect(try store.fetchDictionaries(from: "other").isEmpty)
        },
        check("malformed JSON and JSON of the wrong shape are refused") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let inputs = [
                "[{\"id\": 1,", "{\"id\": 1}", "[1, 2]", "[{\"id\": 1}, \"x\"]", "\"text\"", "", "[[{\"id\": 1}]]",
                "nul", "[{\"id\": 1}] trailing",
            ]
            for input in inputs {
                expectError(.invalidJSON) { try store.insert(jsonArray: Data(input.utf8), into: "raw") }
            }
            #expect(try store.fetchDictionaries(from: "raw").isEmpty)
            expectError(.unsupportedType) { try store.insert(dictionaries: [["id": 1, "v": NSObject()]], into: "raw") }
            try store.insert(dictionaries: [["id": 1], ["id": 2]], into: "keyed")
            expectError(.invalidKey) { try store.insert(dictionaries: [["id": 3], ["v": 3]], into: "keyed") }
            #expect(try store.fetchDictionaries(from: "keyed").count == 2)
        },
        check("integers that do not fit are refused, never truncated") { fixture, directory in
            struct Big: Codable {
                var id: Int64
                var big: UInt64
            }
            let store = try fixture.openStore(in: directory)
            let error = expectError(.valueOutOfRange) { try store.save(Big(id: 1, big: UInt64.max)) }
            #expect(error?.column == "big")
            #expect(try store.count(Big.self) == 0)
        },
        check("values that are not keyed types are refused") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            expectError(.unsupportedType) { try store.save(42) }
            expectError(.unsupportedType) { try store.save("text") }
            let generic = expectError(.invalidIdentifier) { try store.save(["a", "b"]) }
            #expect(generic?.message.contains("collectionName") == true)
        },
    ]
}
