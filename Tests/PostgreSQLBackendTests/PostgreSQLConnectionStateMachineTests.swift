import Testing

@testable import PostgreSQLBackend

/// The connection's state machine on its own: every path a connection takes, without a server
/// (its transitions call no libpq; the objects standing for streams and cursors are plain ones).
@Suite struct PostgreSQLConnectionStateMachineTests {
    final class Stream {}
    final class Cursor {}
    typealias Machine = PostgreSQLConnectionStateMachine<Stream, Cursor>

    /// Whether the machine answers `isInTransaction` by itself (without asking the server),
    /// and what.
    static func ownAnswer(_ machine: Machine) -> Bool? {
        var asked = false
        let answer = machine.isInTransaction {
            asked = true
            return true
        }
        return asked ? nil : answer
    }

    static func isReady(_ machine: Machine) -> Bool {
        if case .ready = machine.preparation() { return true }
        return false
    }

    static func isIdle(_ machine: Machine) -> Bool {
        if case .idle = machine.state { return true }
        return false
    }

    @Test func aNewConnectionIsIdleAndReady() {
        let machine = Machine()
        #expect(Self.isIdle(machine))
        #expect(Self.isReady(machine))
        #expect(!machine.isBroken)
        #expect(!machine.hasBegun)
        #expect(machine.pendingBegin == nil)
        #expect(Self.ownAnswer(machine) == false)
    }

    @Test func aPipelinedBeginWaitsForTheFirstStatementAndIsBegunOnceAnswered() {
        var machine = Machine()
        machine.begin("BEGIN", lock: nil)
        #expect(machine.pendingBegin == .init(begin: "BEGIN", lock: nil))
        // Open as far as the caller is concerned, though the server has seen nothing.
        #expect(Self.ownAnswer(machine) == true)
        #expect(!machine.hasBegun)
        #expect(Self.isReady(machine))
        machine.beginAnswered()
        #expect(machine.pendingBegin == nil)
        #expect(machine.hasBegun)
        // From now on the server's transaction status says whether a transaction is open.
        #expect(Self.ownAnswer(machine) == nil)
        #expect(machine.commit() == .send)
        machine.ended()
        #expect(Self.isIdle(machine))
    }

    @Test func aTransactionThatSentNothingIsForgotten() {
        var machine = Machine()
        machine.begin("BEGIN", lock: "LOCK TABLE t")
        #expect(machine.commit() == .forget)
        #expect(Self.isIdle(machine))
        machine.begin("BEGIN", lock: nil)
        #expect(machine.rollback() == .forget)
        #expect(Self.isIdle(machine))
        #expect(!machine.hasBegun)
    }

    @Test func theLockGoesWithTheBegin() {
        var machine = Machine()
        machine.begin("BEGIN ISOLATION LEVEL SERIALIZABLE", lock: "LOCK TABLE c IN ROW EXCLUSIVE MODE")
        #expect(machine.pendingBegin?.lock == "LOCK TABLE c IN ROW EXCLUSIVE MODE")
        // A new transaction replaces whatever was pending.
        machine.begin("BEGIN", lock: nil)
        #expect(machine.pendingBegin?.lock == nil)
    }

    @Test func aCursorsFetchInFlightIsReadBeforeTheNextStatement() throws {
        var machine = Machine()
        machine.begin("BEGIN", lock: nil)
        machine.beginAnswered()
        let cursor = Cursor()
        machine.fetchSent(cursor)
        #expect(machine.activeCursor === cursor)
        guard case .receiveFetch(let pending) = machine.preparation() else {
            Issue.record("expected the FETCH to be read first")
            return
        }
        #expect(pending === cursor)
        machine.fetchReceived()
        #expect(Self.isReady(machine))
        #expect(machine.hasBegun)
        // A cursor that ends while another's FETCH is in flight leaves that one alone.
        machine.fetchSent(cursor)
        machine.cursorEnded(Cursor())
        #expect(machine.activeCursor === cursor)
        machine.cursorEnded(cursor)
        #expect(machine.activeCursor == nil)
        #expect(Self.isReady(machine))
    }

