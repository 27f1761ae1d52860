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
    public init(column: String, descending: Bool = false) {
        self.column = column
        self.isDescending = descending
    }

    /// Smaller values first.
    public static func ascending(_ column: String) -> Ordering { Ordering(column: column) }
    /// Larger values first.
    public static func descending(_ column: String) -> Ordering { Ordering(column: column, descending: true) }
}
