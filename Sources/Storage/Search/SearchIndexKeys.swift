import Foundation

/// The store's own collections that hold full-text indexes, and the text keys of their records.
///
/// - `_search_indexes`: one record per indexed collection (key: its folded name): the
///   collection, the indexed fields (a JSON array), N (`documents`, every record of the
///   collection) and the number of words of all records together (`tokens`).
/// - `_search_documents`: one record per indexed record (key: folded collection, U+0001, the
///   encoded key): its length in words and its distinct words, separated by spaces.
/// - `_search_postings`: one record per word of a record (key: folded collection, U+0001, the
///   word, U+0001, the encoded key): the record's length and the word's positions per field.
///
/// Words never hold U+0001 or a space (they are letters and digits), and text keys compare by
/// their bytes on every engine, so the postings of a word, or of every word with a prefix, are
/// one range of keys.
package enum SearchIndexKeys {
    /// The registry of the store's full-text indexes, which every write looks for (a backend may
    /// answer its absence from a cache it verifies at commit, as PostgreSQL does).
    package static let indexes = "_search_indexes"
    static let documents = "_search_documents"
    static let postings = "_search_postings"

    package static let indexesSchema = CollectionSchema(
        name: indexes,
        columns: [
            ColumnDefinition(name: "id", type: .text, isNullable: false),
            ColumnDefinition(name: "collection", type: .text),
            ColumnDefinition(name: "fields", type: .text),
            ColumnDefinition(name: "documents", type: .integer),
            ColumnDefinition(name: "tokens", type: .integer),
        ],
        primaryKey: "id"
    )
    static let documentsSchema = CollectionSchema(
        name: documents,
        columns: [
            ColumnDefinition(name: "id", type: .text, isNullable: false),
            ColumnDefinition(name: "length", type: .integer),
            ColumnDefinition(name: "terms", type: .text),
        ],
        primaryKey: "id"
    )
    static let postingsSchema = CollectionSchema(
        name: postings,
        columns: [
            ColumnDefinition(name: "id", type: .text, isNullable: false),
            ColumnDefinition(name: "length", type: .integer),
            ColumnDefinition(name: "hits", type: .text),
        ],
        primaryKey: "id"
    )

    /// Whether `collection` is one of the store's search collections, which hold what is derived
    /// from the records: copies rebuild them at the destination and verification leaves them out.
    static func isIndexCollection(_ collection: String) -> Bool {
        let folded = Identifier.folded(collection)
        return folded == indexes || folded == documents || folded == postings
    }

    /// A primary key as text, reversibly: `i` and the digits, `r` and the bits in hexadecimal,
    /// `t` and the text, `b` and the bytes in hexadecimal.
    package static func document(_ key: StorageValue) -> String {
        switch key {
        case .integer(let number): return "i" + String(number)
        case .real(let number): return "r" + String(number.bitPattern, radix: 16)
        case .text(let text): return "t" + text
        case .blob(let data): return "b" + data.map { String($0, radix: 16).leftPadded() }.joined()
        case .null: return "n"
        }
    }

    /// The key `document(_:)` encoded.
    package static func key(ofDocument text: String) -> StorageValue {
        let body = text.dropFirst()
        switch text.first {
        case "i": return Int64(body).map(StorageValue.integer) ?? .null
        case "r": return UInt64(body, radix: 16).map { .real(Double(bitPattern: $0)) } ?? .null
        case "t": return .text(String(body))
        case "b":
            var bytes: [UInt8] = []
            var index = body.startIndex
            while index < body.endIndex, let next = body.index(index, offsetBy: 2, limitedBy: body.endIndex) {
                bytes.append(UInt8(body[index..<next], radix: 16) ?? 0)
                index = next
            }
            return .blob(Data(bytes))
        default: return .null
        }
    }

    /// The key of a posting.
    static func posting(_ folded: String, _ term: String, _ document: String) -> String {
        folded + "\u{1}" + term + "\u{1}" + document
    }

    /// The key of a document record.
    static func documentRecord(_ folded: String, _ document: String) -> String {
        folded + "\u{1}" + document
    }
}

extension String {
    fileprivate func leftPadded() -> String { count == 1 ? "0" + self : self }
}
