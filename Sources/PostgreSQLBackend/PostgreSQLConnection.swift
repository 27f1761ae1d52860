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
    /// What the connection is doing: the one place its transaction, what it has in flight and
    /// whether it is usable are kept (see `PostgreSQLConnectionStateMachine`).
    private var machine = Machine()
    typealias Machine = PostgreSQLConnectionStateMachine<PostgreSQLStream, PostgreSQLCursorStream>
    /// Whether `close()` ran: the handle is then freed.
    private var isClosed = false
    /// Whether statements are prepared by name (and kept for the connection's life); `false`
    /// behind a pooler in transaction pooling mode (`Configuration.transactionPooling`), whose
    /// server connections go to another client after each transaction: every statement is then
    /// sent unnamed, parsed with its execution.
    private let namesStatements: Bool
    /// Where slow statements and a lost connection are reported (set by the pool).
    var events: StoreEventReporter?
    /// Whether the loss of this connection was reported: once per connection.
    private var reportedLoss = false
    /// Whether libpq may still be in single-row mode from a streamed read (`stream`): it resets
    /// the mode when a statement is sent outside pipeline mode, but not for the first statement
    /// of a pipeline, whose rows would then come one result each (the answers of the pipeline
    /// out of step with its statements). The next pipeline begins with an empty statement,
    /// which has no rows: libpq resets the mode when it moves on from it.
    private var singleRowModeMayLinger = false
    /// The results at the head of the pipeline being read that are not the caller's: the empty
    /// statement sent after a streamed read (`enterPipeline`).
    private var pipelineLead = 0

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
        defaultIsolation: String? = nil,
        transactionPooling: Bool = false
    ) throws {
        self.endpoint = endpoint
        namesStatements = !transactionPooling
        // Counted in whole seconds, and at least 2, as libpq counts its connect_timeout.
        let seconds = max(2, Int((Double(connectTimeout.components.seconds) + 0.999).rounded(.down)))
        func start(hosts: ArraySlice<(host: String, port: String)>?) -> OpaquePointer? {
            var keywords = ["dbname", "connect_timeout", "fallback_application_name", "client_encoding"]
            var values = [url, String(seconds), "swift-storage", "UTF8"]
            if let hosts {
                // After `dbname`, whose string libpq expands first: these replace its hosts.
                keywords += ["host", "port"]
                values += [hosts.map(\.host).joined(separator: ","), hosts.map(\.port).joined(separator: ",")]
            }
            let connection = Self.withCStrings(keywords) { keywordPointers in
                Self.withCStrings(values) { valuePointers in
                    PQconnectStartParams(keywordPointers, valuePointers, 1)
                }
            }
            // Verbose messages carry the server's SQLSTATE, which classifies the failure.
            if let connection { PQsetErrorVerbosity(connection, PQERRORS_VERBOSE) }
            return connection
        }
        guard var connection = start(hosts: nil) else {
            throw StorageError(.unavailable, "cannot connect to PostgreSQL at \(endpoint.server): out of memory")
        }
        var outcome = Self.finishConnecting(connection, seconds: seconds)
        // A host that does not answer within the timeout (a machine gone, which refuses
        // nothing): the hosts after it are tried, as libpq's own blocking connect does — the
        // primary of a failover pair may be the second.
        var remaining = endpoint.hosts[...]
        while outcome == .timedOut, let next = Self.hostsAfter(connection, in: remaining),
            let again = start(hosts: next)
        {
            PQfinish(connection)
            connection = again
            remaining = next
            outcome = Self.finishConnecting(connection, seconds: seconds)
        }
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
        guard !transactionPooling else {
            // Session settings would stay on the pooler's server connection for whichever client
            // gets it next: only the time zone, which PgBouncer keeps per client (it is one of the
            // parameters it tracks), is set.
            try execute("SET TIME ZONE 'UTC'")
            return
        }
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
        if !isClosed { PQfinish(handle) }
    }

    /// Closes the connection now (not whenever the last reference goes): the pool calls it for
    /// a connection it does not keep, so the server's connection count falls at once. The
    /// connection is not used afterwards.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        machine.broke()
        PQfinish(handle)
    }

    /// The hosts of `hosts` (those `connection` was started with) after the one it timed out
    /// on, when there are any; each round has fewer.
    private static func hostsAfter(
        _ connection: OpaquePointer,
        in hosts: ArraySlice<(host: String, port: String)>
    ) -> ArraySlice<(host: String, port: String)>? {
        guard hosts.count > 1, let host = PQhost(connection).map({ String(cString: $0) }) else { return nil }
        let port = PQport(connection).map { String(cString: $0) } ?? ""
        guard
            let index = hosts.firstIndex(where: {
                $0.host == host && ($0.port == port || ($0.port.isEmpty && port == "5432"))
            }), index + 1 < hosts.endIndex
        else { return nil }
        return hosts[(index + 1)...]
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
        machine.isInTransaction { PQtransactionStatus(handle) != PQTRANS_IDLE }
    }

    /// Set when libpq reports the connection unusable; such a connection is never pooled again.
    var isBroken: Bool { machine.isBroken }

    /// Whether the transaction `begin(_:)` started has sent nothing yet: its `BEGIN` waits for
    /// its first statement.
    var hasPendingBegin: Bool { machine.pendingBegin != nil }

    /// Whether the server has run the `BEGIN` of the transaction `begin(_:)` started, or may
    /// have committed it: `false` while it waits to go with the first statement, and when that
    /// round trip (or reading the previous commit's answer) failed before the server answered it.
    var hasBegun: Bool { machine.hasBegun }

    /// Whether the server may have committed the current write transaction without the answer
    /// having been read: its `COMMIT` (or a statement run on its own) was sent and the connection
    /// broke before the answer came. Such a transaction's outcome is unknown; one whose connection
    /// broke before did not commit.
    var mayHaveCommitted: Bool { machine.mayHaveCommitted }

    /// Whether the server ended the connection while it was idle (the server stopped or crashed,
    /// the session was terminated, the primary of a failover was lost): what it sent meanwhile
    /// is read without waiting — an end of the connection, or the error the server says before
    /// it — and such a connection is marked broken. One `poll` and no round trip: a check-out
    /// asks before it hands out an idle connection, so a transaction never starts on one whose
    /// server is gone (its first statement would fail only after being sent, and a statement that
    /// commits on its own could then not tell whether it had run).
    func endedWhileIdle() -> Bool {
        guard !isClosed, !isBroken, PQstatus(handle) == CONNECTION_OK else { return true }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        // Readable: the answer to a read's commit sent without waiting, or the end. libpq keeps
        // what it reads for the next statement; an end or an error makes the status bad.
        if PQconsumeInput(handle) != Self.libpqSuccess || PQstatus(handle) != CONNECTION_OK {
            machine.broke()
            return true
        }
        return false
    }

    /// libpq's answer for a call that succeeded (`PQsendQuery…`, `PQpipelineSync`,
    /// `PQenterPipelineMode`, `PQputCopyData`, …: 1 on success).
    private static let libpqSuccess: Int32 = 1

    /// Begins a transaction with `sql` (`BEGIN …`), sent with the transaction's first statement;
    /// `lock` (a `LOCK TABLE`, which takes no snapshot) is sent right after it.
    /// - Throws: `.connectionLost` when the answer to the previous commit shows the connection
    ///   broken.
    func begin(_ sql: String, lock: String? = nil) throws {
        try prepare()
        machine.begin(sql, lock: lock)
    }

    /// Sends the pending `BEGIN` and its lock statement, if any, in pipeline mode (which the
    /// caller entered).
    /// - Returns: how many statements it sent (0 with no pending `BEGIN`), or `nil` when sending
    ///   failed.
    private func sendPendingBeginInPipeline() -> Int? {
        guard let pending = machine.pendingBegin else { return 0 }
        guard sendSimple(pending.begin) else { return nil }
        guard let lock = pending.lock else { return 1 }
        return sendSimple(lock) ? 2 : nil
    }

    /// Sends `sql`, without parameters, results in binary, in pipeline mode or not.
    private func sendSimple(_ sql: String) -> Bool {
        PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 1) == Self.libpqSuccess
    }

    /// Enters pipeline mode; first sends an empty statement when libpq may still be in
    /// single-row mode (`singleRowModeMayLinger`), which `readPipeline` reads and passes over.
    private func enterPipeline() -> Bool {
        guard PQenterPipelineMode(handle) == Self.libpqSuccess else { return false }
        guard singleRowModeMayLinger else { return true }
        singleRowModeMayLinger = false
        pipelineLead = 1
        return sendSimple("")
    }

    /// Marks the end of a pipeline (and flushes it).
    private func syncPipeline() -> Bool {
        PQpipelineSync(handle) == Self.libpqSuccess
    }

    /// Prepares the connection for statements outside a transaction (each its own snapshot):
    /// reads the answer to a commit sent without waiting, and forgets the previous
    /// transaction's `hasBegun`.
    /// - Throws: `.connectionLost` when the answer to the previous commit shows the connection
    ///   broken.
    func beginAutocommit() throws {
        try prepare()
        machine.beginAutocommit()
    }

    /// Commits the transaction; with `waiting: false` (a read-only transaction, whose commit
    /// cannot fail but for a lost connection) it does not wait for the answer, which the next
    /// statement reads. A transaction that ran no statement is simply forgotten.
    func commit(waiting: Bool = true) throws {
        guard machine.commit() == .send else { return }
        guard !waiting else {
            // From now on a lost connection leaves the outcome unknown.
            machine.commitSent()
            try execute("COMMIT")
            machine.ended()
            return
        }
        try prepare()
        guard enterPipeline(), sendSimple("COMMIT"), syncPipeline() else {
            throw failure(nil, "cannot commit", collection: nil)
        }
        machine.commitSentUnread()
    }

    /// Rolls the transaction back; one that ran no statement is simply forgotten.
    func rollback() throws {
        abortCopy()
        guard machine.rollback() == .send else { return }
        try execute("ROLLBACK")
        machine.ended()
    }

    /// A statement sent in a pipeline: its SQL (prepared on first use), parameters, and what
    /// its error message says.
    struct PipelinedStatement {
        let sql: String
        let parameters: PostgreSQLParameters
        let context: String
        let collection: String?
        /// The internal error thrown instead of the statement's own when the server fails it
        /// with `marker.code` (a check the statement makes on purpose).
        var marker: (code: PostgreSQLError.Code, error: any Error)? = nil
    }

    /// Runs the prepared `statements` and then `COMMIT`, in one round trip (pipeline mode), after
    /// the pending `BEGIN` if there is one: the last statements of a write transaction and its
    /// commit.
    /// - Throws: the first failing statement's error (the later ones and the commit then do not
    ///   run, and the transaction is left to roll back), or the commit's; `.connectionLost` when
    ///   the connection broke (the commit's outcome is then unknown).
    func runAndCommit(_ statements: [PipelinedStatement]) throws {
        let started = events?.statementStarting()
        defer {
            events?.statementEnded(
                startedAt: started,
                (statements.map(\.sql) + ["COMMIT"]).joined(separator: "; "),
                backend: "PostgreSQL",
                location: endpoint.server
            )
        }
        for statement in statements {
            try statement.parameters.checkSize(statement.context, collection: statement.collection)
        }
        try prepare()
        let names = try statements.map { try preparedStatement($0.sql, collection: $0.collection) }
        var sent = enterPipeline()
        let beginStatements = sent ? sendPendingBeginInPipeline() : nil
        sent = sent && beginStatements != nil
        for (statement, name) in zip(statements, names) where sent {
            sent =
                statement.parameters.withArrays { count, values, lengths, formats in
                    sendStatement(name, count, values, lengths, formats)
                } == Self.libpqSuccess
        }
        sent = sent && sendSimple("COMMIT")
        // The commit is on its way (libpq may have written it out already, and the server runs a
        // `COMMIT` as it arrives, before the pipeline's sync): from now on a lost connection leaves
        // its outcome unknown, so the transaction must not be run again. A `COMMIT` whose sending
        // failed did not reach the server whole: its message is the last in libpq's buffer.
        if sent { machine.commitSent() }
        sent = sent && syncPipeline()
        guard sent else {
            machine.broke()
            throw failure(nil, statements.first?.context ?? "cannot commit", collection: statements.first?.collection)
        }
        let first = beginStatements ?? 0
        var failed: (any Error)?
        try readPipeline(count: first + statements.count + 1) { index, result in
            guard failed == nil, !result.succeeded else { return }
            let position = index - first
            if position < 0 {
                failed = failure(result, "cannot begin a transaction", collection: statements.first?.collection)
                if result.sqlState != nil {
                    // The server refused the BEGIN or its lock, or ended the connection before
                    // it (an idle connection terminated meanwhile says so first): nothing of the
                    // pipeline ran.
                    machine.refusedBeforeRunning()
                }
            } else if position < statements.count {
                let statement = statements[position]
                if let marker = statement.marker, result.sqlState == marker.code.rawValue {
                    failed = marker.error
                } else {
                    failed = failure(result, statement.context, collection: statement.collection)
                }
                // The server's error: it skips the rest of the pipeline, the COMMIT with it.
                if result.sqlState != nil { machine.commitSkipped() }
            } else {
                failed = failure(result, "cannot commit", collection: nil)
            }
        }
        if let failed { throw failed }
        machine.ended()
    }

    /// Runs the prepared `sql` on its own, outside a transaction block: the server runs and
    /// commits it as a transaction of its own (at the connection's default isolation), in one
    /// round trip. Its parameters are the fields of the COPY binary `tuple`
    /// (`PostgreSQLParameters.forEachField(of:_:)`), pointed at where they are, then `extra`'s: a
    /// single save's record is not copied into a parameter buffer of its own. `hasBegun` is set
    /// once the statement has been sent — from then on a lost connection leaves its outcome
    /// unknown — unless the server's first answer is an error (the statement did not complete, so
    /// nothing was committed).
    /// - Parameters:
    ///   - sql: the statement, prepared on first use.
    ///   - tuple: a COPY binary tuple holding the first parameters.
    ///   - extra: the parameters after the tuple's.
    ///   - context: what the statement does, for an error's message.
    ///   - collection: the collection it writes, for an error.
    ///   - marker: the internal error thrown instead of the statement's own when the server
    ///     fails it with `marker.code` (a check the statement makes on purpose).
    /// - Returns: the rows the statement affected.
    /// - Throws: the statement's error, or the commit's (reported after the statement's own
    ///   result); `.connectionLost` when the connection broke.
    @discardableResult
    func runAlone(
        _ sql: String,
        tuple: UnsafeRawBufferPointer,
        then extra: PostgreSQLParameters,
        context: String,
        collection: String?,
        marker: (code: PostgreSQLError.Code, error: any Error)? = nil
    ) throws -> Int {
        let started = events?.statementStarting()
        defer { events?.statementEnded(startedAt: started, sql, backend: "PostgreSQL", location: endpoint.server) }
        try extra.checkSize(context, collection: collection)
        try prepare()
        machine.beginAutocommit()
        let name = try preparedStatement(sql, collection: collection)
        let fields = tuple.count >= 2 ? Int(tuple.loadUnaligned(as: UInt16.self).bigEndian) : 0
        let capacity = max(fields + extra.count, 1)
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
                        sendStatement(
                            name,
                            Int32(count) + extraCount,
                            UnsafePointer(values.baseAddress),
                            UnsafePointer(lengths.baseAddress),
                            UnsafePointer(formats.baseAddress)
                        )
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
        guard sent == Self.libpqSuccess else {
            machine.broke()
            throw failure(nil, context, collection: collection)
        }
        machine.aloneSent()
        var failed: (any Error)?
        var answered = false
        var affected = 0
        while let result = nextResult() {
            if result.succeeded {
                affected = Self.affectedRows(result.handle)
            } else if failed == nil {
                let sqlState = result.sqlState
                if !answered, sqlState != nil {
                    // The server's error instead of the statement's completion (an idle
                    // connection the server ended says so first): the statement did not
                    // complete, so nothing was committed (a commit follows a completed statement).
                    machine.refusedBeforeRunning()
                }
                let error = failure(result, context, collection: collection)
                if let marker, sqlState == marker.code.rawValue, !isBroken {
                    failed = marker.error
                } else {
                    failed = error
                }
            }
            answered = true
        }
        if let failed { throw failed }
        if !answered { throw failure(nil, context, collection: collection) }
        machine.ended()
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

    /// Makes the connection free for the next statement, as the state machine asks: copies an
    /// active stream's remaining rows into memory, reads the answer to a cursor's `FETCH` in
    /// flight, and reads the answer to a commit sent without waiting (afterwards the connection
    /// is out of pipeline mode, with nothing in flight).
    /// - Throws: `.connectionLost` when the connection broke meanwhile.
    private func prepare() throws {
        if isCopying {
            // A writer's open copy must end before anything else runs; that it did not is a bug.
            abortCopy()
            throw StorageError(.engine, "a statement was sent while a COPY was still open")
        }
        while true {
            switch machine.preparation() {
            case .ready:
                return
            case .bufferStream(let stream):
                stream.buffer()
                machine.streamDetached()
            case .receiveFetch(let cursor):
                cursor.receive()
                machine.fetchReceived()
            case .readCommit:
                var failed: StorageError?
                try readPipeline(count: 1) { _, result in
                    if result.status != PGRES_COMMAND_OK { failed = failure(result, "cannot commit", collection: nil) }
                }
                machine.commitRead()
                if let failed { throw failed }
            }
        }
    }

    /// Sends the pending `BEGIN` and its lock statement, if any, on their own.
    private func sendPendingBegin(collection: String?) throws {
        guard let pending = machine.pendingBegin else { return }
        // Two statements in one simple query: the lock runs only when the `BEGIN` did.
        let result = exec(pending.lock.map { pending.begin + "; " + $0 } ?? pending.begin)
        guard result?.status == PGRES_COMMAND_OK else {
            throw failure(result, "cannot begin a transaction", collection: collection)
        }
        machine.beginAnswered()
    }

    /// Runs `sql` (`PQexec`) and owns its result.
    private func exec(_ sql: String) -> PostgreSQLResult? {
        PostgreSQLResult(taking: PQexec(handle, sql))
    }

    /// Reads the results of `count` statements sent in pipeline mode and the sync that follows
    /// them, calling `body` with each statement's index and result (which `body` may keep), then
    /// leaves pipeline mode.
    /// - Throws: `.connectionLost` when the connection broke before the sync arrived.
    private func readPipeline(
        count: Int,
        _ body: (Int, PostgreSQLResult) -> Void
    ) throws {
        var index = 0
        var emptyInARow = 0
        while true {
            guard let result = nextResult() else {
                // Each statement's results end with a null; two in a row mean nothing more is coming.
                emptyInARow += 1
                if emptyInARow > 1 || PQstatus(handle) != CONNECTION_OK {
                    machine.broke()
                    throw failure(nil, "the connection broke in the middle of a pipeline", collection: nil)
                }
                continue
            }
            emptyInARow = 0
            if pipelineLead > 0, result.status != PGRES_PIPELINE_SYNC {
                // The empty statement `enterPipeline` sent first: not the caller's.
                pipelineLead -= 1
                guard result.status == PGRES_EMPTY_QUERY else {
                    machine.broke()
                    throw failure(result, "cannot run a pipeline", collection: nil)
                }
                continue
            }
            if result.status == PGRES_PIPELINE_SYNC { break }
            if index < count { body(index, result) }
            index += 1
        }
        guard PQexitPipelineMode(handle) == Self.libpqSuccess else {
            machine.broke()
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
    private func failure(_ result: PostgreSQLResult?, _ context: String, collection: String?) -> StorageError {
        var sqlState: String?
        var message: String
        if let result, let primary = PQresultErrorField(result.handle, PostgreSQLResult.primaryMessageField) {
            message = String(cString: primary)
            if let detail = PQresultErrorField(result.handle, PostgreSQLResult.detailField) {
                message += " (" + String(cString: detail) + ")"
            }
            sqlState = result.sqlState
        } else {
            message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
            if message.isEmpty { message = "the server did not answer" }
        }
        let broken = PQstatus(handle) != CONNECTION_OK || sqlState == nil
        if broken { machine.broke() }
        if broken && sqlState == nil {
            message = "the connection to \(endpoint.server) was lost: " + message
        }
        let error = PostgreSQLError(sqlState: sqlState, message: message)
        let storageError = error.storageError(context, collection: collection, connectionBroken: broken)
        if broken || storageError.code == .connectionLost { reportLoss(sqlState: sqlState) }
        return storageError
    }

    /// Reports the loss of this connection (`connectionLost`), once.
    private func reportLoss(sqlState: String?) {
        guard !reportedLoss, let events else { return }
        reportedLoss = true
        events.report(
            StoreEvent(
                .connectionLost,
                backend: "PostgreSQL",
                code: .connectionLost,
                reason: sqlState.map { "SQLSTATE \($0)" } ?? "no answer from the server",
                location: endpoint.server
            )
        )
    }

    /// Runs SQL without parameters (several statements allowed); any rows are discarded.
    func execute(_ sql: String, collection: String? = nil) throws {
        let started = events?.statementStarting()
        defer { events?.statementEnded(startedAt: started, sql, backend: "PostgreSQL", location: endpoint.server) }
        try prepare()
        try sendPendingBegin(collection: collection)
        let result = exec(sql)
        machine.statementSent()
        guard let result, result.succeeded else {
            throw failure(result, "cannot run a statement", collection: collection)
        }
    }

    /// The name of the prepared statement for `sql`, preparing it on first use. The last few
    /// statements are looked for first by comparison (the same `String` is a pointer comparison):
    /// a profile of single saves showed hashing the long statement for the dictionary as a third
    /// of the commit's client cost.
    private func preparedStatement(_ sql: String, collection: String?) throws -> Statement {
        guard namesStatements else { return .unnamed(sql) }
        for entry in recentStatements where entry.sql == sql { return .named(entry.name) }
        if let name = prepared[sql] {
            remember(sql, name)
            return .named(name)
        }
        try prepare()
        let name = "s\(nextStatement)"
        nextStatement += 1
        let result = PostgreSQLResult(taking: PQprepare(handle, name, sql, 0, nil))
        guard let result, result.status == PGRES_COMMAND_OK else {
            throw failure(result, "cannot prepare a statement", collection: collection)
        }
        prepared[sql] = name
        remember(sql, name)
        return .named(name)
    }

    /// A statement to run: prepared by name, or sent unnamed with its text (see
    /// `namesStatements`).
    enum Statement {
        case named(String)
        case unnamed(String)
    }

    /// Sends `statement` with its parameters, results in binary (`PQsendQueryPrepared`, or
    /// `PQsendQueryParams` for an unnamed one, whose parameter types the server infers as it does
    /// for a prepared one).
    private func sendStatement(
        _ statement: Statement,
        _ count: Int32,
        _ values: UnsafePointer<UnsafePointer<CChar>?>?,
        _ lengths: UnsafePointer<Int32>?,
        _ formats: UnsafePointer<Int32>?
    ) -> Int32 {
        switch statement {
        case .named(let name): PQsendQueryPrepared(handle, name, count, values, lengths, formats, 1)
        case .unnamed(let sql): PQsendQueryParams(handle, sql, count, nil, values, lengths, formats, 1)
        }
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
        let started = events?.statementStarting()
        defer { events?.statementEnded(startedAt: started, sql, backend: "PostgreSQL", location: endpoint.server) }
        try parameters.checkSize(context, collection: collection)
        try prepare()
        let name = try preparedStatement(sql, collection: collection)
        if machine.pendingBegin != nil {
            return try queryAfterBegin(name, parameters, context, collection: collection)
        }
        let result = PostgreSQLResult(
            taking: parameters.withArrays { count, values, lengths, formats in
                switch name {
                case .named(let name): PQexecPrepared(handle, name, count, values, lengths, formats, 1)
                case .unnamed(let sql): PQexecParams(handle, sql, count, nil, values, lengths, formats, 1)
                }
            }
        )
        machine.statementSent()
        guard let result, result.succeeded else {
            throw failure(result, context, collection: collection)
        }
        return result
    }

    /// Sends the pending `BEGIN` (and its lock) and the prepared statement `name` together
    /// (pipeline mode) and returns the statement's result: one round trip for all.
    private func queryAfterBegin(
        _ name: Statement,
        _ parameters: PostgreSQLParameters,
        _ context: String,
        collection: String?
    ) throws -> PostgreSQLResult {
        let first = enterPipeline() ? sendPendingBeginInPipeline() : nil
        let sent =
            first != nil
            && parameters.withArrays { count, values, lengths, formats in
                sendStatement(name, count, values, lengths, formats)
            } == Self.libpqSuccess && syncPipeline()
        guard let first, sent else {
            machine.broke()
            throw failure(nil, context, collection: collection)
        }
        return try readLastResult(after: first, statements: 1, context, collection: collection)
    }

    /// Reads the answers to a pipeline of `first` statements of the pending `BEGIN` (the `BEGIN`
    /// and its lock, or none) and `statements` statements, each of which must succeed, and
    /// returns the last statement's result. A `BEGIN` that succeeded marks the transaction begun
    /// (even when its lock then failed: it must be rolled back).
    /// - Throws: the `BEGIN`'s error or the first failing statement's (the later ones did not
    ///   run); `.connectionLost` when the connection broke.
    private func readLastResult(
        after first: Int,
        statements: Int,
        _ context: String,
        collection: String?
    ) throws -> PostgreSQLResult {
        let last = first + statements - 1
        var failed: StorageError?
        var kept: PostgreSQLResult?
        try readPipeline(count: last + 1) { index, result in
            if index < first {
                // The `BEGIN`, then its lock: the first failure is the one reported.
                if result.status == PGRES_COMMAND_OK {
                    if index == 0 { machine.beginAnswered() }
                } else if failed == nil {
                    failed = failure(result, "cannot begin a transaction", collection: collection)
                }
                return
            }
            guard failed == nil else { return }
            guard result.succeeded else {
                failed = failure(result, context, collection: collection)
                return
            }
            if index == last { kept = result }
        }
        if let failed { throw failed }
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
        try prepare()
        try sendPendingBegin(collection: collection)
        let name = try preparedStatement(sql, collection: collection)
        let sent = parameters.withArrays { count, values, lengths, formats in
            sendStatement(name, count, values, lengths, formats)
        }
        guard sent == Self.libpqSuccess else { throw failure(nil, context, collection: collection) }
        PQsetSingleRowMode(handle)
        singleRowModeMayLinger = true
        machine.statementSent()
        let stream = PostgreSQLStream(connection: self, context: context, collection: collection)
        machine.streamStarted(stream)
        defer {
            machine.streamEnded(stream)
            stream.finish()
        }
        while let row = try stream.next() {
            guard try body(row) else { break }
        }
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
        try prepare()
        let name = try preparedStatement(
            "DECLARE " + Self.cursorName + " NO SCROLL CURSOR FOR " + sql,
            collection: collection
        )
        let first = enterPipeline() ? sendPendingBeginInPipeline() : nil
        let sent =
            first != nil
            && parameters.withArrays { count, values, lengths, formats in
                sendStatement(name, count, values, lengths, formats)
            } == Self.libpqSuccess
            && sendSimple(PostgreSQLCursorStream.fetchSQL(PostgreSQLCursorStream.firstBatch)) && syncPipeline()
        guard let first, sent else {
            machine.broke()
            throw failure(nil, context, collection: collection)
        }
        let batch = try readLastResult(after: first, statements: 2, context, collection: collection)
        machine.statementSent()
        let stream = PostgreSQLCursorStream(connection: self, first: batch, context: context, collection: collection)
        defer {
            machine.cursorEnded(stream)
            stream.finish()
        }
        while let row = try stream.next() {
            guard try body(row) else { break }
        }
    }

    /// Sends a `FETCH` of the cursor stream `stream`, read later (`receiveFetch`).
    /// - Returns: whether libpq sent it.
    func sendFetch(_ size: Int, for stream: PostgreSQLCursorStream) -> Bool {
        guard sendSimple(PostgreSQLCursorStream.fetchSQL(size)) else { return false }
        machine.fetchSent(stream)
        return true
    }

    /// Reads the answer to the `FETCH` in flight: its rows, or its error.
    func receiveFetch(_ context: String, collection: String?) -> Result<PostgreSQLResult, StorageError> {
        fetchAnswered(readFetchAnswer(), context, collection: collection)
    }

    /// How many `FETCH` answers a `PostgreSQLFetchReader` read (for the tests).
    var fetchesReadAside = 0

    /// What the results of a `FETCH` were, before they are judged (`fetchAnswered`): its rows,
    /// and the first result that was not rows (the server's error), if any.
    struct FetchAnswer: @unchecked Sendable {
        var rows: PostgreSQLResult?
        /// The first result other than the rows (the server's error, or a second result of rows).
        var failed: PostgreSQLResult?
    }

    /// Reads every result of the `FETCH` in flight, through libpq alone: it touches none of this
    /// connection's own state, so a `PostgreSQLFetchReader` calls it on another thread while the
    /// connection's owner reads the batch before (and waits for it before using the connection).
    func readFetchAnswer() -> FetchAnswer {
        var answer = FetchAnswer()
        while let result = nextResult() {
            if answer.failed == nil, answer.rows == nil, result.status == PGRES_TUPLES_OK {
                answer.rows = result
                continue
            }
            if answer.failed == nil { answer.failed = result }
        }
        return answer
    }

    /// The rows of `answer` (read by `readFetchAnswer`), or its error; the `FETCH` is no longer
    /// in flight. On the connection's owner's thread.
    func fetchAnswered(
        _ answer: FetchAnswer,
        _ context: String,
        collection: String?
    ) -> Result<PostgreSQLResult, StorageError> {
        machine.fetchReceived()
        if let failed = answer.failed { return .failure(failure(failed, context, collection: collection)) }
        guard let rows = answer.rows else { return .failure(failure(nil, context, collection: collection)) }
        return .success(rows)
    }

    /// Runs `sql` (a `COPY … FROM STDIN (FORMAT binary)`) with `tuples` as its data: the binary
    /// header, the tuples, the trailer.
    /// - Throws: the server's error for the copy (`.constraintViolation` for a unique
    ///   violation), `.connectionLost` when the connection broke.
    func copyIn(_ sql: String, _ tuples: UnsafeRawBufferPointer, _ context: String, collection: String?) throws {
        try startCopy(sql, context, collection: collection)
        sendCopyData(tuples)
        try endCopy(context, collection: collection)
    }

    /// Whether a `COPY … FROM STDIN` started by `startCopy` waits for more data or its end.
    private(set) var isCopying = false

    /// Starts `sql` (a `COPY … FROM STDIN (FORMAT binary)`) and sends the binary header: the data
    /// follows with `sendCopyData`, the end with `endCopy` (or `abortCopy`). Nothing else may run
    /// on the connection in between.
    /// - Throws: the server's error for the statement, `.connectionLost` when the connection broke.
    func startCopy(_ sql: String, _ context: String, collection: String?) throws {
        copyStarted = (events?.statementStarting(), sql)
        do {
            try prepare()
            try sendPendingBegin(collection: collection)
            let start = exec(sql)
            machine.statementSent()
            guard let start, start.status == PGRES_COPY_IN else {
                throw failure(start, context, collection: collection)
            }
        } catch {
            reportCopyEnded()
            throw error
        }
        isCopying = true
        // "PGCOPY\n\377\r\n\0", no flags, no header extension.
        let header: [UInt8] =
            [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00] + [UInt8](repeating: 0, count: 8)
        copySendFailed = !send(header)
    }

    /// When the open copy started (for a slow-statement event) and its statement.
    private var copyStarted: (at: ContinuousClock.Instant?, sql: String)?

    /// Reports the end of the open copy as a statement (`StoreEventReporter`).
    private func reportCopyEnded() {
        guard let started = copyStarted else { return }
        copyStarted = nil
        events?.statementEnded(startedAt: started.at, started.sql, backend: "PostgreSQL", location: endpoint.server)
    }

    /// Whether sending data of the open copy failed (the server may have ended it with an error,
    /// which `endCopy` reads).
    private var copySendFailed = false

    /// Sends `tuples` (whole COPY binary tuples) to the open copy; the server takes them in while
    /// the caller encodes the next ones. A failure is kept for `endCopy`, which reports it.
    func sendCopyData(_ tuples: UnsafeRawBufferPointer) {
        var offset = 0
        while !copySendFailed, offset < tuples.count {
            let end = min(tuples.count, offset + (1 << 20))
            copySendFailed = !send(UnsafeRawBufferPointer(rebasing: tuples[offset..<end]))
            offset = end
        }
    }

    /// Sends the trailer of the open copy and reads its outcome.
    /// - Throws: the server's error for the copy (`.constraintViolation` for a unique
    ///   violation), `.connectionLost` when the connection broke.
    func endCopy(_ context: String, collection: String?) throws {
        defer { reportCopyEnded() }
        isCopying = false
        if !copySendFailed { copySendFailed = !send([0xFF, 0xFF]) }
        let sent = !copySendFailed
        copySendFailed = false
        let ended = PQputCopyEnd(handle, sent ? nil : "the client could not send the data") == Self.libpqSuccess
        var failed: StorageError?
        while let result = nextResult() {
            if failed == nil && result.status != PGRES_COMMAND_OK {
                failed = failure(result, context, collection: collection)
            }
        }
        // The server's own error (it ended the copy, so libpq could send no more) comes first.
        if let failed { throw failed }
        guard ended, sent else {
            machine.broke()
            throw failure(nil, context, collection: collection)
        }
    }

    /// Ends the open copy, if any, with an error, so that the server stores none of its data and
    /// the transaction can roll back; the connection is marked broken when that fails.
    func abortCopy() {
        defer { reportCopyEnded() }
        guard isCopying else { return }
        isCopying = false
        copySendFailed = false
        guard PQputCopyEnd(handle, "the client abandoned the copy") == Self.libpqSuccess else {
            machine.broke()
            return
        }
        while nextResult() != nil {}
    }

    /// Sends COPY data; `false` when libpq could not.
    private func send(_ bytes: some ContiguousBytes) -> Bool {
        bytes.withUnsafeBytes { buffer in
            PQputCopyData(handle, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(buffer.count))
                == Self.libpqSuccess
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
        guard PQconsumeInput(handle) == Self.libpqSuccess else {
            throw failure(nil, "cannot wait for changes", collection: nil)
        }
        consume()
        return arrived
    }

    /// The next result of a query sent asynchronously, owned, or `nil` when there is none left.
    func nextResult() -> PostgreSQLResult? {
        PostgreSQLResult(taking: PQgetResult(handle))
    }

    /// The error for a failed result of a stream's query (`failure(_:_:collection:)`), for the
    /// streams, which read their results themselves.
    func streamFailure(_ result: PostgreSQLResult?, _ context: String, collection: String?) -> StorageError {
        failure(result, context, collection: collection)
    }
}
