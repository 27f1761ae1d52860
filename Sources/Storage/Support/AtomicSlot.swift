import Synchronization

/// A place for one object, handed over without a lock: taken out with one atomic exchange, put
/// back with one compare-and-exchange. The store keeps a spare decoder, the plan of the type it
/// looked up last, and the backends an idle reader in one (a lock round trip cost more than the
/// look-up it served: docs/BENCHMARKS.md).
///
/// `@unchecked Sendable` because the object it holds need not be: the slot hands the object it
/// holds to exactly one caller (the exchange that empties it), with acquire/release ordering, so
/// an object taken out is used by the one thread that took it. `peek` alone hands out a shared
/// reference: use it only for objects whose state is itself thread-safe.
///
/// The atomic holds `Unmanaged<AnyObject>`, not `Unmanaged<Object>`: the slot's methods are
/// generic code where a backend's module calls them, and an atomic of a generic type looked up
/// its metadata on every call (about 1,200 instructions a key look-up on LMDB under callgrind,
/// docs/BENCHMARKS.md, "Counts held in CI"); the one generic step left is a cast.
package final class AtomicSlot<Object: AnyObject>: @unchecked Sendable {
    /// The object, retained while it is here.
    private let held = Atomic<Unmanaged<AnyObject>?>(nil)

    /// An empty slot.
    package init() {}

    deinit {
        empty()
    }

    /// Takes the object out, if there is one.
    /// - Returns: the object, now the caller's alone; `nil` when the slot is empty.
    @inline(__always)
    package func take() -> Object? {
        held.exchange(nil, ordering: .acquiring).map { Self.object($0.takeRetainedValue()) }
    }

    /// Takes the object out when `matches` accepts it; one it does not accept goes back (or is
    /// let go, when another was put in meanwhile).
    /// - Parameter matches: whether the held object is the one wanted.
    /// - Returns: the object, now the caller's alone; `nil` when the slot is empty or holds
    ///   another.
    @inline(__always)
    package func take(where matches: (Object) -> Bool) -> Object? {
        guard let taken = held.exchange(nil, ordering: .acquiring) else { return nil }
        let object = Self.object(taken.takeRetainedValue())
        if matches(object) { return object }
        putBack(object)
        return nil
    }

    /// A reference to the held object when `matches` accepts it, which stays in the slot (where
    /// another thread may take it at once: its state must be safe to share).
    /// - Parameter matches: whether the held object is the one wanted.
    /// - Returns: the object, or `nil` when the slot is empty (another thread has it out) or
    ///   holds another.
    @inline(__always)
    package func peek(where matches: (Object) -> Bool) -> Object? {
        guard let taken = held.exchange(nil, ordering: .acquiring) else { return nil }
        // The caller's own reference, taken before the object goes back: once back, another
        // thread may take it out and release it.
        let object = Self.object(taken.takeRetainedValue())
        let found = matches(object) ? object : nil
        putBack(object)
        return found
    }

    /// Puts `object` in the slot when it is empty.
    /// - Parameter object: an object nobody else uses.
    /// - Returns: whether the slot took it (it was empty).
    @discardableResult
    package func put(_ object: Object) -> Bool {
        let retained = Unmanaged<AnyObject>.passRetained(object)
        // Sequentially consistent: a backend checks whether it was closed right after putting a
        // reader back, and that load must not be ordered before this store.
        if held.compareExchange(expected: nil, desired: retained, ordering: .sequentiallyConsistent).exchanged {
            return true
        }
        retained.release()
        return false
    }

    /// Puts `object` in the slot in place of what it held, which is let go.
    /// - Parameter object: the object to keep.
    package func replace(with object: Object) {
        held.exchange(Unmanaged<AnyObject>.passRetained(object), ordering: .acquiringAndReleasing)?.release()
    }

    /// Takes the object out and lets it go.
    package func empty() {
        held.exchange(nil, ordering: .sequentiallyConsistent)?.release()
    }

    /// A held object as the slot's type: only objects of that type are ever put in.
    @inline(__always)
    private static func object(_ held: AnyObject) -> Object {
        unsafeDowncast(held, to: Object.self)
    }

    /// `put`, for an object that was just in the slot.
    @inline(__always)
    private func putBack(_ object: Object) {
        let retained = Unmanaged<AnyObject>.passRetained(object)
        if !held.compareExchange(expected: nil, desired: retained, ordering: .releasing).exchanged {
            retained.release()
        }
    }
}
