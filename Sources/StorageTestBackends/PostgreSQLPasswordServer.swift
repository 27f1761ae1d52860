import Foundation
package import Storage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private PostgreSQL cluster that asks one role for its password over TCP
/// (`scripts/postgres.sh password`): the tests' own server trusts every local connection, so a
/// wrong password can only be tried here. Started in the folder private clusters use, so that
/// one a killed test leaves behind is swept (`PostgreSQLTestServer.sweepAbandonedClusters`).
package struct PostgreSQLPasswordServer: Sendable {
    /// The role that must give a password, and the database it owns.
    package static let role = "storage_pw"
    /// The role's password.
    package static let password = "Rq7-Vm2zKx9"
    /// The port the server listens on, on 127.0.0.1.
    package let port: Int

    /// Starts a cluster, runs `body` with it, and stops and removes it.
    /// - Throws: `StorageError` with code `.unavailable` when the cluster cannot be started;
    ///   what `body` throws.
    package static func with<R>(_ body: (PostgreSQLPasswordServer) throws -> R) throws -> R {
        let directory = PostgreSQLTestServer.clusterParent()
            .appendingPathComponent(PostgreSQLTestServer.clusterPrefix + UUID().uuidString).path
        defer {
            _ = try? PostgreSQLTestServer.run(["stop", directory])
            try? FileManager.default.removeItem(atPath: directory)
        }
        try PostgreSQLTestServer.run(["start", directory])
        try? String(getpid()).write(
            toFile: directory + "/" + PostgreSQLTestServer.ownerFile,
            atomically: true,
            encoding: .utf8
        )
        try PostgreSQLTestServer.run(["password", directory, role, password])
        let port = try String(contentsOfFile: directory + "/port", encoding: .utf8)
        guard let number = Int(port.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw StorageError(.unavailable, "the password cluster has no port")
        }
        return try body(PostgreSQLPasswordServer(port: number))
    }

    /// `key=value` pairs that reach the server as `role`, with `password` (none when `nil`).
    package func keyValue(password: String?) -> String {
        "host=127.0.0.1 port=\(port) user=\(Self.role) dbname=\(Self.role)"
            + (password.map { " password=" + $0 } ?? "")
    }

    /// A URI that reaches the server as `role`, with `password` written as given (escaped or
    /// not).
    package func uri(password: String, query: String = "") -> String {
        "postgresql://\(Self.role):\(password)@127.0.0.1:\(port)/\(Self.role)" + query
    }

    /// The 20 malformed or wrong connection strings of the attack on passwords (issue 31):
    /// short and long passwords (1-character ones among them), percent escapes, URIs and
    /// `key=value` pairs, a bad `sslmode`, a port that is not a number, wrong and missing
    /// passwords against this server.
    package var attacks: [ConnectionAttack] {
        let host = "127.0.0.1:\(port)"
        return [
            // Strings libpq cannot parse: its message would quote them whole.
            .init("an IPv6 address not closed", "postgresql://app:Wj4Tq8@[::1:55433/app", ["Wj4Tq8"], .cannotOpen),
            .init("a bad percent escape", "postgresql://app:Sx%zzK7v@\(host)/app", ["Sx%zzK7v"], .cannotOpen),
            .init("a percent escape cut short", "postgresql://app:Tq8%4@\(host)/app", ["Tq8%4"], .cannotOpen),
            .init("a percent escape of NUL", "postgresql://app:Nv%00Lz9@\(host)/app", ["Nv%00Lz9"], .cannotOpen),
            .init("a query parameter without =", uri(password: "Qp5vWx", query: "?sslmode"), ["Qp5vWx"], .cannotOpen),
            .init("an unknown URI option", uri(password: "Uk7zRt", query: "?bogusopt=1"), ["Uk7zRt"], .cannotOpen),
            .init("an unescaped @ in the password", uri(password: "Ab@Cd9"), ["Ab@Cd9"], .cannotOpen),
            .init(
                "an unclosed quote",
                "host=127.0.0.1 port=\(port) password='Kv2Zq8 dbname=app",
                ["Kv2Zq8"],
                .cannotOpen
            ),
            .init("a key without =", "host=127.0.0.1 password=Xy9Wq3 dbname", ["Xy9Wq3"], .cannotOpen),
            .init("an unknown key", "host=127.0.0.1 passwd=Jh5Tr2 dbname=app", ["Jh5Tr2"], .cannotOpen),
            // Values libpq checks only when connecting: permanent, not a server out of reach.
            .init("a bad sslmode in a URI", uri(password: "Sm4kLq", query: "?sslmode=bogus"), ["Sm4kLq"], .cannotOpen),
            .init(
                "a bad sslmode in key=value pairs",
                keyValue(password: "Ss3Mq9") + " sslmode=verify",
                ["Ss3Mq9"],
                .cannotOpen
            ),
            .init(
                "a port that is not a number, in a URI",
                "postgresql://\(Self.role):Pn6hVb@127.0.0.1:54x32/\(Self.role)",
                ["Pn6hVb"],
                .cannotOpen
            ),
            .init(
                "a port that is not a number, in key=value pairs",
                "host=127.0.0.1 port=five user=\(Self.role) password=Pt8Zx1",
                ["Pt8Zx1"],
                .cannotOpen
            ),
            // Wrong and missing passwords, refused by the server.
            .init("a wrong 1-character password", keyValue(password: "a"), [], .permissionDenied),
            .init("a wrong 1-character non-ASCII password", keyValue(password: "Ж"), ["Ж"], .permissionDenied),
            .init("a wrong 3-character password", uri(password: "q7Z"), ["q7Z"], .permissionDenied),
            .init(
                "a wrong 40-character password",
                uri(password: "Zq7Vx2Lm9Kp4Rt6Wn1Hs8Jd3Fb5Gc0YqTv4Ub8Xe"),
                ["Zq7Vx2Lm9Kp4Rt6Wn1Hs8Jd3Fb5Gc0YqTv4Ub8Xe"],
                .permissionDenied
            ),
            .init(
                "a wrong percent-escaped password",
                uri(password: "Pc%40t7Zx"),
                ["Pc%40t7Zx", "Pc@t7Zx"],
                .permissionDenied
            ),
            .init("a missing password", keyValue(password: nil), [], .permissionDenied),
        ]
    }
}

