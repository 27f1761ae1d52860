import Foundation

/// The results of a query, kept current: the results as they are first, then again after each
/// commit that may have changed them. Made by `ObjectStore.observe(_:where:orderBy:limit:offset:)`
/// (an array of models) and `ObjectStore.observe(in:where:orderBy:limit:offset:)` (an array of
/// dictionaries).
///
/// ```swift
/// for try await sales in store.observe(Sale.self, where: Column("amount") >= 10, orderBy: [.ascending("id")]) {
///     show(sales)
/// }
/// ```
///
/// The query runs again only when the consumer asks for the next results and a commit touched
/// the observed collection since the last run, and at most once every 10 milliseconds: a burst
/// of commits while the consumer is busy costs one query, whose results are the latest state. A run reads a committed snapshot as the
/// async `fetchAll` does (on the consumer's task when the backend reads without waiting, else on
/// the store's threads), never on the thread that committed, and never holds back a writer. A
/// transaction that rolled back changes nothing and delivers nothing. When the results are
/// `Equatable` (models that are `Equatable`, and dictionaries), results equal to the last ones
/// delivered are not delivered again.
///
/// Commits made by other processes, or by another ``ObjectStore`` on the same files, are seen
/// too: on a backend that reports them (``ExternalCommitSource``, PostgreSQL) as they are
/// reported, and on an embedded engine (``ExternalCommitCounter``) by reading its commit counter
/// every 100 milliseconds while the sequence is iterated. The counter does not say which
/// collection changed, so such a commit runs the query again, and delivers only results that
/// differ when they are `Equatable`.
///
/// Nothing is read or subscribed before the first `next()`; each iterator has its own
/// subscription, ended when the iterator is released. The sequence ends (`next()` returns `nil`)
/// when the consuming task is cancelled or the store closes; an error of the query (an unknown
/// column, say) is thrown and ends it.
public struct LiveResults<Results: Sendable>: AsyncSequence, Sendable {
    /// The results of one run of the query.
    public typealias Element = Results
    /// The error `next()` throws.
    public typealias Failure = any Error

    let store: ObjectStore
    /// The observed collection's name, or the error that it is not valid.
    let collection: @Sendable () throws -> String
    /// One run of the query: a blocking read, called on the store's threads.
    let query: @Sendable () throws -> Results
    /// Whether two results are the same, when `Results` is `Equatable`.
    let isSame: (@Sendable (Results, Results) -> Bool)?

    init(
        store: ObjectStore,
        collection: @escaping @Sendable () throws -> String,
        query: @escaping @Sendable () throws -> Results
    ) {
        self.store = store
        self.collection = collection
        self.query = query
        isSame = Self.equality()
    }

    /// `==` of `Results` when it conforms to `Equatable` (`[T]` does when `T` does), looked up
    /// once: the conformance is found at run time, so that the API needs no second overload.
    private static func equality() -> (@Sendable (Results, Results) -> Bool)? {
        guard Results.self is any Equatable.Type else { return nil }
        return { first, second in (first as? any Equatable)?.isEqual(to: second) ?? false }
    }

    /// An iterator over the results: the first `next()` subscribes and runs the query, each later
    /// one waits for a commit that may change the results and runs it again.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: LiveResults
        private var feed: LiveResultsFeed?
        private var changes: AsyncStream<CollectionChange>.Iterator?
        private var last: Results?
        /// When the query last began to run.
        private var lastRun: ContinuousClock.Instant?
        private var isFinished = false

        init(_ sequence: LiveResults) {
            self.sequence = sequence
        }

        /// The current results: at once the first time, then once a commit changed them.
        /// - Returns: the results, or `nil` once the task is cancelled or the store closed.
        /// - Throws: the query's ``StorageError`` (`.invalidIdentifier`, `.unknownColumn`, …).
        public mutating func next() async throws -> Results? {
            guard !isFinished else { return nil }
            if feed == nil {
                let feed: LiveResultsFeed
                do {
                    feed = LiveResultsFeed(store: sequence.store, collection: try sequence.collection())
                } catch {
                    isFinished = true
                    throw error
                }
                self.feed = feed
                changes = feed.changes.makeAsyncIterator()
                lastRun = .now
                last = try await run(feed, first: true)
                return last
            }
            guard let feed else { return nil }
            while true {
                // At most one run per `minimumInterval`: commits meanwhile wait as one element,
                // and a writer's commit wakes nobody (waking the consumer was most of what an
                // observer cost a fast writer). A commit after a quiet spell is read at once.
                if let lastRun, ContinuousClock.now < lastRun + LiveResultsFeed.minimumInterval {
                    do {
                        try await Task.sleep(until: lastRun + LiveResultsFeed.minimumInterval, clock: .continuous)
                    } catch {
                        return finish()
                    }
                }
                // `nil`: the task was cancelled, the store closed, or the iterator's feed ended.
                guard await changes?.next() != nil else { return finish() }
                lastRun = .now
                guard let results = try await run(feed, first: false) else { return nil }
                if let isSame = sequence.isSame, let last, isSame(last, results) { continue }
                last = results
                return results
            }
        }

