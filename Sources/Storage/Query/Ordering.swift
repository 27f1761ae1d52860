/// One sort key of a query: `.ascending("name")`, `.descending("age")`, or a field inside a
/// column's JSON text, `.ascending(Column("address", "city"))`.
///
/// Nulls sort first in ascending order, as in SQLite. Ties are broken by the primary key, so
/// every backend returns records in the same order. A nested field sorts by the value
/// ``Column/init(_:_:)`` describes (missing or JSON `null` as null, numbers before text), with
/// the same rules.
///
/// # For backends
///
/// An ordering with a non-empty ``path`` sorts by a field inside the column's JSON text, not by
/// the column: read it with ``value(from:)`` (``PredicateEvaluator/precedes(_:_:_:)`` does). The
/// store hands such an ordering only to a backend whose transactions answer `true` to
/// ``BackendReadTransaction/ordersByNestedFields``, and refuses the query with
/// ``StorageError/Code/invalidQuery`` on any other, so a backend written before nested fields
/// never sorts by the wrong value.
public struct Ordering: Sendable, Hashable {
    /// The column sorted on.
    public var column: String
    /// Whether larger values come first.
    public var isDescending: Bool
    /// The keys of the field inside the column's JSON text sorted on, outermost first; empty to
    /// sort on the column itself.
    public var path: [String] = []

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

    /// Smaller values of a column, or of a field inside its JSON text, first:
    /// `.ascending(Column("address", "city"))`.
    /// - Parameter column: the column or nested field.
    /// - Returns: the ordering; nulls (and missing fields) sort first.
    public static func ascending(_ column: Column) -> Ordering {
        var ordering = Ordering(column: column.name)
        ordering.path = column.path
        return ordering
    }

    /// Larger values of a column, or of a field inside its JSON text, first.
    /// - Parameter column: the column or nested field.
    /// - Returns: the ordering; nulls (and missing fields) sort last.
    public static func descending(_ column: Column) -> Ordering {
        var ordering = Ordering(column: column.name, descending: true)
        ordering.path = column.path
        return ordering
    }

    /// The value a record sorts by, given its value of ``column``: that value itself, or the
    /// field at ``path`` inside its JSON text.
    /// - Parameter columnValue: the record's value of ``column``.
    /// - Returns: the value to compare (with `StorageValue.compare`).
    public func value(from columnValue: StorageValue) -> StorageValue {
        path.isEmpty ? columnValue : NestedField.value(in: columnValue, at: path)
    }
}
