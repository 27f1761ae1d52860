#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`, shared by every module of the package.
///
/// Why not `Synchronization.Mutex`: on Linux it waits on a futex directly, which
/// ThreadSanitizer cannot see, so every value it guards shows up as a data race under
/// `swift test --sanitize=thread`. A pthread mutex is intercepted by the sanitizer, so our
/// race checks stay meaningful.
///
/// Guard a value with a size, never `Void`: exclusive access to a zero-sized stored property is
/// reported at the address just past the object, which can be the next heap object, so
/// ThreadSanitizer reports a race between two unrelated locks.
///
/// `@unchecked Sendable`: `value` is only read or written inside `withLock`, with the mutex held.
package final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Behind a pointer: a stored `var` of a class pays a dynamic exclusivity check on every
    /// access, which cost more than the lock itself; the mutex already makes access exclusive.
    private let value: UnsafeMutablePointer<Value>

    package init(_ value: Value) {
        self.value = UnsafeMutablePointer.allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = UnsafeMutablePointer.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
