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
}
