/// A secondary index over one or more columns, optionally unique.
///
/// ```swift
/// static let indexes: [IndexDefinition] = [.init(["age"]), .init(["email"], unique: true)]
/// ```
public struct IndexDefinition: Sendable, Hashable {
    /// The indexed columns, in order.
    public var columns: [String]
    /// Whether two records may not share the same values in these columns. As in SQLite, records
    /// whose indexed value is null never conflict.
    public var isUnique: Bool

    /// Creates an index definition.
    /// - Parameters:
    ///   - columns: the indexed column names, in order.
    ///   - unique: whether the index forbids duplicates.
    public init(_ columns: [String], unique: Bool = false) {
        self.columns = columns
        self.isUnique = unique
    }

    /// A stable name for the index within its collection, unambiguous because identifiers may
    /// not contain `:` or `,`.
    /// - Parameter collection: the collection the index belongs to.
    /// - Returns: the index's name, the same in every backend.
    public func name(in collection: String) -> String {
        (isUnique ? "storage_unique:" : "storage_index:") + collection + ":" + columns.joined(separator: ",")
    }
}
