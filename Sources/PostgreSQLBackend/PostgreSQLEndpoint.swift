internal import CPostgreSQL
import Foundation
import Storage

/// What a connection string names, for messages: the server (host and port), the database and the
/// user. The password is not kept, and no message quotes the string itself.
struct PostgreSQLEndpoint: Sendable, CustomStringConvertible {
    /// `host:port` (a socket folder for a Unix socket), as libpq resolves the defaults.
    let server: String
    let database: String?
    /// Each host of a multi-host string with its port (empty for the default), in order, when
    /// the string names hosts by `host` (not `hostaddr`); empty otherwise. A connection whose
    /// attempt on one host times out goes on with the hosts after it.
    let hosts: [(host: String, port: String)]
    let user: String?

    /// Parses `url` (a URI or `key=value` pairs) with libpq's own parser, and checks the values
    /// libpq would refuse only when connecting (a port that is not a number, an unknown
    /// `sslmode`).
    /// - Throws: `StorageError` with code `.cannotOpen` when libpq cannot parse it or a value is
    ///   invalid; the message says which part is wrong without quoting the string, which may
    ///   hold a password (libpq's own message quotes it, so it is never read).
    init(url: String) throws {
        guard !url.utf8.contains(0) else {
            throw Self.malformed("it holds a NUL character")
        }
        if let reason = Self.ambiguousCredentials(in: url) { throw Self.malformed(reason) }
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &errorMessage) else {
            if let errorMessage { PQfreemem(errorMessage) }
            throw Self.malformed(Self.malformation(of: url))
        }
        defer { PQconninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        try Self.checkValues(values)
        server = Self.servers(host: values["host"] ?? values["hostaddr"] ?? "localhost", port: values["port"])
        if let host = values["host"], values["hostaddr"] == nil {
            let names = host.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let ports = (values["port"] ?? "").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            hosts = names.enumerated().map { index, name in
                (name, ports.count == names.count ? ports[index] : ports.first ?? "")
            }
        } else {
            hosts = []
        }
        database = values["dbname"]
        user = values["user"]
    }

    /// `host:port` for each host of a multi-host string (`host=a,b port=1,2`, or
    /// `postgresql://a:1,b:2/…`), as libpq pairs them: one port for every host, or one each (an
    /// empty one is the default).
    private static func servers(host: String, port: String?) -> String {
        let hosts = host.split(separator: ",", omittingEmptySubsequences: false)
        let ports = (port ?? "").split(separator: ",", omittingEmptySubsequences: false)
        return hosts.enumerated().map { index, host in
            let port = ports.count == hosts.count ? ports[index] : ports.first ?? ""
            return (host.isEmpty ? "localhost" : host) + ":" + (port.isEmpty ? "5432" : port)
        }.joined(separator: ",")
    }

    var description: String {
        var text = "postgresql://" + (user.map { $0 + "@" } ?? "") + server
        if let database { text += "/" + database }
        return text
    }

    /// The error for a connection string that cannot be used, saying why in `reason`.
    private static func malformed(_ reason: String) -> StorageError {
        StorageError(.cannotOpen, "the PostgreSQL connection string cannot be used: " + reason)
    }

    // MARK: Checks of the values

