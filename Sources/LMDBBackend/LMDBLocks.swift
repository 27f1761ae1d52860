#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex locked and unlocked in different scopes (the writer's lock is held from the
/// start of a write transaction to its end, across several calls).
///
/// `@unchecked Sendable`: the mutex itself is the synchronisation; it is only touched through
/// `pthread_mutex_*`, which ThreadSanitizer sees.
final class LMDBMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = UnsafeMutablePointer.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
}

/// A pthread read-write lock: every transaction of the process holds it shared, and a change of
/// the map size holds it exclusively, because LMDB may only remap while no transaction of the
/// process is live.
///
/// `@unchecked Sendable`: the lock itself is the synchronisation.
final class LMDBReadWriteLock: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = UnsafeMutablePointer.allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func lockShared() { pthread_rwlock_rdlock(lock) }
    func unlock() { pthread_rwlock_unlock(lock) }

    /// Takes the lock exclusively, waiting at most `seconds`.
    /// - Returns: whether the lock was taken.
    func lockExclusive(waitingAtMost seconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += seconds
        return pthread_rwlock_timedwrlock(lock, &deadline) == 0
    }
}
