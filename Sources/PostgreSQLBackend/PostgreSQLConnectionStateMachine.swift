/// What one connection is doing, as one value: the transaction it is in, what it has sent
/// whose answer is still to be read, and whether it is usable. Its transitions are pure — they
/// call no libpq — and return what the connection must do next, so every path (a `BEGIN`
/// pipelined with the first statement, a lock after it, a cursor's `FETCH` in flight, a
/// single-row stream, a pipeline broken in the middle, a commit whose answer is outstanding) is
/// tested without a server (`PostgreSQLConnectionStateMachineTests`). `PostgreSQLConnection`
/// makes the libpq calls the machine asks for and reports their outcome to it.
///
/// Generic over the stream and cursor types only so the tests can use objects of their own:
/// the connection uses `PostgreSQLStream` and `PostgreSQLCursorStream`.
struct PostgreSQLConnectionStateMachine<Stream: AnyObject, Cursor: AnyObject> {
    /// A `BEGIN` not sent yet, and the statement that goes right after it, before the
    /// transaction's first statement takes its snapshot (a write transaction's `LOCK TABLE`).
    struct PendingBegin: Equatable {
        let begin: String
        let lock: String?
    }

    /// The states. `began` says whether the server has run something of the current transaction
    /// (its `BEGIN`), or may have committed it (a `COMMIT` or a statement run on its own was
    /// sent); `committing` (in `.committing`, and kept by `.broken`) says the latter: a write
    /// transaction whose connection is lost before its commit was sent did not commit and may run
    /// again, one lost after it may have committed (its outcome is unknown) and must not.
    enum State {
        /// Nothing open, nothing in flight.
        case idle
        /// A transaction begun by `begin`: its `BEGIN` (and lock) go with its first statement,
        /// in one round trip, and are dropped when it ends before any statement.
        case beginPending(PendingBegin)
        /// Statements were sent and answered; whether a transaction block is open is libpq's
        /// transaction status (a statement may have been `BEGIN` or `ROLLBACK` itself).
        case active(began: Bool)
        /// A write's `COMMIT`, or a statement that commits on its own, was sent (or was being
        /// sent) and its answer is not read yet: the server may have committed it.
        case committing
        /// A read's `COMMIT` sent in pipeline mode without waiting for its answer, which is read
        /// before the next statement (by then it has arrived: no round trip is spent on it).
        case commitUnread
        /// A single-row-mode query whose rows are still being read: a statement issued meanwhile
        /// first copies its remaining rows into memory.
        case streaming(Stream, began: Bool)
        /// A cursor's `FETCH` in flight: a statement issued meanwhile first reads that batch,
        /// which the cursor keeps.
        case fetching(Cursor, began: Bool)
        /// libpq reported the connection unusable; it is never pooled again. `committing` when
        /// it broke while a commit's answer was awaited (the outcome is unknown).
        case broken(began: Bool, committing: Bool)
    }

    /// What must be read from the server before the next statement is sent.
    enum Preparation {
        /// Nothing: the connection is free.
        case ready
        /// The answer to the read's `COMMIT` in flight: report it with `commitRead()` or
        /// `broke()`.
        case readCommit
        /// The rest of the active stream's rows, into memory: report `streamDetached()`.
        case bufferStream(Stream)
        /// The answer to the cursor's `FETCH` in flight, kept by the cursor: report
        /// `fetchReceived()`.
        case receiveFetch(Cursor)
    }

    /// How a transaction ends.
    enum Ending: Equatable {
        /// It sent nothing: it is forgotten, nothing is sent.
        case forget
        /// Its `COMMIT` or `ROLLBACK` is sent.
        case send
    }

    private(set) var state: State = .idle

    // MARK: Reading the state

    /// Whether libpq reported the connection unusable.
    var isBroken: Bool {
        if case .broken = state { return true }
        return false
    }

    /// The `BEGIN` waiting to go with the transaction's first statement, if any.
    var pendingBegin: PendingBegin? {
        if case .beginPending(let pending) = state { return pending }
        return nil
    }

    /// Whether the server has run the current transaction's `BEGIN`, or may have committed it
    /// (see `State`).
    var hasBegun: Bool {
        switch state {
        case .idle, .beginPending, .commitUnread: false
        case .committing: true
        case .active(let began), .streaming(_, let began), .fetching(_, let began), .broken(let began, _): began
        }
    }

    /// Whether the server may have committed the current transaction without its answer being
    /// read: a `COMMIT` (or a statement run on its own) was sent, and the connection broke (or
    /// has not yet read the answer). A transaction lost so must not run again: its outcome is
    /// unknown. One lost before is known not to have committed.
    var mayHaveCommitted: Bool {
        switch state {
        case .committing, .broken(_, committing: true): true
        default: false
        }
    }

    /// Whether a transaction is open (or failed and not yet rolled back).
    /// - Parameter serverInTransaction: whether libpq's transaction status is other than idle,
    ///   asked for only when the state does not say.
    /// - Returns: whether the connection is in a transaction.
    func isInTransaction(serverInTransaction: () -> Bool) -> Bool {
        switch state {
        case .beginPending: true
        case .idle, .commitUnread: false  // the command in flight ends the transaction
        case .active, .committing, .streaming, .fetching, .broken: serverInTransaction()
        }
    }

    /// The stream reading rows now, if any.
    var activeStream: Stream? {
        if case .streaming(let stream, _) = state { return stream }
        return nil
    }

