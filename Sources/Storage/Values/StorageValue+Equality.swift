extension StorageValue {
    /// Whether two values are stored alike: the same storage class and the same value (text by
    /// its UTF-8 bytes; NaN equals NaN). An integer never equals a real; for key equality, where
    /// `1` and `1.0` are one key, use ``StorageKey``.
    /// - Parameters:
    ///   - lhs: a value.
    ///   - rhs: another value.
    /// - Returns: whether they are the same stored value.
    public static func == (lhs: StorageValue, rhs: StorageValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.integer(let a), .integer(let b)): return a == b
        case (.real(let a), .real(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.text(let a), .text(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.blob(let a), .blob(let b)): return a == b
        default: return false
        }
    }

    /// Hashes the storage class and the value, consistently with `==`.
    /// - Parameter hasher: the hasher to feed.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .integer(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .real(let value):
            hasher.combine(2 as UInt8)
            hasher.combine(Self.canonicalBits(of: value))
        case .text(let value):
            hasher.combine(3 as UInt8)
            Self.combineUTF8(of: value, into: &hasher)
        case .blob(let value):
            hasher.combine(4 as UInt8)
            hasher.combine(value)
        }
    }

    /// The bits of `value` with every zero as `+0.0` and every NaN as one NaN, so that values that
    /// are equal hash alike.
    static func canonicalBits(of value: Double) -> UInt64 {
        if value.isNaN { return Double.nan.bitPattern }
        return value == 0 ? 0 : value.bitPattern
    }

    /// Feeds the UTF-8 bytes of `text` (not its Unicode canonical form) to `hasher`.
    static func combineUTF8(of text: String, into hasher: inout Hasher) {
        hasher.combine(text.utf8.count)
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// A primary key or an indexed value, compared the way SQLite compares them in a key: numbers as
/// numbers whatever their storage class (`1`, `1.0` and `1` stored as a real are one key; so are
/// `0.0` and `-0.0`), text by its UTF-8 bytes (the NFC and NFD spellings of a word are two keys),
/// blobs by their bytes, and `NULL` equal to itself.
///
/// Use it wherever keys are hashed or compared for identity — record maps, sets of changed keys,
/// unique indexes, `IN` lists — so that every backend and ``ObjectStore`` agree with SQLite on which
/// records are the same.
public struct StorageKey: Hashable, Sendable {
    /// The value, as stored.
    public var value: StorageValue

    /// The key of `value`.
    /// - Parameter value: the key's value.
    public init(_ value: StorageValue) {
        self.value = value
    }

    /// Whether two keys are one record's key, by SQLite's rules: numbers compare as numbers
    /// (`1` and `1.0`, `0.0` and `-0.0` are one key), text by its UTF-8 bytes, blobs by their
    /// bytes.
    /// - Parameters:
    ///   - lhs: a key.
    ///   - rhs: another key.
    /// - Returns: whether they name the same record.
    public static func == (lhs: StorageKey, rhs: StorageKey) -> Bool {
        switch (lhs.value, rhs.value) {
        case (.real(let a), .real(let b)) where a.isNaN && b.isNaN: return true
        case (.null, .null): return true
        default:
            if lhs.value.isNull || rhs.value.isNull { return false }
            return StorageValue.compare(lhs.value, rhs.value) == 0
        }
    }

    /// Hashes the key consistently with `==`: keys that are one key hash alike.
    /// - Parameter hasher: the hasher to feed.
    public func hash(into hasher: inout Hasher) {
        switch value {
        case .null:
            hasher.combine(0 as UInt8)
        case .integer(let number):
            hasher.combine(1 as UInt8)
            hasher.combine(number)
        case .real(let number):
            // An integral real in the range of Int64 equals that integer, so it hashes as one.
            if let integer = StorageValue.exactInteger(number) {
                hasher.combine(1 as UInt8)
                hasher.combine(integer)
            } else {
                hasher.combine(2 as UInt8)
                hasher.combine(StorageValue.canonicalBits(of: number))
            }
        case .text(let text):
            hasher.combine(3 as UInt8)
            StorageValue.combineUTF8(of: text, into: &hasher)
        case .blob(let bytes):
            hasher.combine(4 as UInt8)
            hasher.combine(bytes)
        }
    }
}

extension StorageKey: CustomStringConvertible {
    /// The key's value, as ``StorageValue`` describes it.
    public var description: String { value.description }
}
