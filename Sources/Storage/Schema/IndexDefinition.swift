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
    /// The keys of a field inside the one indexed column's JSON text, outermost first: an index
    /// on `Column(columns[0], path…)` (``init(nested:_:)``). Empty for an index on the columns.
    public var path: [String] = []
    /// Whether this is a full-text index (``fullText(_:)``) over its columns rather than an index
    /// of their values.
    public var isFullText = false

    /// A full-text index over text columns, for `ObjectStore.search(_:matching:where:limit:)`:
    /// each record's words in `columns` (folded for case and diacritics) are indexed in the
    /// store's own collections, on every engine alike, and kept in step with every write in the
    /// same transaction. A type declares at most one. No engine sees it as an index of values.
    ///
    /// ```swift
    /// static let indexes: [IndexDefinition] = [.fullText(["title", "genre"])]
    /// ```
    /// - Parameter columns: the indexed columns, at least one.
    /// - Returns: the index definition.
    public static func fullText(_ columns: [String]) -> IndexDefinition {
        var index = IndexDefinition(columns)
        index.isFullText = true
        return index
    }

    /// Creates an index on a field inside a column's JSON text (a nested `Codable` value):
    /// `IndexDefinition(nested: "address", "city")` serves `Column("address", "city")` in
    /// filters and orderings. SQLite creates it as an expression index on the field; engines
    /// without expression indexes (LMDB, the file archive, PostgreSQL here, memory) accept it
    /// and leave it out, answering the same queries without it. Never unique, so it does not
    /// change what any engine accepts. The path follows ``Column``'s rules (at most
    /// ``Column/maximumPathDepth`` keys, none holding a `"`, a `\` or a control character);
    /// another is `StorageError.Code.schemaMismatch` when the collection is prepared.
    /// - Parameters:
    ///   - column: the text column holding the JSON.
    ///   - path: the keys of the field, at least one.
    public init(nested column: String, _ path: String...) {
        self.columns = [column]
        self.isUnique = false
        self.path = path
    }

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
        let keys = path.map { ":" + Self.escaped($0) }.joined()
        let prefix = isFullText ? "storage_fulltext:" : isUnique ? "storage_unique:" : "storage_index:"
        return prefix + collection + ":" + escaped.joined(separator: ",")
            + keys
    }

    /// `text` with `\`, `,` and `:` escaped by a `\`, as `name(in:)` writes names and keys.
    private static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "\\" || $0 == "," || $0 == ":" }) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == "," || scalar == ":" { result.unicodeScalars.append("\\") }
            result.unicodeScalars.append(scalar)
        }
        return result
    }

    /// The column and path of a nested index from its name (`name(in:)`'s, after the
    /// collection's `prefix:collection:`), or `nil` when `name` has no path. For backends that
    /// read their indexes back from the engine's catalog.
    /// - Parameter name: the index's name, whole.
    /// - Returns: the nested index, or `nil`.
    package static func nested(named name: String) -> IndexDefinition? {
        // Split at unescaped `:`: the prefix, the collection (which has no `:`), the column,
        // then one part per key.
        var parts: [String] = [""]
        var escaping = false
        for scalar in name.unicodeScalars {
            if escaping {
                parts[parts.count - 1].unicodeScalars.append(scalar)
                escaping = false
            } else if scalar == "\\" {
                escaping = true
            } else if scalar == ":" {
                parts.append("")
            } else {
                parts[parts.count - 1].unicodeScalars.append(scalar)
            }
        }
        guard parts.count >= 4, parts[0] == "storage_index" else { return nil }
        var index = IndexDefinition([parts[2]])
        index.path = Array(parts[3...])
        return index
    }
}