    @Test func aSingleRowStreamIsBufferedBeforeTheNextStatement() {
        var machine = Machine()
        machine.beginAutocommit()
        machine.statementSent()
        let stream = Stream()
        machine.streamStarted(stream)
        #expect(machine.activeStream === stream)
        guard case .bufferStream(let pending) = machine.preparation() else {
            Issue.record("expected the stream to be buffered first")
            return
        }
        #expect(pending === stream)
        machine.streamDetached()
        #expect(Self.isReady(machine))
        // The stream ending later (its rows read from its buffer) changes nothing.
        machine.streamEnded(stream)
        #expect(Self.isReady(machine))
        #expect(!machine.hasBegun)
    }

    @Test func aStreamInsideABegunTransactionKeepsItBegun() {
        var machine = Machine()
        machine.begin("BEGIN", lock: nil)
        machine.beginAnswered()
        let stream = Stream()
        machine.streamStarted(stream)
        #expect(machine.hasBegun)
        machine.streamEnded(stream)
        #expect(machine.hasBegun)
        #expect(machine.activeStream == nil)
    }

    @Test func aPipelineBrokenBeforeTheBeginWasAnsweredMayRunAgain() {
        var machine = Machine()
        machine.begin("BEGIN", lock: "LOCK TABLE t")
        machine.broke()
        #expect(machine.isBroken)
        #expect(!machine.hasBegun)
        // A broken connection stays broken: a new transaction on it cannot begin.
        machine.begin("BEGIN", lock: nil)
        #expect(machine.isBroken)
        #expect(machine.pendingBegin == nil)
        machine.beginAutocommit()
        #expect(machine.isBroken)
    }

    @Test func aPipelineBrokenAfterItsCommitWasSentHasAnUnknownOutcome() {
        var machine = Machine()
        machine.begin("BEGIN", lock: nil)
        machine.commitSent()
        #expect(machine.hasBegun)
        machine.broke()
        #expect(machine.isBroken)
        #expect(machine.hasBegun)
        // Nothing revives it.
        machine.ended()
        machine.commitSentUnread()
        machine.aloneSent()
        #expect(machine.isBroken)
    }

    @Test func aRefusedBeginMeansNothingRan() {
        var machine = Machine()
        machine.begin("BEGIN", lock: "LOCK TABLE t")
        machine.commitSent()
        machine.refusedBeforeRunning()
        #expect(!machine.hasBegun)
        // Refused and then broken (a terminated idle connection says so first).
        machine.commitSent()
        machine.broke()
        machine.refusedBeforeRunning()
        #expect(machine.isBroken)
        #expect(!machine.hasBegun)
    }

    @Test func aStatementRunAloneHasBegunOnceSentUnlessRefused() {
        var machine = Machine()
        machine.begin("BEGIN", lock: nil)
        #expect(machine.commit() == .forget)
        machine.beginAutocommit()
        machine.aloneSent()
        #expect(machine.hasBegun)
        machine.refusedBeforeRunning()
        #expect(!machine.hasBegun)
        machine.aloneSent()
        machine.broke()
        #expect(machine.hasBegun)
    }

    @Test func aCommitWhoseAnswerIsOutstandingIsReadBeforeTheNextStatement() {
        var machine = Machine()
        machine.begin("BEGIN READ ONLY", lock: nil)
        machine.beginAnswered()
        #expect(machine.commit() == .send)
        machine.commitSentUnread()
        // The command in flight ends the transaction: not in one, without asking the server.
        #expect(Self.ownAnswer(machine) == false)
        #expect(!machine.hasBegun)
        guard case .readCommit = machine.preparation() else {
            Issue.record("expected the commit's answer to be read first")
            return
        }
        machine.commitRead()
        #expect(Self.isIdle(machine))
        #expect(Self.isReady(machine))
    }

