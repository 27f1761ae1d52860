internal import CPostgreSQL
import Foundation
import Storage

/// What a connection string names, for messages: the server (host and port), the database and the
/// user, never the password. Also removes the password from any text that might echo it.
struct PostgreSQLEndpoint: Sendable, CustomStringConvertible {
    /// `host:port` (a socket folder for a Unix socket), as libpq resolves the defaults.
    let server: String
    let database: String?
    let user: String?
    /// The password given in the connection string, kept only to remove it from messages.
    private let password: String?

    /// Parses `url` (a URI or `key=value` pairs) with libpq's own parser.
    /// - Throws: `StorageError` with code `.cannotOpen` when libpq cannot parse it; the message
    ///   never quotes the string, which may hold a password.
    init(url: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &errorMessage) else {
            let reason = errorMessage.map { String(cString: $0) } ?? "it is not a connection string"
            if let errorMessage { PQfreemem(errorMessage) }
            throw StorageError(
                .cannotOpen,
                "the PostgreSQL connection string cannot be parsed: "
                    + reason.trimmingCharacters(in: .whitespacesAndNewlines)
            )
        }
        defer { PQconninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        let host = values["host"] ?? values["hostaddr"] ?? "localhost"
        server = host + ":" + (values["port"] ?? "5432")
        database = values["dbname"]
        user = values["user"]
        password = values["password"].flatMap { $0.isEmpty ? nil : $0 }
    }

    var description: String {
        var text = "postgresql://" + (user.map { $0 + "@" } ?? "") + server
        if let database { text += "/" + database }
        return text
    }

    /// `text` with the password, wherever it appears, replaced by `***`.
    func redacting(_ text: String) -> String {
        guard let password, text.contains(password) else { return text }
        return text.replacingOccurrences(of: password, with: "***")
    }
}
