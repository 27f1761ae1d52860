import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// What we write is ordinary SQLite: the `sqlite3` shell reads it with the right types.
@Suite(.dedicatedThreads) struct SQLiteShellTests {
    struct Place: Codable, Equatable {
        var city: String
        var zip: Int
    }

    struct Visitor: Codable, Equatable, StorableModel {
        static let collectionName = "visitors"
        var id: Int64
        var name: String
        var age: Int
        var height: Double
        var member: Bool
        var photo: Data
        var seen: Date
        var place: Place
        var tags: [String]
        var nickname: String?
    }

    @Test func theShellSeesRealColumnTypesAndJSON() throws {
        try TemporaryDirectory.with("sqlite-shell") { directory in
            let path = directory.appendingPathComponent("shell.sqlite").path
            let store = try ObjectStore(backend: .sqlite(path: path))
            let visitor = Visitor(
                id: 7,
                name: "Ann",
                age: 41,
                height: 1.72,
                member: true,
                photo: Data([1, 2, 3]),
                seen: Date(timeIntervalSince1970: 1_000),
                place: Place(city: "Oslo", zip: 150),
                tags: ["a", "b"],
                nickname: nil
            )
            try store.save(visitor)
            let types = try sqliteShell(
                path,
                "SELECT typeof(id), typeof(name), typeof(age), typeof(height), typeof(member), typeof(photo),"
                    + " typeof(seen), typeof(place), typeof(nickname) FROM visitors"
            )
            #expect(types == "integer|text|integer|real|integer|blob|real|text|null")
            let nested = try sqliteShell(
                path,
                "SELECT json_extract(place, '$.city'), json_extract(tags, '$[1]') FROM visitors"
            )
            #expect(nested == "Oslo|b")
            let declared = try sqliteShell(path, "SELECT group_concat(type, ',') FROM pragma_table_info('visitors')")
            #expect(declared == "INTEGER,TEXT,INTEGER,REAL,INTEGER,BLOB,REAL,TEXT,TEXT,TEXT")
            #expect(try store.fetch(Visitor.self, id: 7) == visitor)
        }
    }

    @Test func jsonFromAServerIsQueryableInTheShell() throws {
        try TemporaryDirectory.with("sqlite-shell") { directory in
            let path = directory.appendingPathComponent("json.sqlite").path
            let store = try ObjectStore(backend: .sqlite(path: path))
            let json = #"[{"id": 1, "score": 3, "profile": {"lang": "sv"}}, {"id": 2, "score": 4.5, "profile": null}]"#
            try store.insert(jsonArray: Data(json.utf8), into: "users")
            #expect(try sqliteShell(path, "SELECT typeof(score) FROM users ORDER BY id") == "real\nreal")
            #expect(try sqliteShell(path, "SELECT json_extract(profile, '$.lang') FROM users WHERE id = 1") == "sv")
        }
    }
}
