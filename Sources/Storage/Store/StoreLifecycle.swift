import Foundation

/// Whether a store is open, and how many of its calls are running: `close()` waits for them,
/// and every call made once closing has begun is refused with `.closed`.
///
/// `@unchecked Sendable`: `state` is only read and written while `condition` is locked.
final class StoreLifecycle: @unchecked Sendable {
    private enum Phase { case open, closing, closed }

    private struct State {
        var phase = Phase.open
        var inFlight = 0
    }

    private let condition = NSCondition()
    private var state = State()

    /// Counts a call in; each successful `enter` is balanced by one `leave`.
    /// - Throws: ``StorageError`` with code `.closed` once `close()` has begun.
    func enter() throws {
        condition.lock()
        defer { condition.unlock() }
        guard state.phase == .open else { throw StorageError(.closed, "the store was closed") }
        state.inFlight += 1
    }

    /// Counts a call out, waking a `close()` waiting for the last one.
    func leave() {
        condition.lock()
        defer { condition.unlock() }
        state.inFlight -= 1
        if state.inFlight == 0 && state.phase != .open { condition.broadcast() }
    }

    /// Begins closing and waits for the calls in flight to return.
    /// - Returns: whether this caller must free the resources (and then call `didClose()`):
    ///   `false` when another caller began closing first, whose end this one waits for.
    func beginClose() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if state.phase != .open {
            while state.phase != .closed { condition.wait() }
            return false
        }
        state.phase = .closing
        while state.inFlight > 0 { condition.wait() }
        return true
    }

    /// Marks the store closed, releasing the other callers of `beginClose()`.
    func didClose() {
        condition.lock()
        defer { condition.unlock() }
        state.phase = .closed
        condition.broadcast()
    }
}
