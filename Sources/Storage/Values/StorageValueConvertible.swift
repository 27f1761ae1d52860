public import Foundation

/// A value that can stand for a stored value: a primary key passed to `fetch(_:id:)`, or the
/// right-hand side of a query predicate.
///
/// Every type the row encoder maps conforms, and its `storageValue` is exactly what the encoder
/// stores for it (the encoder uses these conformances), so a comparison with a stored value of
/// that type is exact on every backend. Raw-value enums compare through ``Column``'s operators
/// for `RawRepresentable`.
public protocol StorageValueConvertible {
    /// The stored form of this value.
    var storageValue: StorageValue { get }
}

extension StorageValue: StorageValueConvertible {
    /// The value itself.
    public var storageValue: StorageValue { self }
}

extension BinaryInteger {
    /// An integer's stored form: `.integer` when it fits 64 signed bits, as the row encoder
    /// stores it. A larger `UInt64` (which the encoder refuses to store) becomes the nearest
    /// `.real`, so that it still orders correctly against every stored number.
    var integerStorageValue: StorageValue { Int64(exactly: self).map(StorageValue.integer) ?? .real(Double(self)) }
}

extension Int: StorageValueConvertible {
    /// The integer as ``StorageValue/integer(_:)``, as the row encoder stores it.
    public var storageValue: StorageValue { integerStorageValue }
}

extension Int8: StorageValueConvertible {
    /// The integer as ``StorageValue/integer(_:)``, as the row encoder stores it.
    public var storageValue: StorageValue { integerStorageValue }
}

extension Int16: StorageValueConvertible {
    /// The integer as ``StorageValue/integer(_:)``, as the row encoder stores it.
    public var storageValue: StorageValue { integerStorageValue }
}

extension Int32: StorageValueConvertible {
    /// The integer as ``StorageValue/integer(_:)``, as the row encoder stores it.
    public var storageValue: StorageValue { integerStorageValue }
}

extension Int64: StorageValueConvertible {
    /// The integer as ``StorageValue/integer(_:)``, as the row encoder stores it.
    public var storageValue: StorageValue { .integer(self) }
}

extension UInt: StorageValueConvertible {
    /// The integer as ``StorageValue/integer(_:)``, as the row encoder stores it.
    public var storageValue: StorageValue { integerStorageValue }
}

extension UInt8: StorageValueConvertible {
    /// The integer as ``StorageValue/integer(_:)``, as the row encoder stores it.
    public var storageValue: StorageValue { integerStorageValue }
}

extension UInt16: StorageValueConvertible {
    /// The integer as ``StorageValue/integer(_:)``, as the row encoder stores it.
    public var storageValue: StorageValue { integerStorageValue }
}

extension UInt32: StorageValueConvertible {
    /// The integer as ``StorageValue/integer(_:)``, as the row encoder stores it.
    public var storageValue: StorageValue { integerStorageValue }
}

extension UInt64: StorageValueConvertible {
    /// The integer as ``StorageValue/integer(_:)``, as the row encoder stores it.
    public var storageValue: StorageValue { integerStorageValue }
}

extension Double: StorageValueConvertible {
    /// The Double as ``StorageValue/real(_:)``.
    public var storageValue: StorageValue { .real(self) }
}

extension Float: StorageValueConvertible {
    /// Floats are stored widened to a `Double`, as the row encoder stores them.
    public var storageValue: StorageValue { .real(Double(self)) }
}

extension Bool: StorageValueConvertible {
    /// `true` as the integer 1, `false` as 0, as the row encoder stores a `Bool`.
    public var storageValue: StorageValue { .integer(self ? 1 : 0) }
}

extension String: StorageValueConvertible {
    /// The string as ``StorageValue/text(_:)``.
    public var storageValue: StorageValue { .text(self) }
}

extension Substring: StorageValueConvertible {
    /// The substring as ``StorageValue/text(_:)``.
    public var storageValue: StorageValue { .text(String(self)) }
}

extension UUID: StorageValueConvertible {
    /// UUIDs are stored as their canonical upper-case text, as the reflective mapping stores them.
    public var storageValue: StorageValue { .text(uuidString) }
}

extension Date: StorageValueConvertible {
    /// Dates are stored as real seconds since 1970, as the reflective mapping stores them. That
    /// Double holds a Unix timestamp exactly, but not the low bits of every `Date` (which counts
    /// seconds since 2001): from 1985 on a date reads back within half a unit in its last place
    /// (2⁻²³ s until 2038), and about half of today's dates differ from the original by that much.
    public var storageValue: StorageValue { .real(timeIntervalSince1970) }
}

extension Data: StorageValueConvertible {
    /// The bytes as ``StorageValue/blob(_:)``.
    public var storageValue: StorageValue { .blob(self) }
}

extension URL: StorageValueConvertible {
    /// URLs are stored as their absolute string, as the reflective mapping stores them.
    public var storageValue: StorageValue { .text(absoluteString) }
}

extension Decimal: StorageValueConvertible {
    /// Decimals are stored as their exact decimal text (`"12.34"`), as the reflective mapping
    /// stores them; text compares by its bytes, so use `==`, `!=` and `in` rather than ordering.
    public var storageValue: StorageValue { .text(description) }
}

extension Optional: StorageValueConvertible where Wrapped: StorageValueConvertible {
    /// The wrapped value's stored form, or ``StorageValue/null`` for `nil`.
    public var storageValue: StorageValue { self?.storageValue ?? .null }
}
