internal import CSQLite
import Storage

extension SQLiteResultCode {
    /// The store's error code for this engine result code.
    var storageErrorCode: StorageError.Code {
        // `Self.`: a result code is an `Error`, which `StorageError.Code`'s constants match too.
        switch self {
        case Self.constraint:
            return .constraintViolation
        case Self.busy, Self.locked:
            return .busy
        case Self.corrupt, Self.notADatabase:
            return .corrupt
        case Self.ioError, Self.full:
            return .io
        case Self.readOnly where isPrimary:
            // "attempt to write a readonly database": a write refused by a read-only connection.
            // Its extended codes (a WAL that cannot be set up or recovered read-only, a folder
            // that cannot hold the `-wal` and `-shm` files) are failures to open.
            return .readOnly
        case Self.cannotOpen, Self.permission, Self.readOnly:
            return .cannotOpen
        case Self.mismatch:
            // Only raised when a non-integer value is given for an integer primary key.
            return .invalidKey
        default:
            return .engine
        }
    }
}

extension StorageError {
    /// The error for a failed SQLite call, with the connection's message and the context given.
    /// - Parameters:
    ///   - code: the result code the call returned.
    ///   - database: the connection, whose `sqlite3_errmsg` explains the failure.
    ///   - context: what was being done, e.g. "cannot insert a record".
    ///   - collection: the collection involved, if any.
    ///   - key: the key involved, if any.
    ///   - path: the database's path, if known.
    /// - Returns: the error, its code mapped from SQLite's result code.
    static func sqlite(
        _ code: SQLiteResultCode,
        database: OpaquePointer?,
        _ context: String,
        collection: String? = nil,
        key: StorageValue? = nil,
        path: String? = nil
    ) -> StorageError {
        var resultCode = code
        if let database, code.isPrimary {
            // A primary code: ask the connection for the extended one.
            let extended = SQLiteResultCode(sqlite3_extended_errcode(database))
            if code ~= extended { resultCode = extended }
        }
        let detail: String
        if let database, let message = sqlite3_errmsg(database) {
            detail = String(cString: message)
        } else {
            detail = sqlite3_errstr(code.extendedCode).map { String(cString: $0) } ?? "unknown error"
        }
        var message = "\(context): \(detail)"
        if let collection { message += " (collection \(Identifier.quoted(collection)))" }
        let code = resultCode.storageErrorCode
        var path = path
        if path == nil, code == .corrupt || code == .io || code == .cannotOpen, let database,
            let name = sqlite3_db_filename(database, "main"), name.pointee != 0
        {
            // A damaged, unreadable or unopenable store (a `-wal` or `-shm` file that cannot be
            // opened, say) names its file, wherever the failure was found.
            path = String(cString: name)
        }
        return StorageError(code, message, collection: collection, key: key, path: path, underlying: resultCode)
    }
}
