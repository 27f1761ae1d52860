/// What a Swift type may do to the stored type of a column it shares with earlier versions.
extension Session {
    /// Checks that every column `requested` shares with `stored` keeps its type or widens it
    /// safely, so records written before stay readable by the type that wrote them.
    ///
    /// Safe: the same type, an untyped side, integer → real (SQLite's own widening) and
    /// integer → text (digits are exact; an integer property still reads them). Anything else (a
    /// `value: Int` that becomes `value: Data`, a `String` that becomes an `Int`, a real that
    /// becomes text, whose digits SQLite would shorten to 15) is refused before anything is
    /// written: the first save would succeed and every later read of either version would fail.
    /// - Throws: ``StorageError`` with code `.schemaMismatch` naming the collection, the column, the
    ///   stored type and the new one.
    static func checkTypeChanges(
        of requested: CollectionSchema,
        against stored: CollectionSchema,
        typeName: String
    ) throws {
        for column in requested.columns {
            guard let old = stored.column(named: column.name)?.type else { continue }
            if isSafeChange(from: old, to: column.type) {
                try checkKeyType(column.name, old, column.type, in: stored)
                continue
            }
            throw StorageError(
                .schemaMismatch,
                "collection \(Identifier.quoted(stored.name)) stores column \(Identifier.quoted(column.name))"
                    + " as \(old), but \(typeName) now writes it as \(column.type); only integer → real and"
                    + " integer → text widen a column (use a new property name, or migrate the data)",
                collection: stored.name,
                column: column.name
            )
        }
    }

    /// Refuses widening a numeric primary key column to text: the key column keeps its type on
    /// every backend (SQLite and LMDB never retype it, since that would change which keys are one
    /// record), so text keys arriving at a numeric key column would be stored differently by
    /// different engines. (Numbers arriving at a text key column are stored as their digits.)
    /// - Throws: ``StorageError`` with code `.schemaMismatch` naming the collection and the key.
    private static func checkKeyType(
        _ column: String,
        _ old: ColumnType,
        _ new: ColumnType,
        in stored: CollectionSchema
    ) throws {
        guard isNumber(old), new == .text, Identifier.folded(column) == Identifier.folded(stored.primaryKey) else {
            return
        }
        throw StorageError(
            .schemaMismatch,
            "collection \(Identifier.quoted(stored.name)) is keyed by \(Identifier.quoted(column)) as \(old),"
                + " and a primary key keeps its type: text keys cannot join it",
            collection: stored.name,
            column: column
        )
    }

    private static func isNumber(_ type: ColumnType) -> Bool { type == .integer || type == .real }

    private static func isSafeChange(from old: ColumnType, to new: ColumnType) -> Bool {
        if old == new || old == .untyped || new == .untyped { return true }
        return old == .integer && (new == .real || new == .text)
    }

    /// Checks that the columns of an untyped batch can go into the stored columns of the same
    /// name: the same type, integer widened to real or text, integers in a real column, and
    /// integers and reals in a text column (as their exact digits). Anything else (text or a blob
    /// arriving in a real column, a blob in any other column) would need a column holding two
    /// kinds of value, which PostgreSQL's typed columns cannot, and turning a real column into
    /// text would shorten its values to 15 digits on SQLite: it is refused on every backend before
    /// anything of the batch is written.
    /// - Throws: ``StorageError`` with code `.schemaMismatch` naming the collection, the column,
    ///   the stored type and the batch's.
    static func checkBatchTypes(of columns: [ColumnDefinition], against stored: CollectionSchema) throws {
        for column in columns {
            guard let old = stored.column(named: column.name)?.type else { continue }
            if fitsBatch(old, column.type) {
                try checkKeyType(column.name, old, column.type, in: stored)
                continue
            }
            throw StorageError(
                .schemaMismatch,
                "collection \(Identifier.quoted(stored.name)) stores column \(Identifier.quoted(column.name))"
                    + " as \(old), but the rows hold \(column.type) values there; only integer → real and"
                    + " integer → text widen a column",
                collection: stored.name,
                column: column.name
            )
        }
    }

    private static func fitsBatch(_ old: ColumnType, _ new: ColumnType) -> Bool {
        if old == new || old == .untyped || new == .untyped { return true }
        switch (old, new) {
        case (.integer, .real), (.integer, .text), (.real, .integer), (.text, .integer), (.text, .real): return true
        default: return false
        }
    }
}
