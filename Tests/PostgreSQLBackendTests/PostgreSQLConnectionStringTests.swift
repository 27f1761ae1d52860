import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

@testable import PostgreSQLBackend

/// Malformed and wrong connection strings (issue 31): no error shows the password or any 3
/// characters of it, and each is classified from libpq's state and the server's SQLSTATE.
@Suite(.dedicatedThreads) struct PostgreSQLConnectionStringTests {
    struct Secret: Codable, Equatable, StorableModel {
        static let indexes: [IndexDefinition] = [.init(["text"], unique: true)]
        var id: Int64
        var text: String
    }

    /// Everything an error shows: its message, its description, its underlying error and its
    /// localized description.
    static func shown(_ error: StorageError) -> String {
        [error.message, "\(error)", String(describing: error.underlying), error.localizedDescription]
            .joined(separator: "\n")
    }

    /// The 20 attacks against a server that asks for a password: each throws its code (a string
    /// that cannot be used is `.cannotOpen` before any connection, a wrong or missing password
    /// `.permissionDenied`), and nothing it shows holds the password, 3 characters of it, or the
    /// `***` of a redaction by substring. The right password opens the store.
    @Test func malformedAndWrongConnectionStringsNeverShowThePassword() throws {
        try PostgreSQLPasswordServer.with { server in
            let attacks = server.attacks
            #expect(attacks.count == 20)
            for attack in attacks {
                let error = expectStorageError(attack.code) {
                    _ = try PostgreSQLStorageBackend(url: attack.url, configuration: .init(connectTimeout: .seconds(5)))
                }
                guard let error else { continue }
                let text = Self.shown(error)
                #expect(attack.leaks(in: text).isEmpty, "\(attack): \(attack.leaks(in: text)) in \(text)")
                #expect(!ConnectionAttack.garbled(text), "\(attack): \(text)")
                if attack.code == .cannotOpen {
                    #expect(error.underlying == nil, "\(attack): \(text)")
                }
            }
            // A wrong password is the server's 28P01, shown whole even when it is one letter.
            let wrong = expectStorageError(.permissionDenied) {
                _ = try PostgreSQLStorageBackend(url: server.keyValue(password: "a"))
            }
            #expect((wrong?.underlying as? PostgreSQLError)?.sqlState == "28P01", "\(String(describing: wrong))")
            // It matches its constant and its class (`28`, an invalid authorization specification).
            #expect(wrong.map { PostgreSQLError.Code.invalidPassword ~= $0 } == true, "\(String(describing: wrong))")
            #expect(
                wrong.map { PostgreSQLError.CodeClass.invalidAuthorizationSpecification ~= $0 } == true,
                "\(String(describing: wrong))"
            )
            #expect(wrong?.message.contains("127.0.0.1:\(server.port)") == true, "\(String(describing: wrong))")

            let backend = try PostgreSQLStorageBackend(
                url: server.keyValue(password: PostgreSQLPasswordServer.password)
            )
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            try store.save(Secret(id: 1, text: "kept"))
            #expect(try store.fetch(Secret.self, id: 1)?.text == "kept")
            #expect(!backend.server.contains(PostgreSQLPasswordServer.password))
        }
    }

    /// A password that is one letter garbled every message that held the letter (`a` made
    /// `dupl***te key`), which also showed the password by comparison: messages are now shown
    /// as the server wrote them.
    @Test func aOneLetterPasswordDoesNotGarbleTheServersMessages() throws {
        let url = try PostgreSQLTestServer.url() + "&password=a"
        let store = ObjectStore(backend: try .postgreSQL(url: url, configuration: .init(schema: "test_password_a")))
        defer { try? store.close() }
        _ = try store.deleteAll(Secret.self)
        try store.save(Secret(id: 1, text: "same"))
        let error = expectStorageError(.constraintViolation) { try store.save(Secret(id: 2, text: "same")) }
        #expect(error.map { !ConnectionAttack.garbled(Self.shown($0)) } == true, "\(String(describing: error))")
        #expect(error?.message.contains("duplicate key value") == true, "\(String(describing: error))")
    }

    /// libpq's verbose message for a server's error carries its SQLSTATE: it is found there
    /// (whatever language the rest is in), and the location line that only verbose messages
    /// have is left out.
    @Test func theSQLStateIsReadFromLibpqsLayoutNotItsWords() {
        let read = PostgreSQLConnection.serverError(
            in: "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  28P01: Passwort-Authentifizierung"
                + " für Benutzer »app« fehlgeschlagen\nORT:  auth_failed, auth.c:334\n"
        )
        #expect(read.sqlState == "28P01")
        #expect(read.message.hasSuffix("fehlgeschlagen"))
        let refused = PostgreSQLConnection.serverError(
            in: "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\tIs the server running?\n"
        )
        #expect(refused.sqlState == nil)
        #expect(refused.message.hasSuffix("Is the server running?"))
    }
}
