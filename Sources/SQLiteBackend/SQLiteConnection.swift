internal import CSQLite
import Storage

/// One SQLite connection with its prepared-statement cache.
///
/// `@unchecked Sendable` because the backend moves connections between threads, and the invariant
/// that makes this safe is that a connection is only ever used by one thread at a time: the writer
/// only while its mutex is held, a reader only while it is checked out of the pool (the pool hands
/// each idle connection to one caller). Connections are opened with `SQLITE_OPEN_NOMUTEX`, which
/// relies on exactly that.
final class SQLiteConnection: @unchecked Sendable {
    /// How many prepared statements a connection keeps.
    static let statementCacheCapacity = 256

    /// The `sqlite3` handle.
    let handle: OpaquePointer
    /// The path given to SQLite, for error messages.
    let path: String
    private var statements: [String: SQLiteStatement] = [:]
    /// The SQL text of scans already compiled on this connection, by shape (see `SQLiteScanShape`).
    var scanSQL = SQLiteTextCache<SQLiteScanShape>()
    /// The SQL text of record writers' upserts already made on this connection (see
    /// `SQLiteUpsertShape`): making it quoted and joined every name on every single save.
    var upsertSQL = SQLiteTextCache<SQLiteUpsertShape>()
    /// The key look-ups already compiled on this connection, by collection, with their statements.
    var lookupSQL: [String: SQLiteKeyLookup] = [:]
    /// The key look-up this connection ran last: a look-up of the same collection as the one
    /// before (the common case) finds it without hashing the name.
    var lastLookup: SQLiteKeyLookup?
    /// The schema a read transaction on this connection last looked up.
    var lastSchema: SQLiteSchemaMemo?
    /// The schema version the last pinned read on this connection saw: a single-query read
    /// assumes it and checks it with its statement (see `SQLiteStorageBackend.readSingleQuery`).
    var lastSchemaVersion: Int64?

    /// Opens a connection and applies the settings every connection needs.
    /// - Parameters:
    ///   - path: the path SQLite opens (already checked and created by the backend).
    ///   - flags: `sqlite3_open_v2` flags.
    ///   - busyTimeout: how long to wait for another process's lock.
    ///   - events: where waits for a lock and slow statements are reported (a busy handler and
    ///     SQLite's profile callback), or `nil` for none (`sqlite3_busy_timeout`).
    /// - Throws: `StorageError` (`.cannotOpen`, `.corrupt`, `.io`, ...) naming the path when the
    ///   database cannot be opened or a setting cannot be applied.
    init(path: String, flags: Int32, busyTimeout: Duration, events: StoreEventReporter? = nil) throws {
        var database: OpaquePointer?
        let code = SQLiteResultCode(sqlite3_open_v2(path, &database, flags, nil))
        guard code == .ok, let database else {
            let error = StorageError.sqlite(code, database: database, "cannot open the database", path: path)
            sqlite3_close_v2(database)
            throw error
        }
        self.handle = database
        self.path = path
        sqlite3_extended_result_codes(database, 1)
        try check(storage_sqlite_disable_dqs(database), "cannot disable double-quoted strings")
        try check(storage_sqlite_enable_defensive(database), "cannot enable defensive mode")
        let (seconds, attoseconds) = busyTimeout.components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        let timeout =
            milliseconds.overflow
            ? Int32.max : Int32(clamping: milliseconds.partialValue + attoseconds / 1_000_000_000_000_000)
        if let events {
            reportEvents(to: events, busyTimeout: timeout)
        } else {
            try check(sqlite3_busy_timeout(database, timeout), "cannot set the busy timeout")
        }
        try check(SQLiteExactSum.register(on: database), "cannot register the exact sum of reals")
        busyMilliseconds = timeout
        try execute("PRAGMA foreign_keys = OFF")
    }

    /// The busy timeout the connection was opened with, in milliseconds.
    private var busyMilliseconds: Int32 = 0
    /// The busy handler's and the profile callback's context, when events are reported; the
    /// connection keeps it alive for as long as SQLite may call them.
    var eventContext: SQLiteEventContext?

    /// Sets whether a lock held elsewhere is waited for (the busy timeout) or answered at once
    /// with `SQLITE_BUSY` (a read on the caller's task, `readSingleQueryWithoutWaiting`).
    func waitsWhenBusy(_ waits: Bool) {
        if let eventContext {
            eventContext.busyTimeout = waits ? busyMilliseconds : 0
        } else {
            sqlite3_busy_timeout(handle, waits ? busyMilliseconds : 0)
        }
    }

    deinit {
        // Statements first, so the connection really closes instead of becoming a zombie.
        statements.removeAll()
        lookupSQL.removeAll()
        lastLookup = nil
        schemaVersionPin = nil
        sqlite3_close_v2(handle)
    }

    /// Throws for a result code other than `SQLITE_OK`.
    func check(_ code: Int32, _ context: @autoclosure () -> String, collection: String? = nil) throws {
        let code = SQLiteResultCode(code)
        if code != .ok {
            throw StorageError.sqlite(code, database: handle, context(), collection: collection, path: path)
        }
    }

