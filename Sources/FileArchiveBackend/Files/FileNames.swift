import Storage

/// The names of the store's files and folders, derived from collection names and primary keys
/// by reversible encodings that can never name a path outside the store.
///
/// - A collection's folder is `c-` and its folded name with every byte other than `a`–`z`,
///   `0`–`9`, `_` and `-` written `%XX` (so `.` and `/` never appear).
/// - A record's file is the lowercase hex of a type byte and the key's bytes: `01` and the 8
///   big-endian bytes of an integer, `02` and those of a real's bit pattern, `03` and UTF-8 text,
///   `04` and a blob's bytes, `00` for null. Keys that are equal as SQLite compares keys
///   (`StorageKey`) get one name: a real equal to an integer (`-0.0`, `3.0`) is named as that
///   integer, every NaN as one NaN. Hex names never clash with `schema` or `.tmp-` files.
enum FileNames {
    /// The longest name most file systems allow.
    static let maximumLength = 255
    /// The longest key a record file name can hold: type byte and key, two hex digits a byte.
    static let maximumKeyBytes = (maximumLength - 2) / 2

    static let schemaFile = "schema"
    static let lockFile = "lock"
    static let journalFile = "journal"
    static let collectionPrefix = "c-"
    static let temporaryPrefix = ".tmp-"

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The folder name of a collection.
    static func folder(for collection: String) throws -> String {
        var name = Array(collectionPrefix.utf8)
        for byte in Identifier.folded(collection).utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"),
                UInt8(ascii: "-"):
                name.append(byte)
            default:
                name.append(UInt8(ascii: "%"))
                name.append(hexDigits[Int(byte >> 4)])
                name.append(hexDigits[Int(byte & 0xf)])
            }
        }
        guard name.count <= maximumLength else {
            throw StorageError(
                .invalidIdentifier,
                "the collection name \(Identifier.quoted(collection)) is too long for a folder name once encoded",
                collection: collection
            )
        }
        return String(decoding: name, as: UTF8.self)
    }

    /// The file name of the record whose primary key is `key`: one name for every key that
    /// `StorageKey` calls equal, so the file a save writes is the file it replaces.
    static func record(for key: StorageValue, in collection: String) throws -> String {
        var bytes: [UInt8]
        switch key {
        case .null: bytes = [0]
        case .integer(let value): bytes = integerBytes(value)
        case .real(let value):
            if let integer = StorageValue.exactInteger(value) {
                bytes = integerBytes(integer)
            } else {
                bytes = realBytes(value.isNaN ? .nan : value)
            }
        case .text(let value): bytes = [3] + Array(value.utf8)
        case .blob(let value): bytes = [4] + Array(value)
        }
        guard bytes.count - 1 <= maximumKeyBytes else {
            throw StorageError(
                .invalidKey,
                "a primary key of \(bytes.count - 1) bytes is longer than the \(maximumKeyBytes) bytes"
                    + " a file archive can name",
                collection: collection,
                key: key
            )
        }
        return hex(bytes)
    }

    /// Whether `name` is a name versions before key equality followed SQLite gave the record of
    /// a real key equal to `key`: `02` and the real's own bit pattern, so `0.0` and `-0.0` had
    /// two files, and either could hold the other's record after a batch saved both. Such files
    /// are still read (docs/ARCHIVE_FORMAT.md, "Damaged records").
    static func isLegacyRecord(_ name: String, of key: StorageValue) -> Bool {
        guard case .real = key, name.utf8.count == 18, name.hasPrefix("02"),
            let bits = UInt64(name.dropFirst(2), radix: 16)
        else { return false }
        return StorageKey(.real(Double(bitPattern: bits))) == StorageKey(key)
    }

    private static func integerBytes(_ value: Int64) -> [UInt8] {
        [1] + withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    private static func realBytes(_ value: Double) -> [UInt8] {
        [2] + withUnsafeBytes(of: value.bitPattern.bigEndian) { Array($0) }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        var name: [UInt8] = []
        name.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            name.append(hexDigits[Int(byte >> 4)])
            name.append(hexDigits[Int(byte & 0xf)])
        }
        return String(decoding: name, as: UTF8.self)
    }

    /// Whether `name` is a record file's name (lowercase hex, an even number of digits).
    static func isRecord(_ name: String) -> Bool {
        let utf8 = name.utf8
        return !utf8.isEmpty && utf8.count % 2 == 0
            && utf8.allSatisfy { ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 >= 97 && $0 <= 102) }
    }
}