/// One malformed or wrong connection string, the passwords it holds, and the error it must give.
package struct ConnectionAttack: Sendable, CustomStringConvertible {
    /// What is wrong with it.
    package let name: String
    /// The connection string.
    package let url: String
    /// The passwords it holds, as written and as libpq decodes them: none may show. A
    /// 1-character ASCII password is left out (any message holds its letter), and is checked
    /// instead by the message being whole (`garbled`).
    package let secrets: [String]
    /// The error code the string must give.
    package let code: StorageError.Code

    init(_ name: String, _ url: String, _ secrets: [String], _ code: StorageError.Code) {
        self.name = name
        self.url = url
        self.secrets = secrets
        self.code = code
    }

    /// What is wrong with the string: the attack's name in test reports.
    package var description: String { name }

    /// The pieces of `text` that show a secret: a secret itself, or any 3 characters of one.
    package func leaks(in text: String) -> [String] {
        var pieces: Set<String> = []
        for secret in secrets {
            let characters = Array(secret)
            pieces.insert(secret)
            if characters.count > 3 {
                for start in 0...(characters.count - 3) { pieces.insert(String(characters[start..<start + 3])) }
            }
        }
        return pieces.filter { text.contains($0) }.sorted()
    }

    /// Whether `text` shows the marks of redaction by substring replacement (`***`).
    package static func garbled(_ text: String) -> Bool { text.contains("***") }
}