        /// Runs the query: the first time on the store's threads, later as the async `fetchAll`
        /// does (on the consumer's task when the backend can read without waiting, so that a re-run
        /// costs no trip to another thread, otherwise on the store's threads).
        /// - Returns: the results, or `nil` when the task was cancelled or the store closed.
        private mutating func run(_ feed: LiveResultsFeed, first: Bool) async throws -> Results? {
            let sequence = sequence
            let work: @Sendable () throws -> Results = {
                // The engine's reports of other processes' commits start before the first read
                // (PostgreSQL's LISTEN, which may wait for the server), and the counter is read
                // before each read, so that a commit after the read is never missed.
                if first { sequence.store.observeCommitsElsewhere() }
                feed.noteCommitCount()
                return try sequence.query()
            }
            do {
                let results = try await first ? sequence.store.perform(work) : sequence.store.performRead(work)
                if first { feed.startPolling() }
                return results
            } catch is CancellationError {
                return finish()
            } catch let error as StorageError where error.code == .closed {
                return finish()
            } catch {
                isFinished = true
                feed.stop()
                throw error
            }
        }

        private mutating func finish() -> Results? {
            isFinished = true
            feed?.stop()
            return nil
        }
    }

    /// An iterator; nothing is read before its first `next()`.
    /// - Returns: the iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(self)
    }
}

/// What tells one iterator of ``LiveResults`` that its results may have changed: a change stream of
/// the collection that keeps one element at most (a burst of commits while the consumer is busy
/// is one element, one query), fed by the store's commits and, on an embedded engine, by a poller
/// of its commit counter. Released with its iterator, which ends the subscription and the poller.
final class LiveResultsFeed: Sendable {
    /// How often an embedded engine's commit counter is read while a sequence is iterated: other
    /// processes' commits are seen within this much time.
    static let pollInterval: Duration = .milliseconds(100)
    /// The shortest time between two runs of an iterator's query: a burst of commits is read at
    /// most this often (100 times a second), each run seeing the latest state.
    static let minimumInterval: Duration = .milliseconds(10)

    let changes: AsyncStream<CollectionChange>
    private let continuation: AsyncStream<CollectionChange>.Continuation
    private let store: ObjectStore
    private let collection: String
    private let watch = CommitCountWatch()
    /// The poller, and whether the feed has stopped (a poller started after that is not kept).
    private let poller = Locked<(task: Task<Void, Never>?, isStopped: Bool)>((nil, false))

    init(store: ObjectStore, collection: String) {
        self.store = store
        self.collection = collection
        (changes, continuation) = AsyncStream.makeStream(
            of: CollectionChange.self,
            bufferingPolicy: .bufferingNewest(1)
        )
        store.changeHub.subscribe(collection, continuation)
    }

    deinit {
        stop()
    }

    /// Reads the engine's commit counter before a query: a poll that finds it moved afterwards
    /// means a commit the query may not have seen.
    func noteCommitCount() {
        guard let count = try? store.externalCommitCount() else { return }
        _ = watch.moved(to: count)
    }

    /// Starts polling the commit counter, for a backend that keeps one and does not report other
    /// processes' commits itself.
    func startPolling() {
        guard watch.hasCount, !store.isNotifiedOfCommitsElsewhere else { return }
        // Only what the poll needs: capturing `self` would keep the feed, and the poller, alive
        // after the iterator is released.
        let (store, collection, continuation, watch) = (store, collection, continuation, watch)
        let task = Task.detached(priority: .utility) {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: LiveResultsFeed.pollInterval)
                    // On the store's threads: reading the counter may touch the disk.
                    let count = try await store.perform { try store.externalCommitCount() }
                    guard let count, watch.moved(to: count) else { continue }
                } catch {
                    return  // cancelled, or the store closed
                }
                let marker = CollectionChange(collection: collection, upserted: [], deleted: [])
                if case .terminated = continuation.yield(marker) { return }
            }
        }
        let kept = poller.withLock { poller in
            guard !poller.isStopped else { return false }
            poller.task = task
            return true
        }
        if !kept { task.cancel() }
    }

    /// Ends the subscription and the poller.
    func stop() {
        continuation.finish()
        let task = poller.withLock { poller in
            poller.isStopped = true
            defer { poller.task = nil }
            return poller.task
        }
        task?.cancel()
    }
}

/// The commit count a feed last saw, shared by its queries and its poller.
final class CommitCountWatch: Sendable {
    private let last = Locked<UInt64?>(nil)

    /// Whether a count was seen: the backend keeps one.
    var hasCount: Bool { last.withLock { $0 != nil } }

    /// Whether `count` differs from the last count seen, which it becomes.
    func moved(to count: UInt64) -> Bool {
        last.withLock { last in
            defer { last = count }
            return last != count
        }
    }
}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    fileprivate func isEqual(to other: Any) -> Bool {
        (other as? Self) == self
    }
}
