import Foundation
import StorageTestSupport
import Testing

@testable import Storage

/// The changes of the write with `ticket`: one collection named after the ticket, so that what
/// is published tells which write it came from.
private func changes(_ ticket: UInt64) -> [String: ChangeLog] {
    ["t\(ticket)": ChangeLog(collection: "t\(ticket)")]
}

/// Runs `body` on a thread of its own (the read depth is the thread's); the semaphore is
/// signalled when `body` returns.
private func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.start()
    return done
}

/// Whether `done` is signalled within a while (a thread that should return does).
private func returns(_ done: DispatchSemaphore) -> Bool { done.wait(timeout: .now() + .seconds(20)) == .success }

/// Whether `done` is still unsignalled after a moment (a thread that should be waiting is).
private func isWaiting(_ done: DispatchSemaphore) -> Bool {
    done.wait(timeout: .now() + .milliseconds(300)) == .timedOut
}

/// What was published, in order, by whom, and whether two publications ever overlapped.
private final class Published: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(ticket: UInt64, by: String)] = []
    private var inFlight = 0
    private var overlapCount = 0

    func record(_ changes: [String: ChangeLog], by publisher: String = "", dwell: Bool = false) {
        lock.withLock {
            inFlight += 1
            if inFlight > 1 { overlapCount += 1 }
        }
        // A publication that takes a moment, so that another one started meanwhile would show.
        if dwell { usleep(20) }
        lock.withLock {
            for name in changes.keys.sorted() { entries.append((UInt64(name.dropFirst())!, publisher)) }
            inFlight -= 1
        }
    }

    var tickets: [UInt64] { lock.withLock { entries.map(\.ticket) } }
    var publishers: [String] { lock.withLock { entries.map(\.by) } }
    var overlaps: Int { lock.withLock { overlapCount } }
}

/// On threads of their own: the tests block while threads they started wait.
@Suite(.dedicatedThreads) struct CommitSequencerTests {
    @Test func theNextTicketIsPublishedByItsOwnResolveBeforeItReturns() {
        let sequencer = CommitSequencer()
        let published = Published()
        #expect(sequencer.take() == 0)
        sequencer.resolve(0, changes(0)) { published.record($0) }
        #expect(published.tickets == [0])
        #expect(sequencer.take() == 1)
        #expect(sequencer.take() == 2)
        sequencer.resolve(1, changes(1)) { published.record($0) }
        sequencer.resolve(2, changes(2)) { published.record($0) }
        #expect(published.tickets == [0, 1, 2])
    }

