internal import CSQLite
import Foundation
import Storage

/// A prepared statement, owned by the connection that prepared it and used on its thread only.
final class SQLiteStatement {
    /// The `sqlite3_stmt`.
    let handle: OpaquePointer
    /// Whether the statement is being stepped. A cached statement in use (a scan whose callback
    /// runs the same query again) is not handed out twice; a fresh one is prepared instead.
    var isInUse = false
    /// The schema version of a snapshot the statement last stepped in inside a pinned read, and
    /// its count of automatic re-preparations (`SQLITE_STMTSTATUS_REPREPARE`) after that step:
    /// while the count stays the same, the statement is still compiled for that schema version,
    /// and a step that does not re-prepare it ran in a snapshot of that version (SQLite checks
    /// the schema cookie a statement was compiled with at the start of each step, and compiles
    /// it again when it moved). See `SQLiteStorageBackend.readSingleQuery`.
    var verified: (schemaVersion: Int64, reprepares: Int32)?

    /// How many times SQLite compiled the statement again by itself (a schema change, or
    /// `sqlite3_expire`).
    var reprepareCount: Int32 { sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0) }

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The connection's handle, for error messages.
    var database: OpaquePointer? { sqlite3_db_handle(handle) }

    /// Binds `value` to the parameter at `index` (1-based).
    ///
    /// This is the hot path of bulk writes: text and blobs are bound straight from their storage
    /// and copied once by SQLite.
    @inline(__always)
    func bind(_ value: StorageValue, at index: Int32) throws {
        let returned: Int32
        switch value {
        case .null:
            returned = sqlite3_bind_null(handle, index)
        case .integer(let number):
            returned = sqlite3_bind_int64(handle, index, number)
        case .real(let number):
            returned = sqlite3_bind_double(handle, index, number)
        case .text(var text):
            returned = text.withUTF8 { bytes in
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    // A null pointer would bind NULL; bind a static empty string instead.
                    return sqlite3_bind_text(handle, index, "", 0, nil)
                }
                return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { pointer in
                    sqlite3_bind_text64(
                        handle,
                        index,
                        pointer,
                        UInt64(bytes.count),
                        storage_sqlite_transient(),
                        UInt8(SQLITE_UTF8)
                    )
                }
            }
        case .blob(let data):
            if data.isEmpty {
                // A zero-length blob, not NULL.
                returned = sqlite3_bind_zeroblob(handle, index, 0)
            } else {
                returned = data.withUnsafeBytes { bytes in
                    sqlite3_bind_blob64(
                        handle,
                        index,
                        bytes.baseAddress,
                        UInt64(bytes.count),
                        storage_sqlite_transient()
                    )
                }
            }
        }
        let code = SQLiteResultCode(returned)
        if code == .tooBig {
            // Refused before anything is written, as SQLite would refuse to read it back.
            let limit = database.map { sqlite3_limit($0, SQLITE_LIMIT_LENGTH, -1) } ?? 0
            throw StorageError(
                .limitExceeded,
                "a value of \(value.byteCount) bytes passes SQLite's limit of \(limit) bytes for a text or"
                    + " blob (SQLITE_LIMIT_LENGTH)"
            )
        }
        if code != .ok {
            throw StorageError.sqlite(code, database: database, "cannot bind parameter \(index)")
        }
    }

    /// Binds `values` to the parameters 1, 2, ...
    func bind(_ values: [StorageValue]) throws {
        var index: Int32 = 1
        for value in values {
            try bind(value, at: index)
            index += 1
        }
    }

    /// Advances the statement.
    /// - Returns: `true` when a row is available, `false` when the statement is done.
    /// - Throws: `StorageError` for an engine failure.
    @inline(__always)
    func step(_ context: @autoclosure () -> String = "cannot run a statement", collection: String? = nil) throws -> Bool
    {
        let code = SQLiteResultCode(sqlite3_step(handle))
        switch code {
        case .row:
            return true
        case .done:
            return false
        default:
            throw StorageError.sqlite(code, database: database, context(), collection: collection)
        }
    }

    /// Makes the statement ready for its next use and releases bound values.
    @inline(__always)
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Makes the statement ready for its next use, keeping the bound values: for a statement
    /// whose every parameter is bound again before each step (a record writer), clearing them
    /// costs about as much as binding them.
    @inline(__always)
    func resetKeepingBindings() {
        sqlite3_reset(handle)
    }

    /// The current row.
    var row: SQLiteRow { SQLiteRow(statement: handle) }
}

extension StorageValue {
    /// The bytes of a text or blob, for messages.
    fileprivate var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .blob(let data): data.count
        default: 8
        }
    }
}