    /// The values each option whose value libpq checks only when connecting may take (libpq
    /// 15 to 17), by option; an option this libpq does not know never reaches the check.
    private static let choices: [String: [String]] = [
        "sslmode": ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"],
        "gssencmode": ["disable", "prefer", "require"],
        "channel_binding": ["disable", "prefer", "require"],
        "target_session_attrs": ["any", "read-write", "read-only", "primary", "standby", "prefer-standby"],
        "ssl_min_protocol_version": ["", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"],
        "ssl_max_protocol_version": ["", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"],
        "load_balance_hosts": ["disable", "random"],
        "sslcertmode": ["disable", "allow", "require"],
        "sslnegotiation": ["postgres", "direct"],
    ]

    /// The options whose value libpq reads as a whole number when connecting.
    private static let integers = [
        "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout",
        "connect_timeout",
    ]

    /// Throws `.cannotOpen` for a value libpq would refuse when connecting: a configuration
    /// error is permanent, not a server that cannot be reached. The message names the option,
    /// never its value.
    private static func checkValues(_ values: [String: String]) throws {
        for (option, allowed) in choices.sorted(by: { $0.key < $1.key }) {
            guard let value = values[option], !allowed.contains(value) else { continue }
            throw malformed(
                "its \(option) must be one of " + allowed.filter { !$0.isEmpty }.joined(separator: ", ")
            )
        }
        for option in integers {
            guard let value = values[option], Int(value.trimmingCharacters(in: .whitespaces)) == nil else { continue }
            throw malformed("its \(option) must be a whole number")
        }
        if let ports = values["port"] {
            // One port, or one for each host (an empty one is the default).
            for port in ports.split(separator: ",", omittingEmptySubsequences: false) where !port.isEmpty {
                guard let number = Int(port.trimmingCharacters(in: .whitespaces)), (1...65_535).contains(number)
                else { throw malformed("its port must be a number from 1 to 65535") }
            }
        }
    }

    /// Why a URI whose user information holds more than one `@` is refused: libpq ends the
    /// password at the first one and takes the rest for the host, which messages would then
    /// quote (a password holding `@` must be written `%40`).
    private static func ambiguousCredentials(in url: String) -> String? {
        guard let scheme = url.range(of: "://"), url.hasPrefix("postgresql://") || url.hasPrefix("postgres://")
        else { return nil }
        let authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" }
        guard authority.filter({ $0 == "@" }).count > 1 else { return nil }
        return "the part of the URI before the host holds more than one @ (write an @ in a password as %40)"
    }

    // MARK: Why a string cannot be parsed

    /// The option names this libpq knows (`PQconndefaults`).
    private static let keywords: Set<String> = {
        guard let defaults = PQconndefaults() else { return [] }
        defer { PQconninfoFree(defaults) }
        var names: Set<String> = []
        var option = defaults
        while let keyword = option.pointee.keyword {
            names.insert(String(cString: keyword))
            option += 1
        }
        return names
    }()

    /// Whether `text` is meant as a connection string: a `postgresql://` or `postgres://` URI,
    /// or `key=value` pairs whose first key, or any later one, is an option libpq knows.
    static func looksLikeConnectionString(_ text: String) -> Bool {
        if text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") { return true }
        return text.split(whereSeparator: \.isWhitespace).contains { word in
            guard let equals = word.firstIndex(of: "=") else { return false }
            return keywords.contains(String(word[..<equals]))
        }
    }

    /// What is wrong with `url`, which libpq could not parse, said without quoting any of it.
    static func malformation(of url: String) -> String {
        url.hasPrefix("postgresql://") || url.hasPrefix("postgres://")
            ? uriMalformation(Array(url.utf8)) : keyValueMalformation(Array(url.utf8))
    }

    /// What is wrong with a URI libpq could not parse.
    private static func uriMalformation(_ bytes: [UInt8]) -> String {
        var index = 0
        while index < bytes.count, let percent = bytes[index...].firstIndex(of: UInt8(ascii: "%")) {
            let digits = bytes[(percent + 1)..<min(bytes.count, percent + 3)]
            guard digits.count == 2, digits.allSatisfy({ isHexDigit($0) }) else {
                return "a percent escape (%) in the URI is not followed by two hexadecimal digits"
            }
            if digits.elementsEqual("00".utf8) { return "a percent escape in the URI encodes a NUL character" }
            index = percent + 3
        }
        if let open = bytes.firstIndex(of: UInt8(ascii: "[")) {
            guard let close = bytes[open...].firstIndex(of: UInt8(ascii: "]")) else {
                return "an IPv6 address opened with [ in the URI is not closed with ]"
            }
            if close == open + 1 { return "an IPv6 address in brackets in the URI is empty" }
        }
        if let question = bytes.firstIndex(of: UInt8(ascii: "?")) {
            let parameters = bytes[(question + 1)...].split(
                separator: UInt8(ascii: "&"),
                omittingEmptySubsequences: false
            )
            for (number, parameter) in parameters.enumerated() {
                let parts = parameter.split(separator: UInt8(ascii: "="), omittingEmptySubsequences: false)
                guard parts.count == 2 else {
                    return "query parameter \(number + 1) of the URI is not one key=value pair"
                }
                let key = String(decoding: parts[0], as: UTF8.self)
                guard keywords.contains(key) || key == "ssl" else {
                    return "query parameter \(number + 1) of the URI names no option libpq knows"
                }
            }
        }
        return "it is not a URI of the form postgresql://user:password@host:port/database?key=value"
    }

    /// What is wrong with `key=value` pairs libpq could not parse, read as libpq reads them:
    /// keys and values apart by white space, a value in single quotes when it holds any,
    /// backslash escapes.
    private static func keyValueMalformation(_ bytes: [UInt8]) -> String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        var index = 0
        var number = 0
        while true {
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            guard index < bytes.count else { break }
            number += 1
            let start = index
            while index < bytes.count, !isSpace(bytes[index]), bytes[index] != UInt8(ascii: "=") { index += 1 }
            let key = String(decoding: bytes[start..<index], as: UTF8.self)
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                return "key \(number) of the key=value pairs has no = after it"
            }
            guard keywords.contains(key) else {
                return "key \(number) of the key=value pairs is not an option libpq knows"
            }
            index += 1
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            if index < bytes.count, bytes[index] == UInt8(ascii: "'") {
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "'") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard index < bytes.count else {
                    return "the value of key \(number) of the key=value pairs opens a quote that is not closed"
                }
                index += 1
            } else {
                while index < bytes.count, !isSpace(bytes[index]) {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
            }
        }
        return "it is neither a postgresql:// URI nor key=value pairs"
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
}
