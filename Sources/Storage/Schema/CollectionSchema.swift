/// The shape of a collection as a backend stores it: its name, columns, primary key and indexes.
public struct CollectionSchema: Sendable, Hashable {
    /// The name of the hidden Int64 key column of collections whose records have no key of their own.
    public static let autoKeyColumn = "_key"

    /// The collection's name (a table, a named database, a folder).
    public var name: String
    /// The columns, primary key included, in declaration order.
    public var columns: [ColumnDefinition]
    /// The name of the primary-key column.
    public var primaryKey: String
    /// Secondary indexes.
    public var indexes: [IndexDefinition]

    /// Creates a schema.
    /// - Parameters:
    ///   - name: the collection's name.
    ///   - columns: the columns, in order.
    ///   - primaryKey: the name of the primary key's column.
    ///   - indexes: the secondary indexes.
    public init(name: String, columns: [ColumnDefinition], primaryKey: String, indexes: [IndexDefinition] = []) {
        self.name = name
        self.columns = columns
        self.primaryKey = primaryKey
        self.indexes = indexes
    }

    /// Whether the backend assigns keys itself (the key column is `autoKeyColumn`).
    public var hasAutoKey: Bool { primaryKey == Self.autoKeyColumn }

    /// The column with the given name, if any.
    /// - Parameter name: the name looked up, exactly (not folded).
    /// - Returns: the column, or `nil`.
    public func column(named name: String) -> ColumnDefinition? {
        columns.first { $0.name == name }
    }

    /// The index of the column with the given name, if any.
    /// - Parameter name: the name looked up, exactly (not folded).
    /// - Returns: its position in ``columns``, or `nil`.
    public func columnIndex(named name: String) -> Int? {
        columns.firstIndex { $0.name == name }
    }

    /// The definition of the primary-key column.
    public var primaryKeyColumn: ColumnDefinition? { column(named: primaryKey) }

    /// The message for two spellings of one column name in one schema, record or batch.
    package static func twinNames(_ first: String, _ second: String) -> String {
        let kind =
            Identifier.spelledAlike(first, second)
            ? "column \(Identifier.quoted(first)) appears twice"
            : "columns \(Identifier.spelling(first)) and \(Identifier.spelling(second)) are one name"
        return kind + " (names are compared ignoring ASCII case and Unicode normalization)"
    }

    /// The first column of `requested` that this schema has under another spelling (differing
    /// only in ASCII case or Unicode normalization); such a column cannot be added, since names
    /// are compared ignoring both.
    /// - Parameter requested: the schema a caller asks for.
    /// - Returns: the stored and requested spelling of the first such column, or `nil`.
    public func caseConflict(with requested: CollectionSchema) -> (stored: String, requested: String)? {
        var stored: [String: String] = [:]
        for column in columns { stored[Identifier.folded(column.name)] = column.name }
        for column in requested.columns {
            if let existing = stored[Identifier.folded(column.name)], !Identifier.spelledAlike(existing, column.name) {
                return (existing, column.name)
            }
        }
        return nil
    }

    /// This schema merged with `requested`: columns that `requested` adds are appended, integer
    /// columns that `requested` declares real are widened, missing indexes are added. Nothing is
    /// ever removed, so records written by other versions of a type keep their data.
    /// - Parameter requested: the schema a caller asks for.
    /// - Returns: the schema to store.
    public func merged(with requested: CollectionSchema) -> CollectionSchema {
        var result = self
        for column in requested.columns {
            if let index = result.columnIndex(named: column.name) {
                result.columns[index].type = result.columns[index].type.widened(toHold: column.type)
                if result.columns[index].type == .untyped && column.type != .untyped {
                    result.columns[index].type = column.type
                }
            } else {
                var added = column
                added.isNullable = true
                result.columns.append(added)
            }
        }
        for index in requested.indexes where !result.indexes.contains(index) {
            result.indexes.append(index)
        }
        return result
    }

