import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Publishes the changes of committed write transactions in commit order without a lock held
/// across the backend's `write`.
///
/// A lock held from the start of a write to the publication of its changes would deadlock with a
/// backend that waits, inside `write`, for the process's reads to end (LMDB growing its map), when
/// one of those reads is a `forEach` whose body saves: the save would wait for the lock. Instead a
/// write takes a ticket inside its engine transaction, where writers run one at a time
/// (``StorageBackend``'s requirement), so tickets follow commit order; after the write it resolves
/// the ticket (committed with its changes, or void), and whichever thread finds the next tickets
/// resolved publishes them, in order, while no other thread is publishing.
///
/// `@unchecked Sendable`: every stored property other than `condition` is read and written only
/// while `condition` is locked.
final class CommitSequencer: @unchecked Sendable {
    private let condition = NSCondition()
    /// The next ticket to hand out.
    private var issued: UInt64 = 0
    /// Every ticket below this one is taken for publication or void.
    private var published: UInt64 = 0
    /// Every ticket below this one is delivered or void.
    private var delivered: UInt64 = 0
    /// Resolved tickets not yet published: the changes, or `nil` for a write that did not commit.
    private var resolved: [UInt64: [String: ChangeLog]?] = [:]
    /// Whether a thread is publishing (outside the lock).
    private var isPublishing = false

    /// The number of read sessions open on the current thread, over every store: a counter of
    /// the thread's own, made on its first read and freed when it exits. A read counts itself in
    /// and out through the counter's address (`enterRead()`), one `pthread_getspecific` in all,
    /// where storing the number itself took a `pthread_setspecific` each way.
    private static let readDepthKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        return key
    }()

    static var readDepth: Int {
        guard let counter = pthread_getspecific(readDepthKey) else { return 0 }
        return counter.assumingMemoryBound(to: Int.self).pointee
    }

    /// Counts a read session in on the current thread.
    /// - Returns: the thread's counter, to count it out with `pointee -= 1`.
    @inline(__always)
    static func enterRead() -> UnsafeMutablePointer<Int> {
        let counter = pthread_getspecific(readDepthKey).map { $0.assumingMemoryBound(to: Int.self) } ?? makeCounter()
        counter.pointee += 1
        return counter
    }

    @inline(never)
    private static func makeCounter() -> UnsafeMutablePointer<Int> {
        let counter = malloc(MemoryLayout<Int>.size)!.bindMemory(to: Int.self, capacity: 1)
        counter.initialize(to: 0)
        pthread_setspecific(readDepthKey, counter)
        return counter
    }

    /// A ticket for the write transaction the caller is inside.
    func take() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        issued += 1
        return issued - 1
    }

    /// Marks the ticket of an attempt that the backend runs again as void. Called inside the
    /// write body: it neither publishes nor waits, since the engine's writer lock is held.
    func void(_ ticket: UInt64) {
        condition.lock()
        resolved[ticket] = .some(nil)
        condition.unlock()
    }

    /// Resolves `ticket` and publishes every transaction now due, in commit order. Called after
    /// the backend's write has returned or thrown.
    ///
    /// Unless the thread has a read session open, it returns only once its own changes are
    /// delivered (by it or by the thread publishing before it), so what it reads next (settings,
    /// say) already reflects them. A thread with a read open does not wait: the thread
    /// publishing may itself be waiting, in the backend, for that read to end.
    /// - Parameters:
    ///   - ticket: the transaction's place in the commit order, from `take()`.
    ///   - changes: what the transaction changed, or `nil` when it did not commit.
    ///   - waitsForDelivery: `false` for a caller that must never wait for this store's writes in
    ///     flight (a backend's thread reporting other processes' commits, which a write of this
    ///     store may itself be waiting for, inside the engine).
    ///   - publish: delivers one transaction's changes; called without the lock held.
    func resolve(
        _ ticket: UInt64,
        _ changes: [String: ChangeLog]?,
        waitsForDelivery: Bool = true,
        publish: ([String: ChangeLog]) -> Void
    ) {
        condition.lock()
        let waits = waitsForDelivery && changes != nil && Self.readDepth == 0
        if ticket == published && !isPublishing && resolved.isEmpty {
            // The next ticket, and nothing resolved after it (a single writer's usual case): taken
            // for publication at once, without a trip through `resolved`.
            published += 1
            if let changes, !changes.isEmpty {
                isPublishing = true
                condition.unlock()
                publish(changes)
                condition.lock()
                isPublishing = false
            }
        } else {
            resolved[ticket] = .some(changes)
        }
        while true {
            if !isPublishing {
                var due: [[String: ChangeLog]] = []
                while !resolved.isEmpty, let next = resolved.removeValue(forKey: published) {
                    if let next, !next.isEmpty { due.append(next) }
                    published += 1
                }
                if !due.isEmpty {
                    isPublishing = true
                    condition.unlock()
                    for changes in due { publish(changes) }
                    condition.lock()
                    isPublishing = false
                    continue
                }
                delivered = published
                condition.broadcast()
            }
            // Waits for the thread publishing, or for an earlier write still running (run again
            // after a map growth, say) to resolve its ticket.
            guard waits, delivered <= ticket else { break }
            condition.wait()
        }
        condition.unlock()
    }
}
