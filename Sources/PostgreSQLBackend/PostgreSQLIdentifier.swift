import Foundation
import Storage

/// How collection, column and index names become PostgreSQL identifiers.
///
/// Names compare ignoring ASCII case (as SQLite compares them), so the identifier is the folded
/// name, always double-quoted; the declared spelling is kept in the store's catalog. PostgreSQL
/// truncates identifiers to 63 bytes, so a longer name is shortened and suffixed with a hash of
/// the whole name, so that two long names never meet. Column names may hold any character but
/// NUL; one holding `$` (which our suffixes and shortened names use) is always shortened the same
/// way, so it cannot take the identifier of another name.
enum PostgreSQLIdentifier {
    static let maximumBytes = 63

    /// The quoted identifier for `name` (a collection or a column), with an optional suffix that
    /// ours alone use (it holds `$`, which collection names may not).
    static func quoted(_ name: String, suffix: String = "") -> String {
        quote(physical(Identifier.folded(name), suffix: suffix))
    }

    /// `"name"`, with embedded quotes doubled. By scalar, not by Character: a quote followed by
    /// a combining mark is one Character that is not `"`, yet PostgreSQL sees the quote byte.
    static func quote(_ identifier: String) -> String {
        var result = "\""
        result.reserveCapacity(identifier.utf8.count + 2)
        for scalar in identifier.unicodeScalars {
            if scalar == "\"" { result.unicodeScalars.append("\"") }
            result.unicodeScalars.append(scalar)
        }
        result.unicodeScalars.append("\"")
        return result
    }

    /// `text` as an SQL string literal, `E'…'` with each quote and backslash escaped: it reads the
    /// same whatever `standard_conforming_strings` is, and the connections' encoding is UTF-8, in
    /// which no byte of a multi-byte character is a quote or a backslash. Only for names of ours
    /// that a statement holds as constants (the listener count's sequence, a `regclass`
    /// PostgreSQL resolves once, when it plans the statement, and the notification channel);
    /// values are always bound.
    static func literal(_ text: String) -> String {
        var result = "E'"
        result.reserveCapacity(text.utf8.count + 3)
        for scalar in text.unicodeScalars {
            if scalar == "'" || scalar == "\\" { result.unicodeScalars.append(scalar) }
            result.unicodeScalars.append(scalar)
        }
        result.unicodeScalars.append("'")
        return result
    }

    /// `name + suffix`, or a shortened name with a hash when that exceeds 63 bytes or the name
    /// holds `$`.
    static func physical(_ name: String, suffix: String = "") -> String {
        let full = name + suffix
        if full.utf8.count <= maximumBytes && !name.utf8.contains(UInt8(ascii: "$")) { return full }
        var prefix = ""
        for character in name {
            if prefix.utf8.count + String(character).utf8.count > 36 { break }
            prefix.append(character)
        }
        return prefix + "$" + hash(name) + suffix
    }

    /// A stable 64-bit FNV-1a hash of `text`, as 16 hex digits.
    static func hash(_ text: String) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value = value &* 0x100_0000_01b3
        }
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The name of an index of `collection` (index names are unique in a PostgreSQL schema).
    static func indexName(_ index: IndexDefinition, in collection: String) -> String {
        let folded = IndexDefinition(index.columns.map(Identifier.folded), unique: index.isUnique)
        return quote("x$" + hash(folded.name(in: Identifier.folded(collection))))
    }
}
