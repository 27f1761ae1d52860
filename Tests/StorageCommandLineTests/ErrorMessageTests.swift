import Foundation
import StorageTestSupport
import Testing

/// The command's failures as a person and a script see them (issue 37): one line naming what
/// and where, a JSON object on standard error with `--json`, the right plurals, and `verify`
/// comparing the source's collections.
@Suite("The storage command's messages", .dedicatedThreads)
struct ErrorMessageTests {
    /// The error object `--json` wrote on standard error.
    func errorObject(_ result: ProcessResult) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(result.stderr.utf8)) as? [String: Any]
        return try #require(object?["error"] as? [String: Any], "\(result.stderr)")
    }

    @Test func aMissingFileIsOneLineNamingItAndWhy() throws {
        try TemporaryDirectory.with("storage-cli-missing") { directory in
            for name in ["missing.csv", "missing.json", "missing.ndjson"] {
                let result = try StorageProcess.run(["import", "new.sqlite", "People", name], in: directory)
                #expect(result.status == 1)
                #expect(result.stderr == "storage: cannot read '\(name)': no such file\n", "\(result.stderr)")
                #expect(result.stdout.isEmpty)
            }
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("folder.csv"),
                withIntermediateDirectories: false
            )
            let folder = try StorageProcess.run(["import", "new.sqlite", "People", "folder.csv"], in: directory)
            #expect(folder.stderr == "storage: cannot read 'folder.csv': it is a folder\n", "\(folder.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["folder.csv"])
        }
    }

    @Test func withJSONAFailureIsAnObjectOnStandardErrorWithTheSameStatus() throws {
        try TemporaryDirectory.with("storage-cli-json-error") { directory in
            let missing = try StorageProcess.run(
                ["import", "new.sqlite", "People", "gone.csv", "--json"],
                in: directory
            )
            #expect(missing.status == 1)
            #expect(missing.stdout.isEmpty)
            let io = try errorObject(missing)
            #expect(io["code"] as? String == "io")
            #expect(io["message"] as? String == "cannot read 'gone.csv': no such file")

            let noStore = try StorageProcess.run(["info", "nowhere.sqlite", "--json"], in: directory)
            #expect(noStore.status == 1)
            let cannotOpen = try errorObject(noStore)
            #expect(cannotOpen["code"] as? String == "cannotOpen")
            #expect((cannotOpen["message"] as? String)?.hasPrefix("no store at 'nowhere.sqlite'") == true)
            #expect(cannotOpen["path"] as? String == "nowhere.sqlite")

            let usage = try StorageProcess.run(["info", "x.sqlite", "--bogus", "--json"], in: directory)
            #expect(usage.status == 2)
            let usageObject = try errorObject(usage)
            #expect(usageObject["code"] as? String == "usage")
            #expect((usageObject["message"] as? String)?.contains("unknown option '--bogus'") == true)

            // Without --json the same failure is one line of text.
            let text = try StorageProcess.run(["info", "nowhere.sqlite"], in: directory)
            #expect(text.status == 1)
            #expect(text.stderr.hasPrefix("storage: no store at 'nowhere.sqlite'"))
            #expect(text.stderr.split(separator: "\n").count == 1, "\(text.stderr)")
            #expect(!text.stderr.contains("StorageError"))
        }
    }

    /// libpq's message, two lines of its own, is shown once, in one line (it was repeated after
    /// `underlying:`). Port 1 of the loopback refuses at once: no server is needed.
    @Test func anEnginesMessageAppearsOnceInOneLine() throws {
        try TemporaryDirectory.with("storage-cli-libpq") { directory in
            let result = try StorageProcess.run(["info", "postgresql://127.0.0.1:1/app"], in: directory)
            #expect(result.status == 1)
            #expect(result.stderr.hasPrefix("storage: cannot connect to PostgreSQL at 127.0.0.1:1"), "\(result.stderr)")
            #expect(result.stderr.components(separatedBy: "Connection refused").count == 2, "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(!result.stderr.contains("postgresql:postgresql://"))
        }
    }

    @Test func countsAreSingularForOne() throws {
        try TemporaryDirectory.with("storage-cli-plurals") { directory in
            try "id,name\n1,Ann\n".write(
                to: directory.appendingPathComponent("one.csv"),
                atomically: true,
                encoding: .utf8
            )
            let imported = try StorageProcess.run(["import", "a.sqlite", "People", "one.csv"], in: directory)
            #expect(imported.stderr == "imported 1 record into People\n", "\(imported.stderr)")
            let info = try StorageProcess.run(["info", "a.sqlite"], in: directory)
            #expect(info.stdout.contains("People  1 record\n"), "\(info.stdout)")
            let copied = try StorageProcess.run(["copy", "a.sqlite", "b.lmdb"], in: directory)
            #expect(copied.stderr.hasPrefix("copied 1 record in 1 collection from sqlite:a.sqlite"), "\(copied.stderr)")
            let exported = try StorageProcess.run(
                ["export", "a.sqlite", "People", "--output", "out.json"],
                in: directory
            )
            #expect(exported.stderr == "exported 1 record of People from sqlite:a.sqlite\n", "\(exported.stderr)")
            let refused = try StorageProcess.run(["copy", "a.sqlite", "b.lmdb"], in: directory)
            #expect(refused.status == 1)
            #expect(
                refused.stderr == "storage: collection 'People' of the destination already holds 1 record;"
                    + " give --merge to upsert, or --replace\n",
                "\(refused.stderr)"
            )
        }
    }

    @Test func verifyAfterCopyComparesTheSourcesCollections() throws {
        try TemporaryDirectory.with("storage-cli-verify-others") { directory in
            try "id,name\n1,Ann\n2,Bob\n".write(
                to: directory.appendingPathComponent("people.csv"),
                atomically: true,
                encoding: .utf8
            )
            #expect(try StorageProcess.run(["import", "a.sqlite", "People", "people.csv"], in: directory).status == 0)
            #expect(try StorageProcess.run(["import", "b.lmdb", "Other", "people.csv"], in: directory).status == 0)
            #expect(try StorageProcess.run(["copy", "a.sqlite", "b.lmdb"], in: directory).status == 0)

            let verified = try StorageProcess.run(["verify", "a.sqlite", "b.lmdb"], in: directory)
            #expect(verified.status == 0, "\(verified.stderr)")
            #expect(
                verified.stderr == "sqlite:a.sqlite and lmdb:b.lmdb hold the same data: 2 records in 1 collection;"
                    + " B also holds 1 other collection, not compared\n",
                "\(verified.stderr)"
            )
            // The other way round, B's collection is missing from A: a difference.
            let reversed = try StorageProcess.run(["verify", "b.lmdb", "a.sqlite"], in: directory)
            #expect(reversed.status == 1)
            #expect(reversed.stderr.contains("Other"), "\(reversed.stderr)")
        }
    }
}
