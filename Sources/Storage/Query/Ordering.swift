/// One sort key of a query: `.ascending("name")`, `.descending("age")`.
///
/// Nulls sort first in ascending order, as in SQLite. Ties are broken by the primary key, so
/// every backend returns records in the same order.
public struct Ordering: Sendable, Hashable {
    /// The column sorted on.
    public var column: String
    /// Whether larger values come first.
    public var isDescending: Bool

    /// Creates a sort key.
    /// - Parameters:
    ///   - column: the column's name.
    ///   - descending: whether larger values come first.
    public init(column: String, descending: Bool = false) {
        self.column = column
        self.isDescending = descending
    }

    /// Smaller values first.
    /// - Parameter column: the column's name.
    /// - Returns: the ordering; nulls sort first.
    public static func ascending(_ column: String) -> Ordering { Ordering(column: column) }
    /// Larger values first.
    /// - Parameter column: the column's name.
    /// - Returns: the ordering; nulls sort last.
    public static func descending(_ column: String) -> Ordering { Ordering(column: column, descending: true) }
}
