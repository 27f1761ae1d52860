#if canImport(Glibc)
import Glibc
import Synchronization
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(Glibc)
/// The number of `fork()`s between the first process and this one, counted by a
/// `pthread_atfork` handler in each child, so that checking the process costs an atomic load:
/// `getpid()` is a system call (close to a microsecond on a virtual machine), and every
/// transaction checks.
private let forkCount = Atomic<UInt64>(0)

/// Installs the handler (once, when the first store is opened); 0 when it is in place.
private let forkHandlerResult: Int32 = pthread_atfork(nil, nil) {
    // Runs in the child, before fork() returns there, while it has a single thread.
    _ = forkCount.wrappingAdd(1, ordering: .relaxed)
}
#endif

/// The process that opened a store, so that a child made by `fork()` cannot use it.
///
/// A child shares the parent's open file descriptors (and with them `flock` locks and file
/// offsets), gets copies of its locks in whatever state they were at the fork, and of the
/// engine's in-memory state (an LMDB environment, SQLite's connections and their view of the
/// WAL index): none of it may be used from two processes. A store used in the child could wait
/// forever for a lock no thread will release, or write beside the parent as if it held the
/// parent's lock. Every transaction checks the process first and fails with `.misuse` in
/// another process; the child opens the store again instead.
///
/// On Linux a child is recognized by a count of forks kept by a `pthread_atfork` handler
/// (a child made by a raw `clone` system call, which runs no such handler, is not); elsewhere,
/// and if the handler could not be installed, by `getpid()`.
public struct OwningProcess: Hashable, Sendable {
    /// The id of the process that opened the store.
    public let id: Int32
    #if canImport(Glibc)
    /// The fork count of the process that opened the store.
    private let forks: UInt64
    /// Whether the fork handler is in place, so that `forks` counts (read once here: reading
    /// the lazily set global at every check went through `swift_once`).
    private let countsForks: Bool
    #endif

    /// The current process.
    public init() {
        id = getpid()
        #if canImport(Glibc)
        countsForks = forkHandlerResult == 0
        forks = forkCount.load(ordering: .relaxed)
        #endif
    }

    /// Whether this is still the process that opened the store.
    public var isCurrent: Bool {
        #if canImport(Glibc)
        if countsForks { return forkCount.load(ordering: .relaxed) == forks }
        #endif
        return getpid() == id
    }

    /// Throws unless the current process is the one that opened the store.
    /// - Parameter path: the store, named in the error.
    /// - Throws: ``StorageError`` with code `.misuse` naming both processes and `path`.
    public func check(path: String?) throws {
        guard !isCurrent else { return }
        throw StorageError(
            .misuse,
            "the store was used after fork(): it was opened by process \(id) and cannot be used in process "
                + "\(getpid()); open it again in the new process",
            path: path
        )
    }
}
