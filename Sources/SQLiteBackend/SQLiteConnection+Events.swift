internal import CSQLite
import Storage

/// What a connection's busy handler and profile callback need: SQLite calls them with a pointer
/// to it. Owned by the connection (`SQLiteConnection.eventContext`), which outlives its callbacks.
///
/// `@unchecked Sendable`: `busyTimeout` is only read and written by the thread using the
/// connection (SQLite calls the busy handler on the thread running the statement).
final class SQLiteEventContext: @unchecked Sendable {
    let reporter: StoreEventReporter
    let path: String
    /// How long a lock held elsewhere is waited for, in milliseconds; 0 answers at once.
    var busyTimeout: Int32

    init(reporter: StoreEventReporter, path: String, busyTimeout: Int32) {
        self.reporter = reporter
        self.path = path
        self.busyTimeout = busyTimeout
    }

    /// SQLite's own waits between tries (`sqliteDefaultBusyCallback`), in milliseconds, and
    /// their running totals.
    private static let delays: [Int32] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100]
    private static let totals: [Int32] = [0, 1, 3, 8, 18, 33, 53, 78, 103, 128, 178, 228]

    /// The busy handler: reports the first wait of a statement as a `conflict`, then waits as
    /// `sqlite3_busy_timeout` would. Returns whether SQLite tries again.
    func busy(_ count: Int32) -> Int32 {
        let timeout = busyTimeout
        guard timeout > 0 else { return 0 }
        if count == 0 {
            reporter.report(
                StoreEvent(
                    .conflict,
                    backend: "SQLite",
                    attempt: 1,
                    code: .busy,
                    reason: "database is locked by another connection (SQLITE_BUSY), waiting up to \(timeout) ms",
                    location: path
                )
            )
        }
        var delay: Int32
        let prior: Int32
        if count < Self.delays.count {
            delay = Self.delays[Int(count)]
            prior = Self.totals[Int(count)]
        } else {
            delay = Self.delays[Self.delays.count - 1]
            let beyond = Int64(count) - Int64(Self.delays.count - 1)
            prior = Int32(clamping: Int64(Self.totals[Self.totals.count - 1]) + Int64(delay) * beyond)
        }
        if Int64(prior) + Int64(delay) > Int64(timeout) {
            delay = timeout - prior
            if delay <= 0 { return 0 }
        }
        sqlite3_sleep(delay)
        return 1
    }
}

extension SQLiteConnection {
    /// Installs the busy handler that reports waits for another process's lock (in place of
    /// `sqlite3_busy_timeout`, waiting as it does), and, when `reporter` has a
    /// `slowStatementThreshold`, SQLite's profile callback, which reports the statements that
    /// took at least that long (`sqlite3_sql`: the text with `?` parameters, never the values).
    func reportEvents(to reporter: StoreEventReporter, busyTimeout: Int32) {
        let context = SQLiteEventContext(reporter: reporter, path: path, busyTimeout: busyTimeout)
        eventContext = context
        let pointer = Unmanaged.passUnretained(context).toOpaque()
        sqlite3_busy_handler(
            handle,
            { pointer, count in
                guard let pointer else { return 0 }
                return Unmanaged<SQLiteEventContext>.fromOpaque(pointer).takeUnretainedValue().busy(count)
            },
            pointer
        )
        guard reporter.slowStatementThreshold != nil else { return }
        sqlite3_trace_v2(
            handle,
            UInt32(SQLITE_TRACE_PROFILE),
            { _, pointer, statement, nanoseconds in
                guard let pointer, let statement, let nanoseconds else { return 0 }
                let context = Unmanaged<SQLiteEventContext>.fromOpaque(pointer).takeUnretainedValue()
                let reporter = context.reporter
                guard let threshold = reporter.slowStatementThreshold, reporter.isListening else { return 0 }
                let elapsed = Duration.nanoseconds(nanoseconds.load(as: Int64.self))
                guard elapsed >= threshold else { return 0 }
                let text = sqlite3_sql(OpaquePointer(statement)).map { String(cString: $0) } ?? "a statement"
                reporter.report(
                    StoreEvent(
                        .slowStatement,
                        backend: "SQLite",
                        duration: elapsed,
                        statement: text,
                        location: context.path
                    )
                )
                return 0
            },
            pointer
        )
    }
}