    /// Checks that every name in the schema is a valid identifier and that the shape is
    /// consistent (see `validateShape()`).
    /// - Parameter allowingReservedName: whether the collection may be one of the store's own,
    ///   whose names start with `_`.
    /// - Throws: ``StorageError`` with code `.invalidIdentifier` or `.schemaMismatch`.
    public func validate(allowingReservedName: Bool = false) throws {
        try Identifier.validateCollection(name, allowingReserved: allowingReservedName)
        for column in columns {
            // `_key` is only ever the auto-assigned key, never a property or a JSON key.
            let isAutoKey = column.name == Self.autoKeyColumn && hasAutoKey
            try Identifier.validateColumn(column.name, in: name, allowingReserved: isAutoKey)
        }
        try validateShape()
    }

    /// The most columns a collection may have, on every backend: PostgreSQL's limit (a table
    /// holds at most 1,600 columns; SQLite's `SQLITE_MAX_COLUMN` is 2,000), enforced everywhere so
    /// a store can be copied to any engine.
    public static let maximumColumnCount = 1_600

    /// Checks the shape alone, whatever the names: at most `maximumColumnCount` columns, no
    /// column twice (ignoring ASCII case), the key is a column, every index names existing
    /// columns. Backends call this before DDL.
    /// - Throws: ``StorageError`` with code `.limitExceeded` or `.schemaMismatch`.
    public func validateShape() throws {
        guard columns.count <= Self.maximumColumnCount else {
            throw StorageError(
                .limitExceeded,
                "the collection would have \(columns.count) columns; a collection holds at most"
                    + " \(Self.maximumColumnCount) on every backend (PostgreSQL's limit, the lowest of the engines)",
                collection: name
            )
        }
        var seen: [String: String] = [:]
        for column in columns {
            if let earlier = seen.updateValue(column.name, forKey: Identifier.folded(column.name)) {
                throw StorageError(
                    .schemaMismatch,
                    Self.twinNames(earlier, column.name),
                    collection: name,
                    column: column.name
                )
            }
        }
        guard column(named: primaryKey) != nil else {
            throw StorageError(
                .schemaMismatch,
                "primary key '\(primaryKey)' is not a column of the collection",
                collection: name,
                column: primaryKey
            )
        }
        for index in indexes {
            guard !index.columns.isEmpty else {
                throw StorageError(.schemaMismatch, "an index must name at least one column", collection: name)
            }
            for column in index.columns where self.column(named: column) == nil {
                throw StorageError(
                    .schemaMismatch,
                    "index names column \(Identifier.quoted(column)), which the collection does not have",
                    collection: name,
                    column: column
                )
            }
            if !index.path.isEmpty { try validateNestedIndex(index) }
        }
    }

    /// Refuses, with `.schemaMismatch`, a nested index (``IndexDefinition/init(nested:_:)``)
    /// that no query could use alike on every engine: on more than one column, unique, on a
    /// column that is not text, or with a path ``Column`` refuses.
    private func validateNestedIndex(_ index: IndexDefinition) throws {
        let column = index.columns[0]
        func refuse(_ reason: String) -> StorageError {
            StorageError(
                .schemaMismatch,
                "index on a field of column \(Identifier.spelling(column)): " + reason,
                collection: name,
                column: column
            )
        }
        guard index.columns.count == 1, !index.isUnique else {
            throw refuse("an index on a nested field names one column and is not unique")
        }
        if let type = self.column(named: column)?.type, type != .text, type != .untyped {
            throw refuse("the column holds \(type) values, not JSON text")
        }
        guard index.path.count <= Column.maximumPathDepth else {
            throw refuse("the path has \(index.path.count) keys; at most \(Column.maximumPathDepth)")
        }
        for key in index.path
        where key.utf8.count > Column.maximumKeyLength
            || key.unicodeScalars.contains(where: { $0 == "\"" || $0 == "\\" || $0.value < 0x20 })
        {
            throw refuse(
                "the key \(Identifier.quoted(key)) is longer than 1,024 bytes or holds a quote, a backslash or a control character"
            )
        }
    }
}
