internal import CSQLite
import Storage

/// An SQLite result code: the `underlying` error of a `StorageError` raised by the SQLite backend.
///
/// Clients switch on `StorageError.code`; to tell engine failures apart, a `switch` or a `catch`
/// matches the constants (``busy``, ``constraintUnique``, …), as in SQLite's own semantics: a
/// primary code matches itself and each of its extended codes, an extended code only itself.
///
/// ```swift
/// do {
///     try store.save(record)
/// } catch SQLiteResultCode.constraintUnique {
///     // SQLITE_CONSTRAINT_UNIQUE
/// } catch SQLiteResultCode.constraint {
///     // any other SQLITE_CONSTRAINT
/// }
/// ```
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

    /// Whether this is a primary code (`SQLITE_BUSY`), not an extended one
    /// (`SQLITE_BUSY_SNAPSHOT`).
    public var isPrimary: Bool { extendedCode == resultCode }

    /// The primary code of this one: ``busy`` for ``busySnapshot``, a primary code itself.
    public var primary: SQLiteResultCode { SQLiteResultCode(resultCode) }

    /// Whether `code` matches `pattern`: a primary pattern matches each code with that primary
    /// code (``busy`` matches ``busySnapshot``), an extended one only an equal code.
    /// - Parameters:
    ///   - pattern: the code to match.
    ///   - code: the code an SQLite call returned.
    /// - Returns: whether the code matches.
    public static func ~= (pattern: SQLiteResultCode, code: SQLiteResultCode) -> Bool {
        pattern.isPrimary ? pattern.extendedCode == code.resultCode : pattern.extendedCode == code.extendedCode
    }

    /// Whether `error` is a result code, or a `StorageError` whose underlying error is one, that
    /// matches `pattern` as a code does.
    /// - Parameters:
    ///   - pattern: the code to match.
    ///   - error: the error thrown.
    /// - Returns: whether the error's code matches.
    public static func ~= (pattern: SQLiteResultCode, error: any Error) -> Bool {
        guard let code = error as? SQLiteResultCode ?? (error as? StorageError)?.underlying as? SQLiteResultCode
        else { return false }
        return pattern ~= code
    }

    /// The primary and extended codes and SQLite's explanation of the code (`sqlite3_errstr`).
    public var description: String {
        let text = sqlite3_errstr(extendedCode).map { String(cString: $0) } ?? "unknown error"
        return "SQLite result code \(resultCode) (extended \(extendedCode)): \(text)"
    }
}
