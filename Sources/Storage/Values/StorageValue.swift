public import Foundation

/// The common currency between ``ObjectStore`` and every backend: SQLite's five storage classes.
///
/// Every column value a backend stores or returns is one of these. Ordering follows SQLite:
/// `null` sorts first, then numbers (integers and reals compared by value), then text (compared
/// byte-wise as UTF-8), then blobs (compared byte-wise).
///
/// Two values are equal (`==`, and so in a `Set` or as a dictionary key) when they are of the same
/// storage class and compare equal with SQLite's rules: text by its UTF-8 bytes (`"caf\u{E9}"` and
/// `"cafe\u{301}"` are different values, though Swift's `String` calls them equal), blobs by their
/// bytes, reals as numbers (`-0.0 == 0.0`; NaN equals NaN, so that equality is reflexive). An
/// integer and a real are never equal here, whatever their values: `==` says whether two values
/// would be stored the same. Primary keys and indexed values, where SQLite does call `1` and `1.0`
/// equal, are compared through ``StorageKey``.
public enum StorageValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// `true` for `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The storage class of this value, or `nil` for `.null`.
    public var columnType: ColumnType? {
        switch self {
        case .null: return nil
        case .integer: return .integer
        case .real: return .real
        case .text: return .text
        case .blob: return .blob
        }
    }
}

extension StorageValue: CustomStringConvertible {
    /// The value for messages: `NULL`, a number, text as a quoted Swift literal, or a blob's size.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value): return String(reflecting: value)
        case .blob(let value): return "<\(value.count) bytes>"
        }
    }
}

extension StorageValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
    /// `nil` is ``StorageValue/null``.
    /// - Parameter nilLiteral: the `nil` literal.
    public init(nilLiteral: ()) { self = .null }
    /// An integer literal is ``StorageValue/integer(_:)``.
    /// - Parameter value: the literal.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A floating-point literal is ``StorageValue/real(_:)``.
    /// - Parameter value: the literal.
    public init(floatLiteral value: Double) { self = .real(value) }
    /// A string literal is ``StorageValue/text(_:)``.
    /// - Parameter value: the literal.
    public init(stringLiteral value: String) { self = .text(value) }
    /// `true` and `false` are stored as the integers 1 and 0, as the row encoder stores a `Bool`.
    /// - Parameter value: the literal.
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}