    /// Writes that commit in the order 0, 1, 2 but finish in the order 2, 1, 0: nothing is
    /// published until 0 is resolved, then all three, in ticket order, by the thread that
    /// resolved 0; the two others return only then.
    @Test func ticketsResolvedOutOfOrderArePublishedInTicketOrder() {
        let sequencer = CommitSequencer()
        let published = Published()
        for expected in UInt64(0)..<3 { #expect(sequencer.take() == expected) }
        let third = onThread { sequencer.resolve(2, changes(2)) { published.record($0, by: "third") } }
        #expect(isWaiting(third))
        let second = onThread { sequencer.resolve(1, changes(1)) { published.record($0, by: "second") } }
        #expect(isWaiting(second))
        #expect(isWaiting(third))
        #expect(published.tickets.isEmpty)
        sequencer.resolve(0, changes(0)) { published.record($0, by: "first") }
        #expect(published.tickets == [0, 1, 2])
        #expect(published.publishers == ["first", "first", "first"])
        #expect(returns(second))
        #expect(returns(third))
    }

    /// A write run again voids its first ticket inside the engine's write (neither publishing
    /// nor waiting there) and takes another; a later write, resolved meanwhile, waits for the
    /// retry only until it resolves, and is published first.
    @Test func aVoidedTicketNeverBlocksLaterOnes() {
        let sequencer = CommitSequencer()
        let published = Published()
        let firstAttempt = sequencer.take()
        sequencer.void(firstAttempt)
        let other = sequencer.take()
        sequencer.resolve(other, changes(other)) { published.record($0) }
        #expect(published.tickets == [1])  // not held back by the void ticket 0

        // The retry's first attempt is voided after a later write has resolved.
        let attempt = sequencer.take()  // 2
        let later = sequencer.take()  // 3
        let laterDone = onThread { sequencer.resolve(later, changes(later)) { published.record($0) } }
        #expect(isWaiting(laterDone))  // 2 is still running
        sequencer.void(attempt)
        let retry = sequencer.take()  // 4
        #expect(published.tickets == [1])  // a void publishes nothing
        sequencer.resolve(retry, changes(retry)) { published.record($0) }
        #expect(published.tickets == [1, 3, 4])
        #expect(returns(laterDone))
    }

    /// A write that did not commit resolves its ticket with `nil`: it publishes nothing, does not
    /// wait, and lets the later writes waiting on it through.
    @Test func aWriteThatDidNotCommitLetsLaterOnesThrough() {
        let sequencer = CommitSequencer()
        let published = Published()
        let failed = sequencer.take()
        let later = sequencer.take()
        let laterDone = onThread { sequencer.resolve(later, changes(later)) { published.record($0) } }
        #expect(isWaiting(laterDone))
        let failedDone = onThread { sequencer.resolve(failed, nil) { published.record($0, by: "failed") } }
        #expect(returns(failedDone))
        #expect(returns(laterDone))
        #expect(published.tickets == [1])
        #expect(published.publishers == ["failed"])  // the thread that found it due published it

        // A failed write behind one still running does not wait for it.
        let running = sequencer.take()
        let failedLater = sequencer.take()
        #expect(returns(onThread { sequencer.resolve(failedLater, nil) { published.record($0) } }))
        sequencer.resolve(running, changes(running)) { published.record($0) }
        #expect(published.tickets == [1, 2])
    }

    @Test func aCommitThatChangedNothingIsNotPublished() {
        let sequencer = CommitSequencer()
        let published = Published()
        sequencer.resolve(sequencer.take(), [:]) { published.record($0) }
        #expect(published.tickets.isEmpty)
        let empty = sequencer.take()
        let next = sequencer.take()
        let nextDone = onThread { sequencer.resolve(next, changes(next)) { published.record($0) } }
        #expect(isWaiting(nextDone))
        sequencer.resolve(empty, [:]) { published.record($0) }
        #expect(returns(nextDone))
        #expect(published.tickets == [2])
    }

    /// A write whose ticket is due while another thread publishes waits for that publication,
    /// which then delivers its changes too (through the publishing thread's `publish`), before
    /// it returns.
    @Test func aWriteReturnsOnlyOnceItsChangesAreDelivered() {
        let sequencer = CommitSequencer()
        let published = Published()
        let inPublish = DispatchSemaphore(value: 0)
        let finishPublish = DispatchSemaphore(value: 0)
        let first = sequencer.take()
        let second = sequencer.take()
        let firstDone = onThread {
            sequencer.resolve(first, changes(first)) { changes in
                if changes["t0"] != nil {
                    inPublish.signal()
                    finishPublish.wait()
                }
                published.record(changes, by: "first")
            }
        }
        #expect(inPublish.wait(timeout: .now() + .seconds(20)) == .success)
        let deliveredOnReturn = Locked<[UInt64]?>(nil)
        let secondDone = onThread {
            sequencer.resolve(second, changes(second)) { published.record($0, by: "second") }
            deliveredOnReturn.withLock { $0 = published.tickets }
        }
        #expect(isWaiting(secondDone))
        #expect(isWaiting(firstDone))
        finishPublish.signal()
        #expect(returns(firstDone))
        #expect(returns(secondDone))
        #expect(deliveredOnReturn.withLock { $0 } == [0, 1])
        #expect(published.publishers == ["first", "first"])
    }

    /// `waitsForDelivery: false` (a thread reporting other processes' commits) returns at once,
    /// its changes published later in their place.
    @Test func aResolveThatMustNotWaitReturnsBeforeDelivery() {
        let sequencer = CommitSequencer()
        let published = Published()
        let running = sequencer.take()
        let report = sequencer.take()
        let reportDone = onThread {
            sequencer.resolve(report, changes(report), waitsForDelivery: false) { published.record($0) }
        }
        #expect(returns(reportDone))
        #expect(published.tickets.isEmpty)
        sequencer.resolve(running, changes(running)) { published.record($0) }
        #expect(published.tickets == [0, 1])
    }

    /// A thread with a read session open does not wait for delivery (the thread publishing may
    /// be waiting, in the backend, for that read to end); once the read is closed it waits again.
    @Test func aThreadWithAReadOpenDoesNotWait() {
        let sequencer = CommitSequencer()
        let published = Published()
        let running = sequencer.take()
        let inRead = sequencer.take()
        let afterRead = sequencer.take()
        let readerDone = onThread {
            let depth = CommitSequencer.enterRead()
            sequencer.resolve(inRead, changes(inRead)) { published.record($0) }
            depth.pointee -= 1
        }
        #expect(returns(readerDone))
        let closedDone = onThread {
            let depth = CommitSequencer.enterRead()
            depth.pointee -= 1
            sequencer.resolve(afterRead, changes(afterRead)) { published.record($0) }
        }
        #expect(isWaiting(closedDone))
        #expect(published.tickets.isEmpty)
        sequencer.resolve(running, changes(running)) { published.record($0) }
        #expect(returns(closedDone))
        #expect(published.tickets == [0, 1, 2])
    }

    /// The read depth is the thread's own: it starts at 0, counts nested reads through the one
    /// counter `enterRead()` returns, and another thread's reads do not show.
    @Test func theReadDepthIsPerThread() {
        let results = Locked<[String]>([])
        let threads = (0..<4).map { thread in
            onThread {
                var failures: [String] = []
                if CommitSequencer.readDepth != 0 { failures.append("a new thread starts in a read") }
                let counter = CommitSequencer.enterRead()
                var expected = 1
                for step in 0..<20_000 {
                    // Nested reads and their ends, in a pattern that differs between threads.
                    if (step * (thread + 3)) % 5 < 2 && expected > 1 {
                        counter.pointee -= 1
                        expected -= 1
                    } else {
                        let again = CommitSequencer.enterRead()
                        if again != counter { failures.append("a second counter at step \(step)") }
                        expected += 1
                    }
                    if CommitSequencer.readDepth != expected {
                        failures.append("depth \(CommitSequencer.readDepth), not \(expected), at step \(step)")
                    }
                }
                counter.pointee -= expected
                if CommitSequencer.readDepth != 0 { failures.append("the reads did not all end") }
                if CommitSequencer.enterRead() != counter { failures.append("the counter was not kept") }
                counter.pointee -= 1
                results.withLock { $0.append(contentsOf: failures.prefix(3)) }
            }
        }
        for done in threads { #expect(returns(done)) }
        #expect(results.withLock { $0 } == [])
    }

    /// Writers as a store runs them: each takes its ticket inside an exclusive "engine write"
    /// (some voiding a first attempt and retrying), then resolves after it, with changes,
    /// nothing, a failure, or without waiting, some inside a read. Every committed change is
    /// published once, in ticket order, by one thread at a time; a write that waits returns only
    /// once every commit up to its own is delivered.
    @Test func writersOnManyThreadsPublishInCommitOrder() {
        let sequencer = CommitSequencer()
        let published = Published()
        let engineWriter = NSLock()
        let expected = Locked<Set<UInt64>>([])
        let failures = Locked<[String]>([])
        let writers = (0..<4).map { writer in
            onThread {
                var random = SystemRandomNumberGenerator()
                for _ in 0..<400 {
                    engineWriter.lock()
                    var ticket = sequencer.take()
                    if Int.random(in: 0..<8, using: &random) == 0 {
                        sequencer.void(ticket)  // run again
                        ticket = sequencer.take()
                    }
                    engineWriter.unlock()
                    let kind = Int.random(in: 0..<10, using: &random)
                    let committed: [String: ChangeLog]? = kind == 0 ? nil : kind == 1 ? [:] : changes(ticket)
                    if kind > 1 { expected.withLock { _ = $0.insert(ticket) } }
                    let waits = kind != 2 && kind != 3
                    let depth = kind == 3 ? CommitSequencer.enterRead() : nil
                    sequencer.resolve(ticket, committed, waitsForDelivery: kind != 2) {
                        published.record($0, by: "\(writer)", dwell: true)
                    }
                    depth?.pointee -= 1
                    guard waits, committed != nil else { continue }
                    // Every commit up to this one is delivered.
                    let delivered = Set(published.tickets)
                    let due = expected.withLock { $0.filter { $0 <= ticket } }
                    if !due.isSubset(of: delivered) {
                        let missing = due.subtracting(delivered).sorted()
                        failures.withLock { $0.append("ticket \(ticket) returned before \(missing)") }
                    }
                }
            }
        }
        for done in writers { #expect(returns(done)) }
        // The writes that did not wait are delivered by the last one that did, or by a final one.
        sequencer.resolve(sequencer.take(), changes(1_000_000)) { published.record($0) }
        let committed = expected.withLock { $0.sorted() } + [1_000_000]
        #expect(published.tickets == committed)
        #expect(published.overlaps == 0)
        #expect(failures.withLock { Array($0.prefix(5)) } == [])
    }
}
