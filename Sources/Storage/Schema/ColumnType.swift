/// The declared type of a column: one of SQLite's storage classes, or `untyped` for a column
/// whose values were never seen with a type (it keeps whatever it is given).
public enum ColumnType: String, Sendable, Hashable, CaseIterable {
    case integer
    case real
    case text
    case blob
    case untyped

    /// The type a column of this type takes when a value of `other` arrives: integer to real
    /// when fractions appear, integer to text when text does (an integer's digits are exact
    /// text). Nothing else changes type on its own: a real column stays real, since SQLite would
    /// shorten its values to 15 digits as text.
    /// - Parameter other: the type of an arriving value.
    /// - Returns: the column's type after the value arrives.
    public func widened(toHold other: ColumnType) -> ColumnType {
        if self == other { return self }
        if self == .integer && (other == .real || other == .text) { return other }
        return self
    }
}