    /// Prepares a statement. `sql` must be exactly one statement.
    func prepare(_ sql: String, persistent: Bool = false, collection: String? = nil) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        var sql = sql
        let code = sql.withUTF8 { bytes in
            SQLiteResultCode(
                bytes.withMemoryRebound(to: CChar.self) { text in
                    sqlite3_prepare_v3(
                        handle,
                        text.baseAddress,
                        Int32(clamping: text.count),
                        persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0,
                        &statement,
                        nil
                    )
                }
            )
        }
        guard code == .ok, let statement else {
            throw StorageError.sqlite(
                code == .ok ? .misuse : code,
                database: handle,
                "cannot prepare a statement",
                collection: collection
            )
        }
        return SQLiteStatement(handle: statement)
    }

    /// A statement for `sql` from the cache, or a new one that is then cached. A cached statement
    /// that is in use (stepping in an enclosing scan) is not shared: a fresh one is returned.
    /// The statement that reads the schema version and pins a read transaction's snapshot (see
    /// `SQLiteStorageBackend.read`), kept apart from the cache: finding it there by its text
    /// hashed the text on every read transaction.
    private var schemaVersionPin: SQLiteStatement?

    /// The cached `PRAGMA schema_version` statement for pinning a read transaction.
    func schemaVersionStatement() throws -> SQLiteStatement {
        if let pin = schemaVersionPin, !pin.isInUse { return pin }
        let statement = try cachedStatement(Self.schemaVersionSQL)
        schemaVersionPin = statement
        return statement
    }

    func cachedStatement(_ sql: String, collection: String? = nil) throws -> SQLiteStatement {
        if let statement = statements[sql] {
            if !statement.isInUse { return statement }
            return try prepare(sql, collection: collection)
        }
        let statement = try prepare(sql, persistent: true, collection: collection)
        if statements.count >= Self.statementCacheCapacity,
            let victim = statements.first(where: { !$0.value.isInUse })?.key
        {
            statements[victim] = nil
        }
        statements[sql] = statement
        return statement
    }

    /// Runs `body` with the cached statement for `sql`, then resets it and clears its bindings.
    func withStatement<Result>(
        _ sql: String,
        collection: String? = nil,
        _ body: (SQLiteStatement) throws -> Result
    ) throws -> Result {
        let statement = try cachedStatement(sql, collection: collection)
        statement.isInUse = true
        defer {
            statement.reset()
            statement.isInUse = false
        }
        return try body(statement)
    }

    /// Runs one statement without parameters to completion (DDL, transaction control, pragmas).
    /// - Parameters:
    ///   - sql: the statement.
    ///   - cached: keep the prepared statement, for statements run in every transaction.
    ///   - collection: the collection named in an error.
    /// - Throws: `StorageError` mapped from SQLite's result code.
    func execute(_ sql: String, cached: Bool = false, collection: String? = nil) throws {
        guard cached else {
            let statement = try prepare(sql, collection: collection)
            while try statement.step("cannot run '\(sql.prefix(60))'", collection: collection) {}
            return
        }
        try withStatement(sql, collection: collection) { statement in
            while try statement.step("cannot run '\(sql)'", collection: collection) {}
        }
    }

    /// Runs a statement that returns one integer (a pragma or an aggregate).
    func integer(_ sql: String, _ arguments: [StorageValue] = [], collection: String? = nil) throws -> Int64? {
        try withStatement(sql, collection: collection) { statement in
            try statement.bind(arguments)
            guard try statement.step(collection: collection) else { return nil }
            if case .integer(let value) = statement.row.value(at: 0) { return value }
            return nil
        }
    }

    /// Whether a transaction is open on this connection.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The rowid of the last row inserted on this connection.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The number of rows the last statement changed.
    var changes: Int64 { Int64(sqlite3_changes(handle)) }

    static let schemaVersionSQL = "PRAGMA schema_version"

    /// The schema cookie, which every schema change (by any connection) increments.
    func schemaVersion() throws -> Int64 {
        try integer(Self.schemaVersionSQL) ?? 0
    }

    /// Rolls back the open transaction, if any. Used on a path that is already failing, so a
    /// failure to roll back is not reported over the original error.
    func rollbackIfNeeded() {
        guard isInTransaction else { return }
        _ = try? execute("ROLLBACK", cached: true)
    }
}

/// SQL text made once per connection and shape, at most `SQLiteConnection.statementCacheCapacity`
/// of them: when full, the cache is emptied and fills again with what is in use.
struct SQLiteTextCache<Shape: Hashable> {
    private var texts: [Shape: String] = [:]

    /// The text made before for `shape`, if any.
    subscript(shape: Shape) -> String? { texts[shape] }

    /// Keeps `text` for `shape`, emptying the cache first when it is full.
    mutating func store(_ text: String, for shape: Shape) {
        if texts.count >= SQLiteConnection.statementCacheCapacity { texts.removeAll() }
        texts[shape] = text
    }

    /// The text for `shape`, made by `make` and kept when it is not known yet.
    mutating func text(for shape: Shape, orMake make: () -> String) -> String {
        if let known = texts[shape] { return known }
        let text = make()
        store(text, for: shape)
        return text
    }
}