    @Test func anAutocommitStatementLeavesIdleWithoutBeginning() {
        var machine = Machine()
        machine.beginAutocommit()
        machine.statementSent()
        #expect(!machine.hasBegun)
        #expect(Self.ownAnswer(machine) == nil)
        #expect(!Self.isIdle(machine))
    }

    // MARK: Whether a transaction lost with its connection may have committed

    @Test func aWriteLostBeforeItsCommitWasSentHasNotCommitted() {
        var machine = Machine()
        machine.begin("BEGIN", lock: "LOCK TABLE t")
        machine.beginAnswered()
        #expect(machine.hasBegun)
        #expect(!machine.mayHaveCommitted)
        // A stream and a cursor in flight: still not committed.
        let stream = Stream()
        machine.streamStarted(stream)
        #expect(!machine.mayHaveCommitted)
        machine.streamEnded(stream)
        machine.broke()
        // Began, so a read would not run again; not committed, so a write may.
        #expect(machine.hasBegun)
        #expect(!machine.mayHaveCommitted)
    }

    @Test func aWriteLostOnceItsCommitWasSentMayHaveCommitted() {
        var machine = Machine()
        machine.begin("BEGIN", lock: nil)
        machine.beginAnswered()
        machine.commitSent()
        // Awaiting the answer: whatever happens now, the server may have committed.
        #expect(machine.mayHaveCommitted)
        #expect(Self.isReady(machine))
        #expect(Self.ownAnswer(machine) == nil)
        machine.broke()
        #expect(machine.isBroken)
        #expect(machine.mayHaveCommitted)
        // A new transaction on the broken connection does not forget it was broken, and starts
        // from nothing.
        machine.begin("BEGIN", lock: nil)
        #expect(machine.isBroken)
        #expect(!machine.mayHaveCommitted)
    }

    @Test func aCommitAnsweredOrRefusedIsKnown() {
        var machine = Machine()
        machine.begin("BEGIN", lock: nil)
        machine.commitSent()
        machine.ended()
        #expect(!machine.mayHaveCommitted)
        #expect(Self.isIdle(machine))
        // The server's refusal of the BEGIN answered first: nothing ran.
        machine.begin("BEGIN", lock: nil)
        machine.commitSent()
        machine.refusedBeforeRunning()
        #expect(!machine.mayHaveCommitted)
        machine.broke()
        #expect(!machine.mayHaveCommitted)
    }

    @Test func aStatementTheServerFailedBeforeTheCommitMeansTheCommitDidNotRun() {
        var machine = Machine()
        machine.begin("BEGIN", lock: nil)
        machine.beginAnswered()
        machine.commitSent()
        // The server ended the session, saying so, before it ran the pipeline.
        machine.broke()
        machine.commitSkipped()
        #expect(machine.isBroken)
        #expect(machine.hasBegun)
        #expect(!machine.mayHaveCommitted)
        // Without a break: the transaction is left to roll back.
        machine.begin("BEGIN", lock: nil)
        var open = Machine()
        open.begin("BEGIN", lock: nil)
        open.beginAnswered()
        open.commitSent()
        open.commitSkipped()
        #expect(!open.mayHaveCommitted)
        #expect(open.hasBegun)
        #expect(Self.ownAnswer(open) == nil)
    }

    @Test func aStatementRunAloneMayHaveCommittedOnceSent() {
        var machine = Machine()
        machine.beginAutocommit()
        #expect(!machine.mayHaveCommitted)
        machine.aloneSent()
        #expect(machine.mayHaveCommitted)
        machine.ended()
        #expect(!machine.mayHaveCommitted)
        machine.beginAutocommit()
        machine.aloneSent()
        machine.broke()
        #expect(machine.mayHaveCommitted)
    }

    @Test func aReadsCommitSentWithoutWaitingIsNeverAnUnknownOutcome() {
        var machine = Machine()
        machine.begin("BEGIN READ ONLY", lock: nil)
        machine.beginAnswered()
        machine.commitSentUnread()
        machine.broke()
        #expect(!machine.mayHaveCommitted)
    }
}
