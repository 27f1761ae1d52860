public import Foundation

/// A value that can stand for a stored value: a primary key passed to `fetch(_:id:)`, or the
/// right-hand side of a query predicate.
public protocol StorageValueConvertible {
    /// The stored form of this value.
    var storageValue: StorageValue { get }
}

extension StorageValue: StorageValueConvertible {
    public var storageValue: StorageValue { self }
}

extension Int: StorageValueConvertible {
    public var storageValue: StorageValue { .integer(Int64(self)) }
}

extension Int64: StorageValueConvertible {
    public var storageValue: StorageValue { .integer(self) }
}

extension Int32: StorageValueConvertible {
    public var storageValue: StorageValue { .integer(Int64(self)) }
}

extension Double: StorageValueConvertible {
    public var storageValue: StorageValue { .real(self) }
}

extension Bool: StorageValueConvertible {
    public var storageValue: StorageValue { .integer(self ? 1 : 0) }
}

extension String: StorageValueConvertible {
    public var storageValue: StorageValue { .text(self) }
}

extension Substring: StorageValueConvertible {
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
    public var storageValue: StorageValue { .blob(self) }
}

extension Optional: StorageValueConvertible where Wrapped: StorageValueConvertible {
    public var storageValue: StorageValue { self?.storageValue ?? .null }
}
