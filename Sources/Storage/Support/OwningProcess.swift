#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
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
package struct OwningProcess: Sendable {
    /// The id of the process that opened the store.
    package let id: Int32

    /// The current process.
    package init() {
        id = getpid()
    }

    /// Whether this is still the process that opened the store.
    package var isCurrent: Bool { getpid() == id }

    /// Throws unless the current process is the one that opened the store.
    /// - Throws: `StorageError` with code `.misuse` naming both processes and `path`.
    package func check(path: String?) throws {
        let current = getpid()
        guard current != id else { return }
        throw StorageError(
            .misuse,
            "the store was used after fork(): it was opened by process \(id) and cannot be used in process "
                + "\(current); open it again in the new process",
            path: path
        )
    }
}
