internal import CSQLite
import Storage

/// The rowids an `UPDATE` changes, gathered by `sqlite3_update_hook` while it runs: SQLite calls
/// it once a row, as it writes the row, where a `RETURNING` clause keeps every row in a table of
/// its own until the statement ends (docs/BENCHMARKS.md, "Update-where").
final class SQLiteUpdatedRowIDs {
    /// The rowids, in the order SQLite updated them.
    var rowIDs: [Int64] = []
    /// The table whose rows are counted (a trigger or cascade may change others), as SQLite
    /// names it to the hook: the name in the statement.
    let table: [CChar]

    init(table: String) {
        self.table = Array(table.utf8CString)
    }
}

extension SQLiteConnection {
    /// Runs `body` with an update hook that records in `rowIDs` every row of its table that an
    /// `UPDATE` changes, and removes the hook after it, whatever `body` does.
    func collectingUpdatedRowIDs<Result>(_ rowIDs: SQLiteUpdatedRowIDs, _ body: () throws -> Result) rethrows -> Result
    {
        let context = Unmanaged.passUnretained(rowIDs).toOpaque()
        sqlite3_update_hook(
            handle,
            { context, operation, _, table, rowID in
                guard operation == SQLITE_UPDATE, let context, let table else { return }
                let collected = Unmanaged<SQLiteUpdatedRowIDs>.fromOpaque(context).takeUnretainedValue()
                let same = collected.table.withUnsafeBufferPointer { strcmp($0.baseAddress!, table) == 0 }
                if same { collected.rowIDs.append(rowID) }
            },
            context
        )
        defer { sqlite3_update_hook(handle, nil, nil) }
        return try withExtendedLifetime(rowIDs) { try body() }
    }

    /// Whether `schema`'s primary key is its table's rowid, as the tables this backend creates
    /// declare an integer key (`"id" INTEGER PRIMARY KEY`, with or without `AUTOINCREMENT`), so
    /// the rowids an update hook reports are the records' keys. Read from the table's SQL in
    /// `sqlite_master`: a table made otherwise (`INT PRIMARY KEY`, `INTEGER PRIMARY KEY DESC`,
    /// `WITHOUT ROWID`, a key of two columns) answers `false`.
    func keyIsRowID(_ schema: CollectionSchema) throws -> Bool {
        guard schema.column(named: schema.primaryKey)?.type == .integer else { return false }
        let sql = try withStatement(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
            collection: schema.name
        ) { statement -> String? in
            try statement.bind(.text(schema.name), at: 1)
            guard try statement.step(collection: schema.name) else { return nil }
            if case .text(let text) = statement.row.value(at: 0) { return text }
            return nil
        }
        guard let sql, !sql.uppercased().contains("WITHOUT ROWID") else { return false }
        let declared = quote(schema.primaryKey) + " INTEGER PRIMARY KEY"
        return [",", ")", " AUTOINCREMENT,", " AUTOINCREMENT)"].contains { sql.contains(declared + $0) }
    }
}
