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

    /// A stable name for the index within its collection. Collection names have no `:`; column
    /// names may have any character, so `\`, `,` and `:` in them are escaped with `\`, which
    /// keeps two different column lists from giving one name (and leaves the names of columns
    /// without those characters as they always were).
    /// - Parameter collection: the collection the index belongs to.
    /// - Returns: the index's name, the same in every backend.
    public func name(in collection: String) -> String {
        let escaped = columns.map { column -> String in
            guard column.unicodeScalars.contains(where: { $0 == "\\" || $0 == "," || $0 == ":" }) else { return column }
            var result = ""
            for scalar in column.unicodeScalars {
                if scalar == "\\" || scalar == "," || scalar == ":" { result.unicodeScalars.append("\\") }
                result.unicodeScalars.append(scalar)
            }
            return result
        }
        return (isUnique ? "storage_unique:" : "storage_index:") + collection + ":" + escaped.joined(separator: ",")
    }
}
