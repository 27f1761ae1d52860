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

/// Admits the process's transactions to the map and lets a change of the map size wait for them:
/// LMDB may remap only while no transaction of the process is live (`mdb_env_set_mapsize`), and
/// does not check it.
///
/// Unlike a reader-preferring read-write lock, a growth that has been asked for stops new
/// transactions at the gate, so it waits only for the transactions already live, however many
/// threads keep reading. A transaction begun by a thread that already has one live (a read
/// nested in a read, a write started inside a `forEach`), or by the thread holding the writer lock,
/// is let through even then: it is part of what the growth waits for, and stopping it would make
/// the growth wait for itself.
///
/// `@unchecked Sendable`: every stored property other than the pthread objects is read and
/// written only while `mutex` is held; the pthread objects are the synchronisation.
final class LMDBMapGate: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    private var liveReads = 0
    private var liveWrites = 0
    /// Growths waiting for the live transactions to end.
    private var askedGrowths = 0
    /// Whether a growth is changing the map now.
    private var isGrowing = false

    init() {
        mutex = UnsafeMutablePointer.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        changed = UnsafeMutablePointer.allocate(capacity: 1)
        changed.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if os(Linux)
        // Timed waits measure elapsed time, not the wall clock, which may be set back.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(changed, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(changed)
        changed.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Admits a transaction, waiting while a growth is asked for or running unless `nested`.
    /// - Parameters:
    ///   - write: whether it is the write transaction.
    ///   - nested: whether the calling thread already has a live transaction or holds the writer
    ///     lock; such a transaction waits only while the map is being changed.
    func enter(write: Bool, nested: Bool) {
        pthread_mutex_lock(mutex)
        while holdsBack(nested: nested) { pthread_cond_wait(changed, mutex) }
        if write { liveWrites += 1 } else { liveReads += 1 }
        pthread_mutex_unlock(mutex)
    }

    /// Admits a read transaction as `enter(write: false, nested:)` does if it can at once.
    /// - Parameter nested: as for `enter`.
    /// - Returns: whether it was admitted (`false` while a growth is asked for or running).
    func tryEnter(nested: Bool) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard !holdsBack(nested: nested) else { return false }
        liveReads += 1
        return true
    }

    /// Whether a transaction must wait at the gate: while the map is being changed, and, unless
    /// `nested`, while a growth is asked for. Called with `mutex` held.
    private func holdsBack(nested: Bool) -> Bool {
        isGrowing || (askedGrowths > 0 && !nested)
    }

    /// Ends a transaction admitted by `enter`.
    func leave(write: Bool) {
        pthread_mutex_lock(mutex)
        if write { liveWrites -= 1 } else { liveReads -= 1 }
        if liveReads + liveWrites == 0 { pthread_cond_broadcast(changed) }
        pthread_mutex_unlock(mutex)
    }

    /// Waits while a growth is asked for or running. A writer calls it before taking the writer
    /// lock, so a growth asked for meanwhile is not held up by a stream of later writers.
    func waitForGrowths() {
        pthread_mutex_lock(mutex)
        while isGrowing || askedGrowths > 0 { pthread_cond_wait(changed, mutex) }
        pthread_mutex_unlock(mutex)
    }

    /// What a growth found still live when it gave up waiting.
    struct Stalled: Error {
        var reads: Int
        var writes: Int
    }

    /// Runs `body` once no transaction of the process is live, keeping new ones out from the
    /// call on; waits at most `seconds` for the live ones to end.
    /// - Throws: `Stalled` when transactions were still live after `seconds`; what `body` throws.
    func exclusively<R>(waitingAtMost seconds: Int, _ body: () throws -> R) throws -> R {
        pthread_mutex_lock(mutex)
        // One growth at a time; the next one usually finds the map already large enough.
        while isGrowing { pthread_cond_wait(changed, mutex) }
        askedGrowths += 1
        var deadline = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        #else
        clock_gettime(CLOCK_REALTIME, &deadline)
        #endif
        deadline.tv_sec += seconds
        while liveReads + liveWrites > 0 || isGrowing {
            if pthread_cond_timedwait(changed, mutex, &deadline) == ETIMEDOUT
                && (liveReads + liveWrites > 0 || isGrowing)
            {
                let stalled = Stalled(reads: liveReads, writes: liveWrites)
                askedGrowths -= 1
                pthread_cond_broadcast(changed)
                pthread_mutex_unlock(mutex)
                throw stalled
            }
        }
        askedGrowths -= 1
        isGrowing = true
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            isGrowing = false
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }
}
