import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// The `storage` command never prints a connection string back (issue 31): `key=value` pairs are
/// taken for PostgreSQL, not for a path, and what it prints of a server is its user, host, port
/// and database.
@Suite("The storage command and connection strings", .dedicatedThreads)
struct ConnectionStringTests {
    /// The 20 attacks of `PostgreSQLPasswordServer`, each given to `storage info`: it fails with
    /// the attack's code, and its standard output and error hold neither the password nor any 3
    /// characters of it. With the right password, `info`, `copy` and `verify` work and print the
    /// server without the password.
    @Test func connectionStringsAreNeverPrintedBack() throws {
        try PostgreSQLPasswordServer.with { server in
            try TemporaryDirectory.with("storage-secrets") { directory in
                for attack in server.attacks {
                    // As a person reads it, and with --json (where the code is a field).
                    for json in [false, true] {
                        let result = try StorageProcess.run(
                            ["info", attack.url] + (json ? ["--json"] : []),
                            in: directory
                        )
                        let output = result.stdout + result.stderr
                        #expect(result.status == 1, "\(attack): \(output)")
                        if json {
                            let object =
                                try JSONSerialization.jsonObject(with: Data(result.stderr.utf8)) as? [String: Any]
                            let code = (object?["error"] as? [String: Any])?["code"] as? String
                            #expect(code == "\(attack.code)", "\(attack): \(output)")
                        }
                        #expect(attack.leaks(in: output).isEmpty, "\(attack): \(attack.leaks(in: output)) in \(output)")
                        #expect(!ConnectionAttack.garbled(output), "\(attack): \(output)")
                    }
                }

                let password = PostgreSQLPasswordServer.password
                let right = server.keyValue(password: password)
                let shown =
                    "postgresql://\(PostgreSQLPasswordServer.role)@127.0.0.1:\(server.port)/"
                    + PostgreSQLPasswordServer.role
                try peopleJSON.write(
                    to: directory.appendingPathComponent("people.json"),
                    atomically: true,
                    encoding: .utf8
                )
                let source = "sqlite:" + directory.appendingPathComponent("people.sqlite").path
                #expect(try StorageProcess.run(["import", source, "People", "people.json"], in: directory).status == 0)
                let runs = [
                    try StorageProcess.run(["copy", source, right], in: directory),
                    try StorageProcess.run(["verify", source, right], in: directory),
                    try StorageProcess.run(["info", right], in: directory),
                    try StorageProcess.run(["info", right, "--json"], in: directory),
                ]
                for run in runs {
                    #expect(run.status == 0, "\(run.stderr)")
                    #expect(!(run.stdout + run.stderr).contains(password), "\(run.stdout)\(run.stderr)")
                }
                #expect(runs[0].stderr.contains(shown), "\(runs[0].stderr)")
                #expect(runs[2].stdout.contains("path: " + shown + "\n"), "\(runs[2].stdout)")
                #expect(runs[2].stdout.contains("People  4 records"), "\(runs[2].stdout)")
                #expect((try runs[3].json() as? [String: Any])?["path"] as? String == shown, "\(runs[3].stdout)")
            }
        }
    }

    /// A store URL of an unknown scheme is refused naming the scheme only: the rest may hold a
    /// password.
    @Test func anUnknownSchemeIsNamedWithoutTheRestOfTheURL() throws {
        try TemporaryDirectory.with("storage-scheme") { directory in
            let result = try StorageProcess.run(["info", "postgresq://app:Hw4Zk9@db/app"], in: directory)
            #expect(result.status == 2)
            #expect(result.stderr.contains("'postgresq'"), "\(result.stderr)")
            #expect(!result.stderr.contains("Hw4Zk9"), "\(result.stderr)")
        }
    }
}
