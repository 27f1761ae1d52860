internal import CSQLite
import Foundation
import Storage

/// The current row of a stepping statement, read by column position. Valid only until the
/// statement is stepped or reset.
struct SQLiteRow: StorageRow {
    /// The `sqlite3_stmt` positioned on the row.
    let statement: OpaquePointer

    func value(at index: Int) -> StorageValue {
        let column = Int32(truncatingIfNeeded: index)
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            // column_text before column_bytes, so the byte count is that of the UTF-8 text.
            guard let text = sqlite3_column_text(statement, column) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let bytes = sqlite3_column_blob(statement, column)
            let count = Int(sqlite3_column_bytes(statement, column))
            guard let bytes, count > 0 else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default:
            return .null
        }
    }

    // The typed reads take the column's value object once (`sqlite3_column_value`) and ask it
    // for its type and payload: each `sqlite3_column_*` call finds the column again and checks
    // for a failed allocation. The value is used only here, on the connection's one thread
    // (connections are opened without SQLite's mutex and used by one thread at a time), and
    // reads exactly what `sqlite3_column_type` and `sqlite3_column_text` and the others read.

    func text(at index: Int) -> String? {
        guard let value = sqlite3_column_value(statement, Int32(truncatingIfNeeded: index)),
            sqlite3_value_type(value) == SQLITE_TEXT
        else { return nil }
        // value_text before value_bytes, so the byte count is that of the UTF-8 text.
        guard let text = sqlite3_value_text(value) else { return "" }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func integer(at index: Int) -> Int64? {
        guard let value = sqlite3_column_value(statement, Int32(truncatingIfNeeded: index)),
            sqlite3_value_type(value) == SQLITE_INTEGER
        else { return nil }
        return sqlite3_value_int64(value)
    }

    func real(at index: Int) -> Double? {
        guard let value = sqlite3_column_value(statement, Int32(truncatingIfNeeded: index)),
            sqlite3_value_type(value) == SQLITE_FLOAT
        else { return nil }
        return sqlite3_value_double(value)
    }

    func blob(at index: Int) -> Data? {
        guard let value = sqlite3_column_value(statement, Int32(truncatingIfNeeded: index)),
            sqlite3_value_type(value) == SQLITE_BLOB
        else { return nil }
        let bytes = sqlite3_value_blob(value)
        let count = Int(sqlite3_value_bytes(value))
        guard let bytes, count > 0 else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}
