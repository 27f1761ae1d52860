internal import CPostgreSQL
import Foundation
import Storage

/// One libpq connection with its prepared-statement cache.
///
/// `@unchecked Sendable` because the backend moves connections between threads; the invariant
/// that makes this safe is that a connection is only ever used by one thread at a time: it is
/// either idle in the pool (touched by nobody) or checked out by exactly one transaction.
final class PostgreSQLConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    let endpoint: PostgreSQLEndpoint
    /// Prepared statement names by SQL text.
    private var prepared: [String: String] = [:]
    /// The number in the next prepared statement's name: never reused, so that a statement
    /// forgotten here but not deallocated on the server cannot clash with a new one.
    private var nextStatement = 0
    /// The single-row stream whose rows are still being read, if any: a statement issued while it
    /// runs first copies its remaining rows into memory.
    private var activeStream: PostgreSQLStream?
    /// The cursor stream whose next `FETCH` is in flight, if any: a statement issued meanwhile
    /// first reads that batch, which the stream keeps.
    private var activeCursor: PostgreSQLCursorStream?
    /// Set when libpq reports the connection unusable; such a connection is never pooled again.
    private(set) var isBroken = false
    /// A `BEGIN` not sent yet: it goes with the next statement, in one round trip (pipeline
    /// mode), and is dropped when the transaction ends before any statement.
    private var pendingBegin: String?
    /// The statement sent right after `pendingBegin`, before the transaction's first statement
    /// takes its snapshot (a write transaction's `LOCK TABLE`), if any.
    private var pendingLock: String?
    /// A `COMMIT` sent without waiting for its answer (a read's, in pipeline mode), read before
    /// the next statement: by then it has arrived, so no round trip is spent waiting for it.
    private var unreadCommit = false

    /// Connects to the server `url` names; with `defaultIsolation` (`SERIALIZABLE` or
    /// `REPEATABLE READ`), a statement run outside a transaction block runs at that level.
    /// - Throws: `StorageError` with code `.unavailable` when the server cannot be reached within
    ///   `connectTimeout` or is not accepting connections now (the message names the host and
    ///   port), `.permissionDenied` when it refuses the password or the role (or asks for a
    ///   password none was given for), `.cannotOpen` when it refuses the connection for good (a
    ///   missing database, TLS verification). See `connectionFailure`.
    init(
        url: String,
        endpoint: PostgreSQLEndpoint,
        connectTimeout: Duration,
        statementTimeout: Duration?,
        defaultIsolation: String? = nil
    ) throws {
        self.endpoint = endpoint
        // Counted in whole seconds, and at least 2, as libpq counts its connect_timeout.
        let seconds = max(2, Int((Double(connectTimeout.components.seconds) + 0.999).rounded(.down)))
        let keywords = ["dbname", "connect_timeout", "fallback_application_name", "client_encoding"]
        let values = [url, String(seconds), "swift-storage", "UTF8"]
        let connection = Self.withCStrings(keywords) { keywordPointers in
            Self.withCStrings(values) { valuePointers in
                PQconnectStartParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection else {
            throw StorageError(.unavailable, "cannot connect to PostgreSQL at \(endpoint.server): out of memory")
        }
        // Verbose messages carry the server's SQLSTATE, which classifies the failure.
        PQsetErrorVerbosity(connection, PQERRORS_VERBOSE)
        let outcome = Self.finishConnecting(connection, seconds: seconds)
        guard outcome == .made else {
            let error = Self.connectionFailure(connection, outcome, endpoint: endpoint, seconds: seconds)
            PQfinish(connection)
            throw error
        }
        PQsetErrorVerbosity(connection, PQERRORS_DEFAULT)
        handle = connection
        // Server notices (and the notice of a server shutting down) are not printed on stderr.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        // A cursor's query is planned for its whole result, as the same query run on its own
        // (the default, 0.1, prefers plans that return the first rows soon).
        var setup = "SET TIME ZONE 'UTC'; SET lock_timeout = 0; SET cursor_tuple_fraction = 1"
        if let statementTimeout {
            let milliseconds = max(
                1,
                statementTimeout.components.seconds * 1000 + statementTimeout.components.attoseconds
                    / 1_000_000_000_000_000
            )
            setup += "; SET statement_timeout = \(milliseconds)"
        }
        if let defaultIsolation {
            setup += "; SET default_transaction_isolation = '" + defaultIsolation.lowercased() + "'"
        }
        try execute(setup)
    }

    deinit {
        PQfinish(handle)
    }

    private static func withCStrings<Result>(
        _ strings: [String],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result
    ) -> Result {
        let copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    /// How polling a connection being made ended.
    enum ConnectOutcome: Equatable {
        case made
        /// libpq gave up; `negotiating` when it was negotiating TLS or GSS encryption with a
        /// server that answered (a certificate that fails verification, a server without TLS
        /// when it is required): a refusal for good, not a server out of reach.
        case failed(negotiating: Bool)
        /// One attempt (one address of one host) took longer than the connect timeout.
        case timedOut
    }

    /// Polls `connection` (from `PQconnectStartParams`) until it is made or fails, each attempt
    /// (a new socket, host or address) given `seconds`, as libpq's own blocking connect does.
    private static func finishConnecting(_ connection: OpaquePointer, seconds: Int) -> ConnectOutcome {
        func attempt() -> [String?] {
            [
                String(PQsocket(connection)), PQhost(connection).map { String(cString: $0) },
                PQhostaddr(connection).map { String(cString: $0) }, PQport(connection).map { String(cString: $0) },
            ]
        }
        var polling = PGRES_POLLING_WRITING
        var current = attempt()
        var deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            if polling == PGRES_POLLING_OK { return .made }
            let state = PQstatus(connection)
            if polling == PGRES_POLLING_FAILED || state == CONNECTION_BAD { return .failed(negotiating: false) }
            if attempt() != current {
                current = attempt()
                deadline = ContinuousClock.now + .seconds(seconds)
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .timedOut }
            let milliseconds = Int32(
                clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
            )
            var descriptor = pollfd(
                fd: PQsocket(connection),
                events: Int16(polling == PGRES_POLLING_READING ? POLLIN : POLLOUT),
                revents: 0
            )
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { continue }  // the deadline is checked above
            polling = PQconnectPoll(connection)
            if polling == PGRES_POLLING_FAILED {
                return .failed(negotiating: state == CONNECTION_SSL_STARTUP || state == CONNECTION_GSS_STARTUP)
            }
        }
    }

    /// The error for a connection that could not be made, classified from libpq's state and the
    /// server's SQLSTATE, never from the text of a message (servers translate it):
    ///
    /// - `.permissionDenied`: the server asked for a password and none was given
    ///   (`PQconnectionNeedsPassword`), or refused the password or the role (SQLSTATE class
    ///   `28`: `28P01`, `28000`), or the right to connect (`42501`).
    /// - `.unavailable`: no answer within the timeout, a failure without a SQLSTATE outside
    ///   TLS/GSS negotiation (refused, unreachable, cut off), or a server that cannot take the
    ///   connection now (classes `08`, `53`, `57`, `58`, `XX`: starting up, shutting down, too
    ///   many connections).
    /// - `.cannotOpen`: any other refusal by the server (a missing database, `3D000`), or a
    ///   failed TLS/GSS negotiation.
    private static func connectionFailure(
        _ connection: OpaquePointer,
        _ outcome: ConnectOutcome,
        endpoint: PostgreSQLEndpoint,
        seconds: Int
    ) -> StorageError {
        let (sqlState, reason) = serverError(in: String(cString: PQerrorMessage(connection)))
        let code: StorageError.Code
        var message = reason
        switch outcome {
        case .timedOut:
            code = .unavailable
            message =
                "the server did not answer within \(seconds) seconds" + (reason.isEmpty ? "" : " (" + reason + ")")
        case .failed where PQconnectionNeedsPassword(connection) == 1:
            code = .permissionDenied
        case .failed where sqlState.map(PostgreSQLError.Code.init(rawValue:)).map(Self.isRefusal) == true:
            code = .permissionDenied
        case .failed where sqlState.map(PostgreSQLError.Code.init(rawValue:)).map(Self.isUnavailability) == true:
            code = .unavailable
        case .failed(let negotiating):
            code = sqlState != nil || negotiating ? .cannotOpen : .unavailable
        case .made:
            code = .engine
        }
        if message.isEmpty { message = "the connection failed" }
        return StorageError(
            code,
            "cannot connect to PostgreSQL at \(endpoint.server): \(message)",
            underlying: PostgreSQLError(sqlState: sqlState, message: message)
        )
    }

    /// Whether the server refused the role: a failed authentication (class `28`) or a role
    /// without the `CONNECT` privilege (`42501`).
    /// - Parameter code: the SQLSTATE of the server's refusal.
    /// - Returns: whether it is a refusal of the role.
    private static func isRefusal(_ code: PostgreSQLError.Code) -> Bool {
        switch code {
        case PostgreSQLError.CodeClass.invalidAuthorizationSpecification, .insufficientPrivilege: true
        default: false
        }
    }

    /// Whether the server cannot take the connection now: a connection exception (`08`), too
    /// few resources (`53`, too many connections), an operator's intervention (`57`, starting up
    /// or shutting down), a system error (`58`) or an internal one (`XX`).
    /// - Parameter code: the SQLSTATE of the server's refusal.
    /// - Returns: whether trying again later may succeed.
    private static func isUnavailability(_ code: PostgreSQLError.Code) -> Bool {
        switch code {
        case PostgreSQLError.CodeClass.connectionException, PostgreSQLError.CodeClass.insufficientResources,
            PostgreSQLError.CodeClass.operatorIntervention, PostgreSQLError.CodeClass.systemError,
            PostgreSQLError.CodeClass.internalError:
            true
        default:
            false
        }
    }

    /// The SQLSTATE of the server's error in a verbose libpq message (`SEVERITY:  SQLSTATE:
    /// message`, libpq's layout, the same in every language), if there is one, and the message
    /// without the lines that only verbose messages add (`LOCATION:  function, file.c:line`).
    static func serverError(in message: String) -> (sqlState: String?, message: String) {
        var sqlState: String?
        let bytes = Array(message.utf8)
        var index = 0
        while sqlState == nil, index + 10 <= bytes.count {
            defer { index += 1 }
            guard bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == 0x20, bytes[index + 2] == 0x20 else {
                continue
            }
            let code = bytes[(index + 3)..<(index + 8)]
            guard code.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }),
                bytes[index + 8] == UInt8(ascii: ":"), bytes[index + 9] == 0x20
            else { continue }
            sqlState = String(decoding: code, as: UTF8.self)
        }
        let lines = message.split(separator: "\n").filter { line in
            // A location: its last part is `file.c:line`.
            guard let comma = line.range(of: ", ", options: .backwards) else { return true }
            let place = line[comma.upperBound...].split(separator: ":")
            return !(place.count == 2 && place[0].hasSuffix(".c") && place[1].allSatisfy(\.isNumber))
        }
        return (sqlState, lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Whether a transaction is open (or failed and not yet rolled back) on the connection.
    var isInTransaction: Bool {
        if pendingBegin != nil { return true }
        if unreadCommit { return false }  // the command in flight ends the transaction
        return PQtransactionStatus(handle) != PQTRANS_IDLE
    }

    /// Whether the transaction `begin(_:)` started has sent nothing yet: its `BEGIN` waits for
    /// its first statement.
    var hasPendingBegin: Bool { pendingBegin != nil }

    /// Whether the server has run the `BEGIN` of the transaction `begin(_:)` started: `false`
    /// while it waits to go with the first statement, and when that round trip (or reading the
    /// previous commit's answer) failed before the server answered it.
    private(set) var hasBegun = false

    /// Begins a transaction with `sql` (`BEGIN …`), sent with the transaction's first statement;
    /// `lock` (a `LOCK TABLE`, which takes no snapshot) is sent right after it.
    /// - Throws: `.connectionLost` when the answer to the previous commit shows the connection
    ///   broken.
    func begin(_ sql: String, lock: String? = nil) throws {
        hasBegun = false
        try settle()
        pendingBegin = sql
        pendingLock = lock
    }

    /// Sends the pending `BEGIN` and its lock statement, if any, in pipeline mode (which the
    /// caller entered).
    /// - Returns: how many statements it sent (0 with no pending `BEGIN`), or `nil` when sending
    ///   failed.
    private func sendPendingBeginInPipeline() -> Int? {
        guard let begin = pendingBegin else { return 0 }
        guard PQsendQueryParams(handle, begin, 0, nil, nil, nil, nil, 1) == 1 else { return nil }
        guard let lock = pendingLock else { return 1 }
        return PQsendQueryParams(handle, lock, 0, nil, nil, nil, nil, 1) == 1 ? 2 : nil
    }

    /// Prepares the connection for statements outside a transaction (each its own snapshot):
    /// reads the answer to a commit sent without waiting, and forgets the previous
    /// transaction's `hasBegun`.
    /// - Throws: `.connectionLost` when the answer to the previous commit shows the connection
    ///   broken.
    func beginAutocommit() throws {
        hasBegun = false
        try settle()
    }

    /// Commits the transaction; with `waiting: false` (a read-only transaction, whose commit
    /// cannot fail but for a lost connection) it does not wait for the answer, which the next
    /// statement reads. A transaction that ran no statement is simply forgotten.
    func commit(waiting: Bool = true) throws {
        if pendingBegin != nil {
            pendingBegin = nil
            return
        }
        guard !waiting else {
            try execute("COMMIT")
            return
        }
        try settle()
        guard PQenterPipelineMode(handle) == 1,
            PQsendQueryParams(handle, "COMMIT", 0, nil, nil, nil, nil, 1) == 1, PQpipelineSync(handle) == 1
        else { throw failure(nil, "cannot commit", collection: nil) }
        unreadCommit = true
    }

    /// Rolls the transaction back; one that ran no statement is simply forgotten.
    func rollback() throws {
        if pendingBegin != nil {
            pendingBegin = nil
            return
        }
        try execute("ROLLBACK")
    }

    /// A statement sent in a pipeline: its SQL (prepared on first use), parameters, and what
    /// its error message says.
    struct PipelinedStatement {
        let sql: String
        let parameters: PostgreSQLParameters
        let context: String
        let collection: String?
    }

    /// Runs the prepared `statements` and then `COMMIT`, in one round trip (pipeline mode), after
    /// the pending `BEGIN` if there is one: the last statements of a write transaction and its
    /// commit.
    /// - Throws: the first failing statement's error (the later ones and the commit then do not
    ///   run, and the transaction is left to roll back), or the commit's; `.connectionLost` when
    ///   the connection broke (the commit's outcome is then unknown).
    func runAndCommit(_ statements: [PipelinedStatement]) throws {
        for statement in statements {
            try statement.parameters.checkSize(statement.context, collection: statement.collection)
        }
        detachStream()
        try settle()
        let names = try statements.map { try preparedStatement($0.sql, collection: $0.collection) }
        var sent = PQenterPipelineMode(handle) == 1
        let beginStatements = sent ? sendPendingBeginInPipeline() : nil
        sent = sent && beginStatements != nil
        for (statement, name) in zip(statements, names) where sent {
            sent =
                statement.parameters.withArrays { count, values, lengths, formats in
                    PQsendQueryPrepared(handle, name, count, values, lengths, formats, 1)
                } == 1
        }
        sent = sent && PQsendQueryParams(handle, "COMMIT", 0, nil, nil, nil, nil, 1) == 1 && PQpipelineSync(handle) == 1
        guard sent else {
            isBroken = true
            throw failure(nil, statements.first?.context ?? "cannot commit", collection: statements.first?.collection)
        }
        // The commit is on its way: from now on a lost connection leaves its outcome unknown, so
        // the transaction must not be run again.
        pendingBegin = nil
        hasBegun = true
        let first = beginStatements ?? 0
        var failed: StorageError?
        try readPipeline(count: first + statements.count + 1) { index, result, status in
            guard failed == nil else { return false }
            guard status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK else { return false }
            let position = index - first
            if position < 0, let result, PQresultErrorField(result, Int32(UInt8(ascii: "C"))) != nil {
                // The server refused the BEGIN or its lock, or ended the connection before it (an idle
                // connection terminated meanwhile says so first): nothing of the pipeline ran.
                hasBegun = false
            }
            if position < 0 {
                failed = failure(result, "cannot begin a transaction", collection: statements.first?.collection)
            } else if position < statements.count {
                failed = failure(result, statements[position].context, collection: statements[position].collection)
            } else {
                failed = failure(result, "cannot commit", collection: nil)
            }
            return false
        }
        if let failed { throw failed }
    }

    /// Runs the prepared `sql` on its own, outside a transaction block: the server runs and
    /// commits it as a transaction of its own (at the connection's default isolation), in one
    /// round trip. Its parameters are the fields of the COPY binary `tuple`
    /// (`PostgreSQLParameters.forEachField(of:_:)`), pointed at where they are, then `extra`'s: a
    /// single save's record is not copied into a parameter buffer of its own. `hasBegun` is set
    /// once the statement has been sent — from then on a lost connection leaves its outcome
    /// unknown — unless the server's first answer is an error (the statement did not complete, so
    /// nothing was committed).
    /// - Returns: the rows the statement affected.
    /// - Throws: the statement's error, or the commit's (reported after the statement's own
    ///   result); `.connectionLost` when the connection broke.
    @discardableResult
    func runAlone(
        _ sql: String,
        tuple: UnsafeRawBufferPointer,
        then extra: PostgreSQLParameters,
        context: String,
        collection: String?
    ) throws -> Int {
        try extra.checkSize(context, collection: collection)
        detachStream()
        try settle()
        hasBegun = false
        let name = try preparedStatement(sql, collection: collection)
        let fields = tuple.count >= 2 ? Int(tuple.loadUnaligned(as: UInt16.self).bigEndian) : 0
        let capacity = max(fields + extra.count, 1)
        let handle = handle
        let sent = withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: capacity) { values in
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: capacity) { lengths in
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: capacity) { formats in
                    formats.initialize(repeating: 1)
                    var count = 0
                    PostgreSQLParameters.forEachField(of: tuple) { offset, length in
                        let field = length < 0 ? nil : tuple.baseAddress.map { $0 + offset }
                        values.initializeElement(at: count, to: field?.assumingMemoryBound(to: CChar.self))
                        lengths.initializeElement(at: count, to: max(length, 0))
                        count += 1
                    }
                    func send(_ extraCount: Int32) -> Int32 {
                        name.withCString { name in
                            PQsendQueryPrepared(
                                handle,
                                name,
                                Int32(count) + extraCount,
                                UnsafePointer(values.baseAddress),
                                UnsafePointer(lengths.baseAddress),
                                UnsafePointer(formats.baseAddress),
                                1
                            )
                        }
                    }
                    guard extra.count > 0 else { return send(0) }
                    return extra.withArrays { extraCount, extraValues, extraLengths, _ in
                        for index in 0..<Int(extraCount) {
                            values.initializeElement(at: count + index, to: extraValues?[index])
                            lengths.initializeElement(at: count + index, to: extraLengths?[index] ?? 0)
                        }
                        return send(extraCount)
                    }
                }
            }
        }
        guard sent == 1 else {
            isBroken = true
            throw failure(nil, context, collection: collection)
        }
        hasBegun = true
        var failed: StorageError?
        var answered = false
        var affected = 0
        while let result = PQgetResult(handle) {
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
                affected = Self.affectedRows(result)
            }
            if failed == nil && status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK {
                if !answered, PQresultErrorField(result, Int32(UInt8(ascii: "C"))) != nil {
                    // The server's error instead of the statement's completion (an idle
                    // connection the server ended says so first): the statement did not
                    // complete, so nothing was committed (a commit follows a completed statement).
                    hasBegun = false
                }
                failed = failure(result, context, collection: collection)
            }
            answered = true
            PQclear(result)
        }
        if let failed { throw failed }
        if !answered { throw failure(nil, context, collection: collection) }
        return affected
    }

    /// The rows a command affected (`PQcmdTuples`, a decimal number, empty for other commands),
    /// read without making a `String`.
    private static func affectedRows(_ result: OpaquePointer) -> Int {
        guard var digit = PQcmdTuples(result) else { return 0 }
        var rows = 0
        while digit.pointee >= 0x30 && digit.pointee <= 0x39 && rows < Int.max / 10 - 9 {
            rows = rows * 10 + Int(digit.pointee - 0x30)
            digit += 1
        }
        return rows
    }

    /// Reads the answer to a commit sent without waiting, if any: afterwards the connection is
    /// out of pipeline mode, with nothing in flight.
    /// - Throws: `.connectionLost` when the connection broke meanwhile.
    func settle() throws {
        guard unreadCommit else { return }
        unreadCommit = false
        var failed: StorageError?
        try readPipeline(count: 1) { _, result, status in
            if status != PGRES_COMMAND_OK { failed = failure(result, "cannot commit", collection: nil) }
            return false
        }
        if let failed { throw failed }
    }

    /// Sends the pending `BEGIN` and its lock statement, if any, on their own.
    private func sendPendingBegin(collection: String?) throws {
        guard let begin = pendingBegin else { return }
        // Two statements in one simple query: the lock runs only when the `BEGIN` did.
        let result = PQexec(handle, pendingLock.map { begin + "; " + $0 } ?? begin)
        defer { PQclear(result) }
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status == PGRES_COMMAND_OK else {
            throw failure(result, "cannot begin a transaction", collection: collection)
        }
        pendingBegin = nil
        hasBegun = true
    }

    /// Reads the results of `count` statements sent in pipeline mode and the sync that follows
    /// them, calling `body` with each statement's index, result and status (the result is
    /// cleared afterwards unless `body` returns `true`, keeping it), then leaves pipeline mode.
    /// - Throws: `.connectionLost` when the connection broke before the sync arrived.
    private func readPipeline(
        count: Int,
        _ body: (Int, OpaquePointer?, ExecStatusType) -> Bool
    ) throws {
        var index = 0
        var emptyInARow = 0
        while true {
            guard let result = PQgetResult(handle) else {
                // Each statement's results end with a null; two in a row mean nothing more is coming.
                emptyInARow += 1
                if emptyInARow > 1 || PQstatus(handle) != CONNECTION_OK {
                    isBroken = true
                    throw failure(nil, "the connection broke in the middle of a pipeline", collection: nil)
                }
                continue
            }
            emptyInARow = 0
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC {
                PQclear(result)
                break
            }
            let keep = index < count ? body(index, result, status) : false
            if !keep { PQclear(result) }
            index += 1
        }
        guard PQexitPipelineMode(handle) == 1 else {
            isBroken = true
            throw failure(nil, "cannot leave pipeline mode", collection: nil)
        }
    }

    /// The error for a failed result (or a missing one), with the connection marked broken when
    /// libpq says so, or when the failure is libpq's own rather than the server's.
    ///
    /// A failure without a SQLSTATE comes from libpq itself: the connection is lost, out of step
    /// with the server, or out of memory. libpq does not always say so in `PQstatus`: when the
    /// server dies while a statement is being sent, the send fails (`EPIPE`, "server closed the
    /// connection unexpectedly") and libpq reports that write error while the status still reads
    /// `CONNECTION_OK`, until a later read sees the end of the stream. Such a connection is never
    /// used again, and the failure is `.connectionLost`.
    private func failure(_ result: OpaquePointer?, _ context: String, collection: String?) -> StorageError {
        var sqlState: String?
        var message: String
        if let result, let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))) {
            message = String(cString: primary)
            if let detail = PQresultErrorField(result, Int32(UInt8(ascii: "D"))) {
                message += " (" + String(cString: detail) + ")"
            }
            sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        } else {
            message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
            if message.isEmpty { message = "the server did not answer" }
        }
        let broken = PQstatus(handle) != CONNECTION_OK || sqlState == nil
        if broken { isBroken = true }
        if broken && sqlState == nil {
            message = "the connection to \(endpoint.server) was lost: " + message
        }
        let error = PostgreSQLError(sqlState: sqlState, message: message)
        return error.storageError(context, collection: collection, connectionBroken: broken)
    }

    /// Runs SQL without parameters (several statements allowed); any rows are discarded.
    func execute(_ sql: String, collection: String? = nil) throws {
        detachStream()
        try settle()
        try sendPendingBegin(collection: collection)
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw failure(result, "cannot run a statement", collection: collection)
        }
    }

    /// The name of the prepared statement for `sql`, preparing it on first use. The last few
    /// statements are looked for first by comparison (the same `String` is a pointer comparison):
    /// a profile of single saves showed hashing the long statement for the dictionary as a third
    /// of the commit's client cost.
    private func preparedStatement(_ sql: String, collection: String?) throws -> String {
        for entry in recentStatements where entry.sql == sql { return entry.name }
        if let name = prepared[sql] {
            remember(sql, name)
            return name
        }
        try settle()
        let name = "s\(nextStatement)"
        nextStatement += 1
        let result = PQprepare(handle, name, sql, 0, nil)
        defer { PQclear(result) }
        guard let result, PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw failure(result, "cannot prepare a statement", collection: collection)
        }
        prepared[sql] = name
        remember(sql, name)
        return name
    }

    /// The statements used last (at most four), newest first: see `preparedStatement`.
    private var recentStatements: [(sql: String, name: String)] = []

    private func remember(_ sql: String, _ name: String) {
        if recentStatements.count == 4 { recentStatements.removeLast() }
        recentStatements.insert((sql, name), at: 0)
    }

    /// Forgets every prepared statement (after a schema change made one of them invalid).
    func discardPreparedStatements() {
        guard !prepared.isEmpty, !isBroken else { return }
        prepared.removeAll()
        recentStatements.removeAll()
        if !isInTransaction || PQtransactionStatus(handle) == PQTRANS_INTRANS {
            try? execute("DEALLOCATE ALL")
        }
    }

    /// Runs a prepared statement and returns its whole result (binary format).
    func query(
        _ sql: String,
        _ parameters: PostgreSQLParameters,
        _ context: String,
        collection: String? = nil
    ) throws -> PostgreSQLResult {
        try parameters.checkSize(context, collection: collection)
        detachStream()
        try settle()
        let name = try preparedStatement(sql, collection: collection)
        if pendingBegin != nil {
            return try queryAfterBegin(name, parameters, context, collection: collection)
        }
        let result = parameters.withArrays { count, values, lengths, formats in
            PQexecPrepared(handle, name, count, values, lengths, formats, 1)
        }
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard let result, status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
            defer { PQclear(result) }
            throw failure(result, context, collection: collection)
        }
        return PostgreSQLResult(result)
    }

    /// Sends the pending `BEGIN` (and its lock) and the prepared statement `name` together
    /// (pipeline mode) and returns the statement's result: one round trip for all.
    private func queryAfterBegin(
        _ name: String,
        _ parameters: PostgreSQLParameters,
        _ context: String,
        collection: String?
    ) throws -> PostgreSQLResult {
        let first = PQenterPipelineMode(handle) == 1 ? sendPendingBeginInPipeline() : nil
        let sent =
            first != nil
            && parameters.withArrays { count, values, lengths, formats in
                PQsendQueryPrepared(handle, name, count, values, lengths, formats, 1)
            } == 1 && PQpipelineSync(handle) == 1
        guard let first, sent else {
            isBroken = true
            throw failure(nil, context, collection: collection)
        }
        return PostgreSQLResult(try readLastResult(after: first, statements: 1, context, collection: collection))
    }

    /// Reads the answers to a pipeline of `first` statements of the pending `BEGIN` (the `BEGIN`
    /// and its lock, or none) and `statements` statements, each of which must succeed, and
    /// returns the last statement's result (the caller clears it). A `BEGIN` that succeeded
    /// marks the transaction begun (even when its lock then failed: it must be rolled back).
    /// - Throws: the `BEGIN`'s error or the first failing statement's (the later ones did not
    ///   run); `.connectionLost` when the connection broke.
    private func readLastResult(
        after first: Int,
        statements: Int,
        _ context: String,
        collection: String?
    ) throws -> OpaquePointer {
        let last = first + statements - 1
        var failed: StorageError?
        var kept: OpaquePointer?
        do {
            try readPipeline(count: last + 1) { index, result, status in
                if index < first {
                    // The `BEGIN`, then its lock: the first failure is the one reported.
                    if status == PGRES_COMMAND_OK {
                        if index == 0 {
                            pendingBegin = nil
                            hasBegun = true
                        }
                    } else if failed == nil {
                        failed = failure(result, "cannot begin a transaction", collection: collection)
                    }
                    return false
                }
                guard failed == nil else { return false }
                guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
                    failed = failure(result, context, collection: collection)
                    return false
                }
                guard index == last else { return false }
                kept = result
                return true
            }
        } catch {
            if let kept { PQclear(kept) }
            throw error
        }
        if let failed {
            if let kept { PQclear(kept) }
            throw failed
        }
        guard let kept else { throw failure(nil, context, collection: collection) }
        return kept
    }

    /// Runs a prepared statement in single-row mode and calls `body` with each row until it
    /// returns `false`: memory stays bounded by one row, whatever the result's size.
    func stream(
        _ sql: String,
        _ parameters: PostgreSQLParameters,
        _ context: String,
        collection: String? = nil,
        _ body: (any StorageRow) throws -> Bool
    ) throws {
        try parameters.checkSize(context, collection: collection)
        detachStream()
        try settle()
        try sendPendingBegin(collection: collection)
        let name = try preparedStatement(sql, collection: collection)
        let sent = parameters.withArrays { count, values, lengths, formats in
            PQsendQueryPrepared(handle, name, count, values, lengths, formats, 1)
        }
        guard sent == 1 else { throw failure(nil, context, collection: collection) }
        PQsetSingleRowMode(handle)
        let stream = PostgreSQLStream(connection: self, context: context, collection: collection)
        activeStream = stream
        defer {
            if activeStream === stream { activeStream = nil }
            stream.finish()
        }
        while let row = try stream.next() {
            guard try body(row) else { break }
        }
    }

    /// Copies the rest of the active stream's rows into memory, so another statement can run.
    private func detachStream() {
        if let cursor = activeCursor {
            activeCursor = nil
            cursor.receive()
        }
        guard let stream = activeStream else { return }
        activeStream = nil
        stream.buffer()
    }

    /// The name of the cursor a single-query read streams through (one per transaction).
    static let cursorName = PostgreSQLIdentifier.quote("storage$cursor")

    /// Runs a query through a cursor (`DECLARE … CURSOR`, then `FETCH` in batches of bounded
    /// size, results in binary) and calls `body` with each row until it returns `false`. A batch
    /// is one result, so libpq makes one result per batch instead of one per row (single-row
    /// mode), and the next batch is asked for before the rows of the current one are read, so
    /// the server makes it meanwhile. The transaction must end with the scan (the cursor stays
    /// open until it does): a single-query read's, begun by the pending `BEGIN`.
    /// - Throws: the server's error for the query or a `FETCH`; `.connectionLost` when the
    ///   connection broke.
    func streamThroughCursor(
        _ sql: String,
        _ parameters: PostgreSQLParameters,
        _ context: String,
        collection: String? = nil,
        _ body: (any StorageRow) throws -> Bool
    ) throws {
        try parameters.checkSize(context, collection: collection)
        detachStream()
        try settle()
        let name = try preparedStatement(
            "DECLARE " + Self.cursorName + " NO SCROLL CURSOR FOR " + sql,
            collection: collection
        )
        let first = PQenterPipelineMode(handle) == 1 ? sendPendingBeginInPipeline() : nil
        let sent =
            first != nil
            && parameters.withArrays { count, values, lengths, formats in
                PQsendQueryPrepared(handle, name, count, values, lengths, formats, 1)
            } == 1
            && PQsendQueryParams(
                handle,
                PostgreSQLCursorStream.fetchSQL(PostgreSQLCursorStream.firstBatch),
                0,
                nil,
                nil,
                nil,
                nil,
                1
            ) == 1 && PQpipelineSync(handle) == 1
        guard let first, sent else {
            isBroken = true
            throw failure(nil, context, collection: collection)
        }
        let batch = try readLastResult(after: first, statements: 2, context, collection: collection)
        let stream = PostgreSQLCursorStream(connection: self, first: batch, context: context, collection: collection)
        defer {
            if activeCursor === stream { activeCursor = nil }
            stream.finish()
        }
        while let row = try stream.next() {
            guard try body(row) else { break }
        }
    }

    /// Sends a `FETCH` of the cursor stream `stream`, read later (`receiveFetch`).
    /// - Returns: whether libpq sent it.
    func sendFetch(_ size: Int, for stream: PostgreSQLCursorStream) -> Bool {
        guard PQsendQueryParams(handle, PostgreSQLCursorStream.fetchSQL(size), 0, nil, nil, nil, nil, 1) == 1 else {
            return false
        }
        activeCursor = stream
        return true
    }

    /// Reads the answer to the `FETCH` in flight: its rows, or its error.
    func receiveFetch(_ context: String, collection: String?) -> Result<OpaquePointer, StorageError> {
        activeCursor = nil
        var rows: OpaquePointer?
        var failed: StorageError?
        while let result = PQgetResult(handle) {
            if failed == nil, rows == nil, PQresultStatus(result) == PGRES_TUPLES_OK {
                rows = result
                continue
            }
            if failed == nil { failed = failure(result, context, collection: collection) }
            PQclear(result)
        }
        if let failed {
            if let rows { PQclear(rows) }
            return .failure(failed)
        }
        guard let rows else { return .failure(failure(nil, context, collection: collection)) }
        return .success(rows)
    }

    /// Runs `sql` (a `COPY … FROM STDIN (FORMAT binary)`) with `tuples` as its data: the binary
    /// header, the tuples, the trailer.
    /// - Throws: the server's error for the copy (`.constraintViolation` for a unique
    ///   violation), `.connectionLost` when the connection broke.
    func copyIn(_ sql: String, _ tuples: UnsafeRawBufferPointer, _ context: String, collection: String?) throws {
        detachStream()
        try settle()
        try sendPendingBegin(collection: collection)
        let start = PQexec(handle, sql)
        let status = start.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        guard status == PGRES_COPY_IN else {
            defer { PQclear(start) }
            throw failure(start, context, collection: collection)
        }
        PQclear(start)
        // "PGCOPY\n\377\r\n\0", no flags, no header extension; the tuples; a field count of -1.
        let header: [UInt8] =
            [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00] + [UInt8](repeating: 0, count: 8)
        var sent = send(header)
        var offset = 0
        while sent, offset < tuples.count {
            let end = min(tuples.count, offset + (1 << 20))
            sent = send(UnsafeRawBufferPointer(rebasing: tuples[offset..<end]))
            offset = end
        }
        if sent { sent = send([0xFF, 0xFF]) }
        let ended = PQputCopyEnd(handle, sent ? nil : "the client could not send the data") == 1
        guard ended else {
            isBroken = true
            throw failure(nil, context, collection: collection)
        }
        var failed: StorageError?
        while let result = PQgetResult(handle) {
            if failed == nil && PQresultStatus(result) != PGRES_COMMAND_OK {
                failed = failure(result, context, collection: collection)
            }
            PQclear(result)
        }
        if let failed { throw failed }
        if !sent { throw failure(nil, context, collection: collection) }
    }

    /// Sends COPY data; `false` when libpq could not.
    private func send(_ bytes: some ContiguousBytes) -> Bool {
        bytes.withUnsafeBytes { buffer in
            PQputCopyData(handle, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(buffer.count)) == 1
        }
    }

    /// Waits up to `timeout` milliseconds for notifications (`LISTEN`) and consumes them.
    /// - Parameters:
    ///   - timeout: the longest wait, in milliseconds.
    ///   - origin: the payload of the notifications that do not count (a backend's own).
    /// - Returns: whether at least one arrived (`any`), and whether one of them had another
    ///   payload than `origin` (`others`).
    /// - Throws: `StorageError` with code `.connectionLost` when the connection broke.
    func waitForNotifications(timeout: Int32, ignoring origin: String) throws -> (any: Bool, others: Bool) {
        var arrived = (any: false, others: false)
        func consume() {
            while let notification = PQnotifies(handle) {
                arrived.any = true
                if let payload = notification.pointee.extra, String(cString: payload) == origin {
                    // One of the backend's own commits.
                } else {
                    arrived.others = true
                }
                PQfreemem(notification)
            }
        }
        // Notifications that came in with an earlier statement's result are already queued.
        consume()
        if arrived.any { return arrived }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        guard descriptor.fd >= 0 else { throw failure(nil, "cannot wait for changes", collection: nil) }
        _ = poll(&descriptor, 1, timeout)
        guard PQconsumeInput(handle) == 1 else { throw failure(nil, "cannot wait for changes", collection: nil) }
        consume()
        return arrived
    }

    /// The next result of a query sent asynchronously, or `nil` when there is none left.
    func nextResult() -> OpaquePointer? {
        PQgetResult(handle)
    }

    /// The error for a failed result of a stream's query (`failure(_:_:collection:)`), for the
    /// streams, which read their results themselves.
    func streamFailure(_ result: OpaquePointer?, _ context: String, collection: String?) -> StorageError {
        failure(result, context, collection: collection)
    }
}
