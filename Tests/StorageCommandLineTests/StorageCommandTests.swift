import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// The store argument for `backend`'s store in `directory`: a URL with the engine's scheme.
func storeURL(_ backend: DiskBackend, in directory: URL) throws -> String {
    switch backend {
    case .postgresql:
        let url = try PostgreSQLTestServer.url()
        let schema = PostgreSQLTestServer.schema(for: directory.path)
        return url + (url.contains("?") ? "&" : "?") + "schema=" + schema
    default:
        return backend.rawValue + ":" + backend.storePath(in: directory)
    }
}

let peopleJSON = """
    [
      {"id": 1, "name": "Ann", "age": 31, "email": "ann@example.org", "tags": ["a", "b"]},
      {"id": 2, "name": "Bob", "age": 25, "email": null, "score": 2.5},
      {"id": 3, "name": "Al, \\"the\\" pal", "age": 40, "email": "al@example.org", "score": 1.5},
      {"id": 4, "name": "Zoë \u{1F600}", "age": 30, "email": "z@example.org"}
    ]
    """

@Suite("The storage command, run as a process", .dedicatedThreads)
struct StorageCommandTests {
    @Test(arguments: DiskBackend.everyCase)
    func everyCommandWorksOnTheBackend(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("storage-cli") { directory in
            let store = try storeURL(backend, in: directory)
            try peopleJSON.write(to: directory.appendingPathComponent("people.json"), atomically: true, encoding: .utf8)

            let imported = try StorageProcess.run(["import", store, "People", "people.json"], in: directory)
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stdout.isEmpty)
            #expect(imported.stderr == "imported 4 records into People\n")

            // info, with the bare path for the engines in files.
            let bare = backend == .postgresql ? store : backend.storePath(in: directory)
            let info = try StorageProcess.run(["info", bare, "--json"], in: directory)
            #expect(info.status == 0, "\(info.stderr)")
            let infoObject = try #require(try info.json() as? [String: Any])
            #expect(infoObject["engine"] as? String == backend.rawValue)
            let collections = try #require(infoObject["collections"] as? [[String: Any]])
            #expect(collections.count == 1)
            #expect(collections.first?["name"] as? String == "People")
            #expect(collections.first?["records"] as? Int == 4)
            if backend != .postgresql { #expect((infoObject["size"] as? Int ?? 0) > 0) }
            let infoText = try StorageProcess.run(["info", store], in: directory)
            #expect(infoText.stdout.contains("engine: \(backend.rawValue)"))
            #expect(infoText.stdout.contains("People  4 records"))

            // schema
            let schema = try StorageProcess.run(["schema", store, "people", "--json"], in: directory)
            #expect(schema.status == 0, "\(schema.stderr)")
            let schemas = try #require(try schema.json() as? [[String: Any]])
            #expect(schemas.first?["primaryKey"] as? String == "id")
            let columns = try #require(schemas.first?["columns"] as? [[String: String]])
            #expect(columns.first { $0["name"] == "age" }?["type"] == "integer")
            #expect(columns.first { $0["name"] == "score" }?["type"] == "real")
            let schemaText = try StorageProcess.run(["schema", store], in: directory)
            #expect(schemaText.stdout.contains("People  (key: id)"))

            // export, in each format, filtered.
            let filter = "age >= 30 && name like 'A%' && email != nil"
            let json = try StorageProcess.run(["export", store, "People", "--where", filter], in: directory)
            #expect(json.status == 0, "\(json.stderr)")
            let records = try #require(try json.json() as? [[String: Any]])
            #expect(records.map { $0["id"] as? Int } == [1, 3])
            #expect(records.first?["tags"] as? String == "[\"a\",\"b\"]")
            let ndjson = try StorageProcess.run(
                ["export", store, "People", "--format", "ndjson", "--where", "id in (2, 4)", "--limit", "1"],
                in: directory
            )
            let lines = ndjson.stdout.split(separator: "\n")
            #expect(lines.count == 1)
            let line = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
            #expect(line["name"] as? String == "Bob")
            #expect(line["score"] as? Double == 2.5)
            let csv = try StorageProcess.run(
                ["export", store, "People", "--format", "csv", "--output", "out.csv"],
                in: directory
            )
            #expect(csv.status == 0)
            #expect(csv.stdout.isEmpty)
            let csvText = try String(contentsOf: directory.appendingPathComponent("out.csv"), encoding: .utf8)
            let header = csvText.components(separatedBy: "\r\n")[0]
            #expect(Set(header.split(separator: ",")) == ["age", "email", "id", "name", "score", "tags"])
            #expect(csvText.contains("\"Al, \"\"the\"\" pal\""))
            #expect(csvText.components(separatedBy: "\r\n").count == 6)

            // The CSV and an NDJSON export import back; verify says the copies are the same.
            let reimported = try StorageProcess.run(
                ["import", "sqlite:again.sqlite", "People", "out.csv"],
                in: directory
            )
            #expect(reimported.status == 0, "\(reimported.stderr)")
            let again = try StorageProcess.run(
                ["export", "again.sqlite", "People", "--where", "id == 3"],
                in: directory
            )
            #expect((try again.json() as? [[String: Any]])?.first?["name"] as? String == "Al, \"the\" pal")

            // copy to every engine in files, and verify both ways.
            for target in DiskBackend.allCases {
                let copyDirectory = directory.appendingPathComponent("copy-\(target.rawValue)")
                try FileManager.default.createDirectory(at: copyDirectory, withIntermediateDirectories: true)
                let destination = try storeURL(target, in: copyDirectory)
                let copied = try StorageProcess.run(["copy", store, destination, "--json"], in: directory)
                #expect(copied.status == 0, "\(copied.stderr)")
                let report = try #require(try copied.json() as? [String: Any])
                #expect(report["records"] as? Int == 4)
                #expect(copied.stderr.hasPrefix("copied 4 records in 1 collection from"))
                #expect(copied.stderr.contains(", verified"))
                let verified = try StorageProcess.run(["verify", destination, store, "--json"], in: directory)
                #expect(verified.status == 0, "\(verified.stderr)")
                #expect((try verified.json() as? [String: Any])?["same"] as? Bool == true)
                // A second copy is refused; --merge goes through.
                let refused = try StorageProcess.run(["copy", store, destination], in: directory)
                #expect(refused.status == 1)
                #expect(refused.stderr.contains("already holds 4 records; give --merge to upsert, or --replace"))
                let merged = try StorageProcess.run(["copy", store, destination, "--merge"], in: directory)
                #expect(merged.status == 0, "\(merged.stderr)")
            }

            // A difference: verify names the collection and the key, exit 1.
            try "[{\"id\": 2, \"name\": \"Robert\", \"age\": 25}]".write(
                to: directory.appendingPathComponent("change.json"),
                atomically: true,
                encoding: .utf8
            )
            let changed = try StorageProcess.run(["import", "again.sqlite", "People", "change.json"], in: directory)
            #expect(changed.status == 0, "\(changed.stderr)")
            let differs = try StorageProcess.run(["verify", store, "again.sqlite", "--json"], in: directory)
            #expect(differs.status == 1)
            let difference = try #require(try differs.json() as? [String: Any])
            #expect(difference["same"] as? Bool == false)
            #expect(difference["collection"] as? String == "People")
            #expect(difference["key"] as? String == "2")
            #expect(differs.stderr.contains("differ"))
        }
    }

