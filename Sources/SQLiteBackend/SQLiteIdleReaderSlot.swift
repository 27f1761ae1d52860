import Synchronization

/// One idle reader (a reader connection with its read transaction object), handed over without a
/// lock: a read takes it with one atomic exchange and gives it back with one compare-and-exchange.
///
/// `@unchecked Sendable` because the reader it holds is not: the invariant that makes it safe is
/// that the slot hands each reader it holds to exactly one caller (the exchange that empties it),
/// with acquire/release ordering, so a reader is only ever used by the one thread that took it.
final class SQLiteIdleReaderSlot: @unchecked Sendable {
    /// The reader, retained while it is here.
    private let reader = Atomic<Unmanaged<SQLiteReadTransaction>?>(nil)

    deinit {
        empty()
    }

    /// Takes the reader out, if there is one.
    /// - Returns: the reader, now the caller's alone.
    func take() -> SQLiteReadTransaction? {
        reader.exchange(nil, ordering: .acquiring)?.takeRetainedValue()
    }

    /// Puts `idle` in the slot when it is empty.
    /// - Parameter idle: a reader nobody uses any more.
    /// - Returns: whether the slot took it (it was empty).
    func put(_ idle: SQLiteReadTransaction) -> Bool {
        let retained = Unmanaged.passRetained(idle)
        // Sequentially consistent, for the backend's check of `close()` right after it.
        if reader.compareExchange(expected: nil, desired: retained, ordering: .sequentiallyConsistent).exchanged {
            return true
        }
        retained.release()
        return false
    }

    /// Takes the reader out and lets it go (its connection closes unless someone still holds it).
    func empty() {
        reader.exchange(nil, ordering: .sequentiallyConsistent)?.release()
    }
}
