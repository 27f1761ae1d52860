import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// The server's `psql`, from the PostgreSQL installation the tests' server runs from.
private var psql: String {
    let installed = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
    let versions = installed.compactMap(Int.init).sorted()
    return versions.last.map { "/usr/lib/postgresql/\($0)/bin/psql" } ?? "/usr/bin/psql"
}

/// How many schemas named `schema` (exactly) the tests' server has, asked with `psql`.
private func schemaCount(_ schema: String, in directory: URL) throws -> String {
    let literal = "'" + schema.replacingOccurrences(of: "'", with: "''") + "'"
    let result = try StorageProcess.spawn(
        psql,
        [try PostgreSQLTestServer.url(), "-tAc", "SELECT count(*) FROM pg_namespace WHERE nspname = " + literal],
        in: directory,
        input: nil
    )
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

@Suite("The storage command's reads open the store read-only", .dedicatedThreads)
struct ReadOnlyCommandTests {
    /// `storage info` (and `schema`, `export`, `verify`) on a misspelt schema fails with a message
    /// naming it, and leaves no schema behind; on the real one, `info` prints the schema it read
    /// and the other commands name it on standard error.
    @Test func aMisspeltSchemaIsAnErrorAndTheRealOneIsNamed() throws {
        try TemporaryDirectory.with("storage-cli-read-only") { directory in
            let store = try storeURL(.postgresql, in: directory)
            let schema = PostgreSQLTestServer.schema(for: directory.path)
            try peopleJSON.write(to: directory.appendingPathComponent("people.json"), atomically: true, encoding: .utf8)
            let imported = try StorageProcess.run(["import", store, "People", "people.json"], in: directory)
            #expect(imported.status == 0, "\(imported.stderr)")

            let misspelt = "Bad-Name-" + schema.dropFirst(5).prefix(8)
            let bad = store.replacingOccurrences(of: "schema=" + schema, with: "schema=" + misspelt)
            for arguments in [
                ["info", bad], ["info", bad, "--json"], ["schema", bad], ["export", bad, "People"],
                ["verify", store, bad],
            ] {
                let result = try StorageProcess.run(arguments, in: directory)
                #expect(result.status == 1, "\(arguments): \(result.stdout)")
                #expect(result.stdout.isEmpty)
                let expected =
                    arguments.contains("--json")
                    ? #"{"error":{"code":"cannotOpen","message":"there is no schema '\#(misspelt)'"#
                    : "storage: there is no schema '\(misspelt)'"
                #expect(result.stderr.hasPrefix(expected), "\(arguments): \(result.stderr)")
            }
            #expect(try schemaCount(misspelt, in: directory) == "0")
            #expect(try schemaCount(schema, in: directory) == "1")

            let info = try StorageProcess.run(["info", store], in: directory)
            #expect(info.status == 0, "\(info.stderr)")
            #expect(info.stdout.contains("\nschema: \(schema)\n"), "\(info.stdout)")
            let json = try StorageProcess.run(["info", store, "--json"], in: directory)
            #expect((try json.json() as? [String: Any])?["schema"] as? String == schema)
            let schemaText = try StorageProcess.run(["schema", store], in: directory)
            #expect(schemaText.stderr.hasSuffix(", schema \(schema)\n"), "\(schemaText.stderr)")
            let exported = try StorageProcess.run(["export", store, "People"], in: directory)
            #expect(exported.stderr.hasPrefix("exported 4 records of People from postgresql://"), "\(exported.stderr)")
            #expect(exported.stderr.hasSuffix(", schema \(schema)\n"), "\(exported.stderr)")
        }
    }

    /// The read commands change nothing of a store in files: its folder is byte for byte and time
    /// for time what it was (SQLite's `-wal` and `-shm`, and LMDB's reader table, aside).
    @Test(arguments: DiskBackend.allCases)
    func theReadCommandsChangeNoFile(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("storage-cli-read-only-\(backend)") { directory in
            let store = try storeURL(backend, in: directory)
            try peopleJSON.write(to: directory.appendingPathComponent("people.json"), atomically: true, encoding: .utf8)
            let imported = try StorageProcess.run(["import", store, "People", "people.json"], in: directory)
            #expect(imported.status == 0, "\(imported.stderr)")
            let before = try FolderFingerprint(of: directory, ignoring: ["-shm", "-wal", "-lock"])
            for arguments in [
                ["info", store], ["schema", store], ["export", store, "People"], ["verify", store, store],
                ["export", store, "People", "--output", "people.out.json"],
            ] {
                let result = try StorageProcess.run(arguments, in: directory)
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
            }
            let after = try FolderFingerprint(of: directory, ignoring: ["-shm", "-wal", "-lock", "people.out.json"])
            #expect(after == before, "\(before) then \(after)")
        }
    }
}
