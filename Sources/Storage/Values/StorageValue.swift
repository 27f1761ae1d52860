public import Foundation

/// The common currency between `ObjectStore` and every backend: SQLite's five storage classes.
///
/// Every column value a backend stores or returns is one of these. Ordering follows SQLite:
/// `null` sorts first, then numbers (integers and reals compared by value), then text (compared
/// byte-wise as UTF-8), then blobs (compared byte-wise).
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
    public init(nilLiteral: ()) { self = .null }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}
