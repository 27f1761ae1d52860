import Storage

extension SQLiteConnection {
    /// The schema of table `name` as the catalog describes it, or `nil` when there is no such table.
    ///
    /// Read from SQLite's own catalog (table names are bound, never spliced into SQL), so a table
    /// created by another process or an earlier run is understood. The catalog has no notion of
    /// an optional property, so every column but the primary key reads as nullable.
    func readSchema(of name: String) throws -> CollectionSchema? {
        // SQLite's internal tables (sqlite_sequence, ...) are never collections.
        if name.lowercased().hasPrefix("sqlite_") { return nil }
        let isTable = try integer(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
            [.text(name)],
            collection: name
        )
        guard let isTable, isTable > 0 else { return nil }

        var columns: [ColumnDefinition] = []
        var primaryKey: String?
        try withStatement("SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid", collection: name) {
            statement in
            try statement.bind(.text(name), at: 1)
            while try statement.step(collection: name) {
                let row = statement.row
                guard case .text(let columnName) = row.value(at: 0) else { continue }
                var declared = ""
                if case .text(let text) = row.value(at: 1) { declared = text }
                var isKey = false
                if case .integer(let position) = row.value(at: 2), position > 0 {
                    isKey = true
                    if position == 1 { primaryKey = columnName }
                }
                columns.append(
                    ColumnDefinition(name: columnName, type: Self.columnType(declared: declared), isNullable: !isKey)
                )
            }
        }

        var indexNames: [String] = []
        try withStatement(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? COLLATE NOCASE ORDER BY rowid",
            collection: name
        ) { statement in
            try statement.bind(.text(name), at: 1)
            while try statement.step(collection: name) {
                if case .text(let indexName) = statement.row.value(at: 0) { indexNames.append(indexName) }
            }
        }
        var indexes: [IndexDefinition] = []
        for indexName in indexNames {
            let isUnique: Bool
            if indexName.hasPrefix(Self.uniqueIndexPrefix) {
                isUnique = true
            } else if indexName.hasPrefix(Self.indexPrefix) {
                isUnique = false
            } else {
                continue  // not one of ours (e.g. the automatic index of a text primary key)
            }
            var indexColumns: [String] = []
            try withStatement("SELECT name FROM pragma_index_info(?) ORDER BY seqno", collection: name) { statement in
                try statement.bind(.text(indexName), at: 1)
                while try statement.step(collection: name) {
                    if case .text(let column) = statement.row.value(at: 0) { indexColumns.append(column) }
                }
            }
            if !indexColumns.isEmpty {
                indexes.append(IndexDefinition(indexColumns, unique: isUnique))
            } else if let nested = IndexDefinition.nested(named: indexName) {
                // An expression index (pragma_index_info names no column): a nested field's.
                indexes.append(nested)
            }
        }
        return CollectionSchema(
            name: name,
            columns: columns,
            primaryKey: primaryKey ?? "rowid",
            indexes: indexes
        )
    }

    /// The prefix of the names of the non-unique indexes this backend creates.
    static let indexPrefix = String(IndexDefinition(["x"]).name(in: "").prefix { $0 != ":" }) + ":"
    /// The prefix of the names of the unique indexes this backend creates.
    static let uniqueIndexPrefix = String(IndexDefinition(["x"], unique: true).name(in: "").prefix { $0 != ":" }) + ":"

    /// The column type for a declared SQL type, by SQLite's affinity rules.
    static func columnType(declared: String) -> ColumnType {
        let type = declared.uppercased()
        if type.isEmpty { return .untyped }
        if type.contains("INT") { return .integer }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return .text }
        if type.contains("BLOB") { return .blob }
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return .real }
        return .untyped  // NUMERIC affinity keeps integers and reals apart, as an untyped column does
    }

    /// The declared SQL type for a column type; empty for an untyped column (no affinity).
    static func declaredType(_ type: ColumnType) -> String {
        switch type {
        case .integer: return "INTEGER"
        case .real: return "REAL"
        case .text: return "TEXT"
        case .blob: return "BLOB"
        case .untyped: return ""
        }
    }
}
