import Foundation
import Synchronization

/// Whether a store is open, and how many of its calls are running: `close()` waits for them,
/// and every call made once closing has begun is refused with `.closed`.
///
/// A call counts itself in and out with one atomic operation each (`counter`): the lock and
/// condition are only taken by `close()`, and by the last call to leave once closing has begun.
/// Two lock round trips per call were a tenth of a key look-up's own cost.
///
/// `@unchecked Sendable`: `closeBegun` and `isClosed` are only read and written while
/// `condition` is locked; `counter` is atomic.
final class StoreLifecycle: @unchecked Sendable {
    /// Twice the number of calls counted in, plus 1 once closing has begun.
    private let counter = Atomic<Int>(0)
    private let condition = NSCondition()
    private var closeBegun = false
    private var isClosed = false

    /// Counts a call in; each successful `enter` is balanced by one `leave`.
    /// - Throws: ``StorageError`` with code `.closed` once `close()` has begun.
    func enter() throws {
        let before = counter.wrappingAdd(2, ordering: .acquiring).oldValue
        guard before & 1 == 0 else {
            leave()
            throw StorageError(.closed, "the store was closed")
        }
    }

    /// Counts a call out, waking a `close()` waiting for the last one.
    func leave() {
        let after = counter.wrappingSubtract(2, ordering: .releasing).newValue
        guard after == 1 else { return }
        // Closing has begun and no call is left: `beginClose` checks the count under the lock
        // before it waits, so taking the lock here cannot miss it.
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Begins closing and waits for the calls in flight to return.
    /// - Returns: whether this caller must free the resources (and then call `didClose()`):
    ///   `false` when another caller began closing first, whose end this one waits for.
    func beginClose() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if closeBegun {
            while !isClosed { condition.wait() }
            return false
        }
        closeBegun = true
        counter.bitwiseOr(1, ordering: .acquiringAndReleasing)
        while counter.load(ordering: .acquiring) >> 1 > 0 { condition.wait() }
        return true
    }

    /// Marks the store closed, releasing the other callers of `beginClose()`.
    func didClose() {
        condition.lock()
        defer { condition.unlock() }
        isClosed = true
        condition.broadcast()
    }
}
