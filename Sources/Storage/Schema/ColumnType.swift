/// The declared type of a column: one of SQLite's storage classes, or `untyped` for a column
/// whose values were never seen with a type (it keeps whatever it is given).
public enum ColumnType: String, Sendable, Hashable, CaseIterable {
    case integer
    case real
    case text
    case blob
    case untyped

    /// Whether a column of this type is widened to `other` when a value of `other` arrives
    /// (integer to real when fractions appear; nothing else changes type on its own).
    /// - Parameter other: the type of an arriving value.
    /// - Returns: the column's type after the value arrives.
    public func widened(toHold other: ColumnType) -> ColumnType {
        if self == other { return self }
        if self == .integer && other == .real { return .real }
        return self
    }
}
