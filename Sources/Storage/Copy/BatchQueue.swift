import Foundation

/// The batches of a copy on their way from the thread that reads them to the thread that writes
/// them: at most `capacity` waiting, then the reader waits. It ends with the source's digest, or
/// with the reader's error; the writer can cancel it, which stops the reader at its next batch.
final class BatchQueue: @unchecked Sendable {
    // `@unchecked Sendable`: every stored property is read and written only with `condition`
    // locked.
    private let condition = NSCondition()
    private let capacity: Int
    private var batches: [[[StorageValue]]] = []
    private var digest: CollectionDigest?
    private var error: (any Error)?
    private var isCancelled = false

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Adds a batch, waiting while the queue is full. Returns `false` once the queue is
    /// cancelled (the reader then stops).
    func put(_ batch: [[StorageValue]]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while batches.count >= capacity && !isCancelled { condition.wait() }
        guard !isCancelled else { return false }
        batches.append(batch)
        condition.broadcast()
        return true
    }

    /// Ends the queue: every batch was put; `digest` is the digest of them all.
    func finish(_ digest: CollectionDigest) {
        condition.lock()
        self.digest = digest
        condition.broadcast()
        condition.unlock()
    }

    /// Ends the queue with the reader's error.
    func fail(_ error: any Error) {
        condition.lock()
        self.error = error
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the reader at its next batch.
    func cancel() {
        condition.lock()
        isCancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// The next batch, waiting for it; `nil` at the end.
    /// - Throws: the reader's error.
    func take() throws -> [[StorageValue]]? {
        condition.lock()
        defer { condition.unlock() }
        while batches.isEmpty && digest == nil && error == nil { condition.wait() }
        if !batches.isEmpty {
            let batch = batches.removeFirst()
            condition.broadcast()
            return batch
        }
        if let error { throw error }
        return nil
    }

    /// The digest of every batch read, once `take()` returned `nil`.
    func result() throws -> CollectionDigest {
        condition.lock()
        defer { condition.unlock() }
        if let error { throw error }
        return digest ?? CollectionDigest()
    }
}
