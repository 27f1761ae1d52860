import Foundation
import Storage

/// How collection, column and index names become PostgreSQL identifiers.
///
/// Names compare ignoring ASCII case (as SQLite compares them), so the identifier is the folded
/// name, always double-quoted; the declared spelling is kept in the store's catalog. PostgreSQL
/// truncates identifiers to 63 bytes, so a longer name is shortened and suffixed with a hash of
/// the whole name, so that two long names never meet.
enum PostgreSQLIdentifier {
    static let maximumBytes = 63

    /// The quoted identifier for `name` (a collection or a column), with an optional suffix that
    /// ours alone use (it holds `$`, which names may not).
    static func quoted(_ name: String, suffix: String = "") -> String {
        quote(physical(Identifier.folded(name), suffix: suffix))
    }

    /// `"name"`, with embedded quotes doubled.
    static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `name + suffix`, or a shortened name with a hash when that exceeds 63 bytes.
    static func physical(_ name: String, suffix: String = "") -> String {
        let full = name + suffix
        if full.utf8.count <= maximumBytes { return full }
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