    @Test func malformedWhereExpressionsAreUsageErrorsPointingAtTheCharacterAndWriteNothing() throws {
        try TemporaryDirectory.with("storage-cli-where") { directory in
            try peopleJSON.write(to: directory.appendingPathComponent("people.json"), atomically: true, encoding: .utf8)
            #expect(
                try StorageProcess.run(["import", "app.sqlite", "People", "people.json"], in: directory).status == 0
            )
            let cases: [(String, String)] = [
                ("age >= && x", "expected a value, found '&' at character 8\n  age >= && x\n         ^"),
                ("name == 'x", "has no closing ' at character 9"),
                ("(age > 1", "expected ')' at character 9"),
                ("age ! 3", "expected a comparison"),
            ]
            for (expression, expected) in cases {
                let result = try StorageProcess.run(
                    ["export", "app.sqlite", "People", "--where", expression, "--output", "out.json"],
                    in: directory
                )
                #expect(result.status == 2, "\(expression)")
                #expect(result.stderr.contains(expected), "\(result.stderr)")
                #expect(result.stdout.isEmpty)
                #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out.json").path))
            }
            let unknownColumn = try StorageProcess.run(
                ["export", "app.sqlite", "People", "--where", "nope == 1"],
                in: directory
            )
            #expect(unknownColumn.status == 1)
            #expect(unknownColumn.stderr == "storage: collection 'People' has no column 'nope'\n")
        }
    }

    @Test func badStoresAndInputsAreClearErrorsAndNothingIsWritten() throws {
        try TemporaryDirectory.with("storage-cli-bad") { directory in
            let manager = FileManager.default
            func listing() throws -> [String] { try manager.contentsOfDirectory(atPath: directory.path).sorted() }
            try "not a store at all, just text".write(
                to: directory.appendingPathComponent("notes.txt"),
                atomically: true,
                encoding: .utf8
            )
            try manager.createDirectory(
                at: directory.appendingPathComponent("folder"),
                withIntermediateDirectories: true
            )
            try "[{\"id\": 1,".write(
                to: directory.appendingPathComponent("broken.json"),
                atomically: true,
                encoding: .utf8
            )
            try #"[{"id": 1, "a": 1, "a": 2}]"#.write(
                to: directory.appendingPathComponent("repeated.json"),
                atomically: true,
                encoding: .utf8
            )
            try "{\"id\": 1}\n{\"id\": 2, \"b\": {\"caf\u{E9}\": 1, \"cafe\u{301}\": 2}}\n".write(
                to: directory.appendingPathComponent("repeated.ndjson"),
                atomically: true,
                encoding: .utf8
            )
            try "a,b\n1,\"x\n".write(
                to: directory.appendingPathComponent("broken.csv"),
                atomically: true,
                encoding: .utf8
            )
            try "id,name\n1,a\n,b\n".write(
                to: directory.appendingPathComponent("gap.csv"),
                atomically: true,
                encoding: .utf8
            )
            let before = try listing()

            let cases: [([String], Int32, String)] = [
                (["info", "missing.sqlite"], 1, "no store at 'missing.sqlite'"),
                (["info", "sqlite:missing.sqlite"], 1, "no store at 'missing.sqlite'"),
                (["info", "folder"], 1, "'folder' is a folder but not an archive store"),
                (["info", "notes.txt"], 1, "'notes.txt' is not a store"),
                (["info", "lmdb:notes.txt"], 1, "'notes.txt' is not a store"),
                (["schema", "ftp://host/x"], 2, "unknown store URL"),
                (["verify", "notes.txt", "missing.lmdb"], 1, "is not a store"),
                (["copy", "missing.sqlite", "out.lmdb"], 1, "no store at 'missing.sqlite'"),
                (["import", "new.sqlite", "People", "missing.json"], 1, "cannot read 'missing.json'"),
                (["import", "new.sqlite", "People", "broken.json"], 1, "is not valid JSON"),
                (
                    ["import", "new.sqlite", "People", "repeated.json"], 1,
                    "element 0 (line 1, byte 1): an object holds key 'a' twice"
                ),
                (
                    ["import", "new.lmdb", "People", "repeated.ndjson"], 1,
                    "line 2 (byte 10): an object holds key 'café' (caf\\u{00E9}) twice, the second time as 'café' (cafe\\u{0301})"
                ),
                (["import", "new.sqlite", "People", "broken.csv"], 1, "a quoted field is not closed"),
                (["import", "new.sqlite", "People", "missing.csv"], 1, "missing.csv"),
                (
                    ["import", "new.lmdb", "People", "gap.csv", "--primary-key", "id"], 1,
                    "line 3: the record has no value"
                ),
                (["import", "newstore", "People", "broken.json"], 1, "is not valid JSON"),
                (["import", "notes.txt", "People", "broken.json"], 1, "is not valid JSON"),
                (["export", "missing.sqlite", "People"], 1, "no store"),
                (["export", "new.sqlite"], 2, "missing COLLECTION"),
                (["export", "new.sqlite", "P", "--format", "xml"], 2, "unknown format 'xml'"),
                (["copy", "a.sqlite", "b.lmdb", "--merge", "--replace"], 2, "cannot be given together"),
                (["info", "x.sqlite", "--bogus"], 2, "unknown option '--bogus'"),
                (["frobnicate"], 2, "unknown command 'frobnicate'"),
                ([], 2, "usage: storage COMMAND"),
            ]
            for (arguments, status, message) in cases {
                let result = try StorageProcess.run(arguments, in: directory)
                #expect(result.status == status, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
                #expect(!result.stderr.contains("Fatal error"))
                #expect(try listing() == before, "\(arguments) wrote something")
            }
            #expect(
                try String(contentsOf: directory.appendingPathComponent("notes.txt"), encoding: .utf8)
                    == "not a store at all, just text"
            )
        }
    }

    @Test func helpIsOnEveryCommand() throws {
        try TemporaryDirectory.with("storage-cli-help") { directory in
            let overview = try StorageProcess.run(["--help"], in: directory)
            #expect(overview.status == 0)
            #expect(overview.stdout.contains("commands:"))
            for command in ["info", "schema", "export", "import", "copy", "verify"] {
                let result = try StorageProcess.run([command, "--help"], in: directory)
                #expect(result.status == 0)
                #expect(result.stdout.hasPrefix("usage: storage \(command)"))
            }
        }
    }

    @Test func ndjsonAndCSVImportWithAPrimaryKeyAndAutoKeys() throws {
        try TemporaryDirectory.with("storage-cli-import") { directory in
            let ndjson = "{\"id\": \"a\", \"n\": 1}\n\n{\"id\": \"b\", \"n\": 2.5}\n"
            try ndjson.write(to: directory.appendingPathComponent("rows.ndjson"), atomically: true, encoding: .utf8)
            let csv = "name,count,note\r\nx,1,\"quoted, with comma\"\ny,,plain\n"
            try csv.write(to: directory.appendingPathComponent("rows.csv"), atomically: true, encoding: .utf8)

            let keyed = try StorageProcess.run(
                ["import", "lmdb:rows.lmdb", "Rows", "rows.ndjson", "--primary-key", "id", "--json"],
                in: directory
            )
            #expect(keyed.status == 0, "\(keyed.stderr)")
            #expect((try keyed.json() as? [String: Any])?["records"] as? Int == 2)
            let schema = try StorageProcess.run(["schema", "rows.lmdb", "Rows", "--json"], in: directory)
            let rows = try #require((try schema.json() as? [[String: Any]])?.first)
            #expect(rows["primaryKey"] as? String == "id")
            #expect((rows["columns"] as? [[String: String]])?.first { $0["name"] == "n" }?["type"] == "real")

            let missingKey = try StorageProcess.run(
                ["import", "lmdb:rows.lmdb", "Rows", "rows.csv", "--primary-key", "id"],
                in: directory
            )
            #expect(missingKey.status == 1)
            #expect(missingKey.stderr.contains("the primary key 'id' is not a column of the input"))

            let named = try StorageProcess.run(
                ["import", "sqlite:named.sqlite", "Things", "rows.csv", "--primary-key", "name"],
                in: directory
            )
            #expect(named.status == 0, "\(named.stderr)")
            let namedSchema = try StorageProcess.run(["schema", "named.sqlite", "Things", "--json"], in: directory)
            #expect((try namedSchema.json() as? [[String: Any]])?.first?["primaryKey"] as? String == "name")

            let auto = try StorageProcess.run(["import", "archive:Notes.archive", "Notes", "rows.csv"], in: directory)
            #expect(auto.status == 0, "\(auto.stderr)")
            let exported = try StorageProcess.run(
                ["export", "Notes.archive", "Notes", "--format", "ndjson"],
                in: directory
            )
            let objects = exported.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            #expect(objects.map { $0["_key"] as? Int } == [1, 2])
            #expect(objects.first?["note"] as? String == "quoted, with comma")
            #expect(objects.first?["count"] as? Int == 1)
            #expect(objects.last?["count"] is NSNull)
        }
    }
}
