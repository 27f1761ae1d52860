/// The values of a query as an `AsyncSequence`, read in batches: memory holds one batch at a
/// time, whatever the number of records. Made by `ObjectStore.stream(_:where:orderBy:batchSize:)`.
///
/// ```swift
/// for try await order in store.stream(Order.self, where: Column("status") == "open") {
///     try await ship(order)
/// }
/// ```
///
/// Snapshots: each batch is read in a read transaction of its own, on the store's threads, and
/// no transaction stays open while the consumer runs (nor between batches): a slow consumer
/// never holds back a writer, pins old pages or blocks a checkpoint, and may write to the store
/// itself. The next batch starts strictly after the last record returned, in the query's order
/// (keyset paging), so no record is returned twice and none that exists and matches throughout
/// the stream is skipped; a record inserted, changed or deleted during the stream appears, or
/// not, according to where it sorts and when its change committed. For one consistent snapshot
/// of a bounded result, use `read(_:)` with `fetchAll`.
///
/// A consumer's task cancelled between batches ends the sequence (`next()` returns `nil`);
/// dropping the sequence or its iterator ends it with nothing left to release. A closed store
/// ends it with `StorageError.Code.closed` at the next batch.
public struct RecordStream<Element: Decodable & Sendable>: AsyncSequence, Sendable {
    /// The error `next()` throws.
    public typealias Failure = any Error

    let store: ObjectStore
    let predicate: StoragePredicate?
    let ordering: [Ordering]
    let batchSize: Int

    /// An iterator over the stream, reading the next batch when the current one is used up.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: RecordStream
        private var batch: [Element] = []
        private var position = 0
        /// The sort values of the last record read; `nil` before the first batch.
        private var last: [StorageValue]?
        private var isFinished = false

        init(_ stream: RecordStream) {
            self.stream = stream
        }

        /// The next value, or `nil` at the end (or once the task is cancelled).
        /// - Returns: the next value.
        /// - Throws: ``StorageError`` when a batch cannot be read.
        public mutating func next() async throws -> Element? {
            if position < batch.count {
                defer { position += 1 }
                return batch[position]
            }
            guard !isFinished, !Task.isCancelled else { return nil }
            let stream = stream
            let after = last
            let result: (values: [Element], last: [StorageValue]?)
            do {
                result = try await stream.store.perform {
                    try stream.store.withReadSession { session in
                        try session.streamBatch(
                            Element.self,
                            where: stream.predicate,
                            orderBy: stream.ordering,
                            after: after,
                            limit: stream.batchSize
                        )
                    }
                }
            } catch is CancellationError {
                isFinished = true
                return nil
            }
            batch = result.values
            last = result.last
            position = 0
            if batch.count < stream.batchSize { isFinished = true }
            guard !batch.isEmpty else { return nil }
            position = 1
            return batch[0]
        }
    }

    /// An iterator reading the stream from its start.
    /// - Returns: the iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(self)
    }
}

extension ObjectStore {
    /// The values of `type` matching `predicate`, sorted by `orderBy` (then by primary key), as
    /// an `AsyncSequence` read in batches of `batchSize`, in bounded memory. See ``RecordStream``
    /// for what each batch sees of concurrent writes.
    ///
    /// ```swift
    /// for try await person in store.stream(Person.self, where: Column("age") >= 18) { ... }
    /// ```
    /// - Parameters:
    ///   - type: the type stored.
    ///   - predicate: which values; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - batchSize: how many records each batch reads (at least 1).
    /// - Returns: the sequence; nothing is read before the first `next()`.
    public func stream<T: Decodable & Sendable>(
        _ type: T.Type,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        batchSize: Int = 1_000
    ) -> RecordStream<T> {
        RecordStream(store: self, predicate: predicate, ordering: ordering, batchSize: max(1, batchSize))
    }
}
