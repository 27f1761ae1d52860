extension Session {
    /// Refuses, with `.invalidQuery` naming the column and key, a query on nested fields that
    /// some engine could not answer as the others do: a path on a column that is not text (it
    /// holds no JSON), an empty, too deep or too long path, a key with a character that JSON
    /// text may write escaped (`"`, `\`, a control character: SQLite 3.40 compares a path's key
    /// with a key as written, escapes and all, so such a key would match there and not in
    /// Swift), a nested node around anything but a term, or an ordering by a nested field for a
    /// backend that does not say it sorts by one (`BackendReadTransaction.ordersByNestedFields`).
    /// Checked by the store, so every engine, a backend of another package too, refuses alike.
    static func checkNestedFields(
        _ predicate: StoragePredicate?,
        _ ordering: [Ordering],
        _ schema: CollectionSchema,
        reader: any BackendReadTransaction
    ) throws {
        try predicate?.forEachTerm { term in
            guard case .nested(let path, let inner) = term else { return }
            switch inner {
            case .compare(let column, _, _), .isNull(let column), .like(let column, _), .in(let column, _):
                try checkPath(path, on: column, schema)
            default:
                throw StorageError(
                    .invalidQuery,
                    "a nested field's condition must be a comparison, a null test, a LIKE or an IN on one column,"
                        + " found \(inner)",
                    collection: schema.name
                )
            }
        }
        for sortKey in ordering where !sortKey.path.isEmpty {
            try checkPath(sortKey.path, on: sortKey.column, schema)
            guard reader.ordersByNestedFields else {
                throw StorageError(
                    .invalidQuery,
                    "this backend cannot order by a nested field (\(Identifier.spelling(sortKey.column))"
                        + " at \(sortKey.path)): its transactions do not declare ordersByNestedFields",
                    collection: schema.name,
                    column: sortKey.column
                )
            }
        }
    }

    static func checkPath(_ path: [String], on column: String, _ schema: CollectionSchema) throws {
        func refuse(_ reason: String) -> StorageError {
            StorageError(
                .invalidQuery,
                "nested field of column \(Identifier.spelling(column)) in '\(schema.name)': " + reason,
                collection: schema.name,
                column: column
            )
        }
        if let definition = schema.column(named: column), definition.type != .text, definition.type != .untyped {
            throw refuse("the column holds \(definition.type) values, not JSON text")
        }
        guard !path.isEmpty else { throw refuse("the path has no keys") }
        guard path.count <= Column.maximumPathDepth else {
            throw refuse("the path has \(path.count) keys; at most Column.maximumPathDepth, \(Column.maximumPathDepth)")
        }
        for key in path {
            guard key.utf8.count <= Column.maximumKeyLength else {
                throw refuse(
                    "a key is \(key.utf8.count) bytes long; at most Column.maximumKeyLength,"
                        + " \(Column.maximumKeyLength)"
                )
            }
            if let bad = key.unicodeScalars.first(where: { $0 == "\"" || $0 == "\\" || $0.value < 0x20 }) {
                throw refuse(
                    "the key \(Identifier.quoted(key)) holds U+\(String(bad.value, radix: 16, uppercase: true)),"
                        + " which a key may not (a quote, a backslash or a control character)"
                )
            }
        }
    }
}
