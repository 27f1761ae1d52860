import Foundation
import Storage
import StorageCommandLine
import StorageTestBackends
import StorageTestSupport
import Testing

@Suite("storage update, run as a process", .dedicatedThreads)
struct UpdateCommandTests {
    /// The records of `People` in `store`, exported as JSON.
    static func people(_ store: String, in directory: URL) throws -> [[String: Any]] {
        let exported = try StorageProcess.run(["export", store, "People"], in: directory)
        #expect(exported.status == 0, "\(exported.stderr)")
        return try #require(try exported.json() as? [[String: Any]])
    }

    @Test(arguments: DiskBackend.everyCase)
    func updatesTheMatchingRecordsAndRefusesBadInputWritingNothing(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("storage-cli-update") { directory in
            let store = try storeURL(backend, in: directory)
            try peopleJSON.write(to: directory.appendingPathComponent("people.json"), atomically: true, encoding: .utf8)
            #expect(try StorageProcess.run(["import", store, "People", "people.json"], in: directory).status == 0)

            let updated = try StorageProcess.run(
                ["update", store, "People", "--set", "email = nil, score = 9", "--where", "age >= 30", "--json"],
                in: directory
            )
            #expect(updated.status == 0, "\(updated.stderr)")
            #expect(updated.stderr.hasPrefix("updated 3 records of People in "), "\(updated.stderr)")
            let object = try #require(try updated.json() as? [String: Any])
            #expect(object["records"] as? Int == 3)
            #expect(object["collection"] as? String == "People")
            let after = try Self.people(store, in: directory)
            for person in after {
                let age = person["age"] as? Int ?? 0
                #expect((person["score"] as? Double == 9) == (age >= 30), "\(person)")
                #expect((person["email"] is NSNull) == (age >= 30 || person["id"] as? Int == 2), "\(person)")
            }
            let all = try StorageProcess.run(["update", store, "People", "--set", "name = 'x'"], in: directory)
            #expect(all.status == 0, "\(all.stderr)")
            #expect(all.stderr.hasPrefix("updated 4 records"), "\(all.stderr)")
            let before = try Self.people(store, in: directory)
            #expect(before.allSatisfy { $0["name"] as? String == "x" })

            // Refused by the store: exit status 1, the code named, nothing written.
            let refusals: [([String], String)] = [
                (["--set", "id = 7"], "invalidKey"),
                (["--set", "nope = 1"], "unknownColumn"),
                (["--set", "age = 'old'"], "schemaMismatch"),
                (["--set", "name = 'y'", "--where", "nope == 1"], "unknownColumn"),
                (["--set", "name = 'y'", "--read-only"], "readOnly"),
            ]
            for (options, code) in refusals {
                let result = try StorageProcess.run(["update", store, "People", "--json"] + options, in: directory)
                #expect(result.status == 1, "\(options): \(result.stderr)")
                let object = try JSONSerialization.jsonObject(with: Data(result.stderr.utf8)) as? [String: Any]
                #expect(
                    (object?["error"] as? [String: Any])?["code"] as? String == code,
                    "\(options): \(result.stderr)"
                )
                #expect(result.stdout.isEmpty)
            }
            let missing = try StorageProcess.run(["update", store, "Nobody", "--set", "a = 1"], in: directory)
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("no collection 'Nobody'"), "\(missing.stderr)")
            #expect(
                try Self.people(store, in: directory).map { $0["name"] as? String }
                    == before.map { $0["name"] as? String }
            )
        }
    }

    @Test func malformedAssignmentsAreUsageErrorsPointingAtTheCharacter() throws {
        try TemporaryDirectory.with("storage-cli-update-syntax") { directory in
            try peopleJSON.write(to: directory.appendingPathComponent("people.json"), atomically: true, encoding: .utf8)
            #expect(
                try StorageProcess.run(["import", "app.sqlite", "People", "people.json"], in: directory).status == 0
            )
            let cases: [([String], String)] = [
                (["--set", "name = Ann"], "--set: expected a value, found 'Ann' (quote text: 'Ann') at character 8"),
                (["--set", "name == 'a'"], "--set: an assignment takes one '=', not a comparison"),
                (["--set", "name = 'a', name = 'b'"], "--set: column 'name' is assigned twice at character 13"),
                (["--set", "name 'a'"], "--set: expected '=' after the column name"),
                (["--set", "name = 'a' age = 1"], "--set: expected ',' or the end of the assignments"),
                (["--set", "name = 'a'", "--where", "age >"], "--where: expected a value"),
                ([], "update needs --set ASSIGNMENTS"),
            ]
            for (options, expected) in cases {
                let result = try StorageProcess.run(["update", "app.sqlite", "People"] + options, in: directory)
                #expect(result.status == 2, "\(options)")
                #expect(result.stderr.contains(expected), "\(result.stderr)")
            }
            #expect(
                try SetExpression.parse("a = 1, b='x' ,c=nil, d = true, e = -2.5") == [
                    "a": 1, "b": "x", "c": nil, "d": 1, "e": -2.5,
                ]
            )
            let help = try StorageProcess.run(["update", "--help"], in: directory)
            #expect(help.status == 0)
            #expect(help.stdout.hasPrefix("usage: storage update"))
        }
    }
}
