internal import CSQLite

/// An SQLite result code: the `underlying` error of a `StorageError` raised by the SQLite backend.
///
/// Result codes stay inside this module; clients switch on `StorageError.code` and may print this
/// value for diagnostics.
public struct SQLiteResultCode: Error, Sendable, Hashable, CustomStringConvertible {
    /// The extended result code, for example `SQLITE_CONSTRAINT_UNIQUE` (2067).
    public let extendedCode: Int32

    /// The primary result code, for example `SQLITE_CONSTRAINT` (19).
    public var resultCode: Int32 { extendedCode & 0xFF }

    /// Creates a result code from an extended (or primary) SQLite result code.
    /// - Parameter extendedCode: the code an SQLite call returned.
    public init(_ extendedCode: Int32) {
        self.extendedCode = extendedCode
    }

    /// The primary and extended codes and SQLite's explanation of the code (`sqlite3_errstr`).
    public var description: String {
        let text = sqlite3_errstr(extendedCode).map { String(cString: $0) } ?? "unknown error"
        return "SQLite result code \(resultCode) (extended \(extendedCode)): \(text)"
    }
}
