internal import CSQLite
import Storage

extension SQLiteResultCode {
    /// The store's error code for this engine result code.
    var storageErrorCode: StorageError.Code {
        switch resultCode {
        case SQLITE_CONSTRAINT:
            return .constraintViolation
        case SQLITE_BUSY, SQLITE_LOCKED:
            return .busy
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return .corrupt
        case SQLITE_IOERR, SQLITE_FULL:
            return .io
        case SQLITE_READONLY where extendedCode == SQLITE_READONLY:
            // "attempt to write a readonly database": a write refused by a read-only connection.
            // Its extended codes (a WAL that cannot be set up or recovered read-only, a folder
            // that cannot hold the `-wal` and `-shm` files) are failures to open.
            return .readOnly
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_READONLY:
            return .cannotOpen
        case SQLITE_MISMATCH:
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
        _ code: Int32,
        database: OpaquePointer?,
        _ context: String,
        collection: String? = nil,
        key: StorageValue? = nil,
        path: String? = nil
    ) -> StorageError {
        var resultCode = SQLiteResultCode(code)
        if let database, resultCode.resultCode == code {
            // A primary code: ask the connection for the extended one.
            let extended = sqlite3_extended_errcode(database)
            if extended & 0xFF == code { resultCode = SQLiteResultCode(extended) }
        }
        let detail: String
        if let database, let message = sqlite3_errmsg(database) {
            detail = String(cString: message)
        } else {
            detail = sqlite3_errstr(code).map { String(cString: $0) } ?? "unknown error"
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