    /// The cursor whose `FETCH` is in flight, if any.
    var activeCursor: Cursor? {
        if case .fetching(let cursor, _) = state { return cursor }
        return nil
    }

    // MARK: Before a statement

    /// What to read before the next statement; called until it answers `.ready`, each step
    /// reported by the transition it names.
    func preparation() -> Preparation {
        switch state {
        case .commitUnread: .readCommit
        case .streaming(let stream, _): .bufferStream(stream)
        case .fetching(let cursor, _): .receiveFetch(cursor)
        case .idle, .beginPending, .active, .committing, .broken: .ready
        }
    }

    /// The answer to the read's `COMMIT` was read (successful or the server's error: either way
    /// the transaction is over).
    mutating func commitRead() {
        guard case .commitUnread = state else { return }
        state = .idle
    }

    /// The active stream's remaining rows are in its buffer.
    mutating func streamDetached() {
        guard case .streaming(_, let began) = state else { return }
        state = .active(began: began)
    }

    /// The answer to the cursor's `FETCH` in flight was read.
    mutating func fetchReceived() {
        guard case .fetching(_, let began) = state else { return }
        state = .active(began: began)
    }

    // MARK: Transactions

    /// A transaction begins with `begin` (and `lock`), sent with its first statement. Called
    /// once the connection is prepared (`preparation()` is `.ready`).
    mutating func begin(_ begin: String, lock: String?) {
        guard !isBroken else {
            state = .broken(began: false, committing: false)
            return
        }
        state = .beginPending(PendingBegin(begin: begin, lock: lock))
    }

    /// Statements run outside a transaction block from now on (each its own snapshot).
    mutating func beginAutocommit() {
        guard !isBroken else {
            state = .broken(began: false, committing: false)
            return
        }
        state = .idle
    }

    /// The server ran the pending `BEGIN` (sent on its own, or answered first in a pipeline).
    mutating func beginAnswered() {
        guard case .beginPending = state else { return }
        state = .active(began: true)
    }

    /// Statements were sent without a pending `BEGIN` (an autocommit read), or the pending one
    /// was sent but not yet answered: the state leaves `.idle`.
    mutating func statementSent() {
        if case .idle = state { state = .active(began: false) }
    }

    /// The `COMMIT` of a write transaction is being sent (after its last statements and the
    /// pending `BEGIN`, if any): from now on a lost connection leaves the outcome unknown. Called
    /// before the `COMMIT` is handed to libpq, which may write it out at once: a send that then
    /// fails may still have reached the server.
    mutating func commitSent() {
        guard !isBroken else { return }
        state = .committing
    }

    /// The server refused the `BEGIN` (or its lock) of a pipeline that then commits, or the
    /// first answer to a statement run on its own was an error: nothing of it ran.
    mutating func refusedBeforeRunning() {
        switch state {
        case .active, .committing: state = .active(began: false)
        case .broken: state = .broken(began: false, committing: false)
        default: break
        }
    }

    /// The server failed a statement sent before the `COMMIT` of the same pipeline (its error
    /// answered it): the server skips the rest of a pipeline after an error, the `COMMIT`
    /// included, so the transaction did not commit, even if the connection then broke (a session
    /// the server ended says so first).
    mutating func commitSkipped() {
        switch state {
        case .committing: state = .active(began: true)
        case .broken(let began, committing: true): state = .broken(began: began, committing: false)
        default: break
        }
    }

    /// A statement that runs and commits on its own (outside a transaction block) was sent:
    /// from now on a lost connection leaves its outcome unknown.
    mutating func aloneSent() {
        guard !isBroken else { return }
        state = .committing
    }

    /// How the transaction commits: `.forget` when it sent nothing.
    mutating func commit() -> Ending {
        guard case .beginPending = state else { return .send }
        state = .idle
        return .forget
    }

    /// How the transaction rolls back: `.forget` when it sent nothing.
    mutating func rollback() -> Ending {
        commit()
    }

    /// The `COMMIT` or `ROLLBACK` sent was answered: the transaction is over.
    mutating func ended() {
        guard !isBroken else { return }
        state = .idle
    }

    /// A read's `COMMIT` was sent in pipeline mode; its answer is read before the next statement.
    mutating func commitSentUnread() {
        guard !isBroken else { return }
        state = .commitUnread
    }

    // MARK: Streams

    /// A single-row-mode query was sent; `stream` reads its rows.
    mutating func streamStarted(_ stream: Stream) {
        guard !isBroken else { return }
        state = .streaming(stream, began: hasBegun)
    }

    /// `stream` read its last row (or was finished early): the connection is free again.
    mutating func streamEnded(_ stream: Stream) {
        guard case .streaming(let active, let began) = state, active === stream else { return }
        state = .active(began: began)
    }

    /// `cursor` sent a `FETCH` that it reads later.
    mutating func fetchSent(_ cursor: Cursor) {
        guard !isBroken else { return }
        state = .fetching(cursor, began: hasBegun)
    }

    /// `cursor` ended: a `FETCH` it still had in flight was read by `finish()`.
    mutating func cursorEnded(_ cursor: Cursor) {
        guard case .fetching(let active, let began) = state, active === cursor else { return }
        state = .active(began: began)
    }

    // MARK: Failures

    /// libpq reported the connection unusable (or failed to send): it stays so.
    mutating func broke() {
        state = .broken(began: hasBegun, committing: mayHaveCommitted)
    }
}
