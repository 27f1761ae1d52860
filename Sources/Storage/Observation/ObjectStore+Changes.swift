extension ObjectStore {
    /// The changes committed to `type`'s collection from now on: one ``CollectionChange`` per
    /// committed transaction that touched it, delivered after the commit.
    ///
    /// ```swift
    /// for await change in store.changes(of: Person.self) {
    ///     print(change.upserted, change.deleted)   // primary keys
    /// }
    /// ```
    /// The subscription starts when this method returns, so a transaction committed after the
    /// call is delivered even when the loop starts consuming later. Rolled-back transactions and
    /// other collections deliver nothing. Changes are made by this ``ObjectStore`` instance; writes
    /// by other processes, or by another ``ObjectStore`` on the same files, are not seen, except on
    /// a backend that reports them (``ExternalCommitSource``, PostgreSQL): the store's first stream
    /// starts those reports, and this method returns once they run.
    ///
    /// A slow consumer never blocks a writer: changes wait in the stream's buffer. With the
    /// default `.unbounded` policy a consumer that falls behind gets every change later, and
    /// the buffer grows meanwhile; pass `.bufferingNewest(n)` to keep only the latest `n`
    /// undelivered changes (older ones are dropped). Cancelling the consuming task, or releasing
    /// the stream, ends the subscription and frees it.
    ///
    /// A type whose collection name is invalid has no changes: its stream finishes at once.
    /// - Parameters:
    ///   - type: the model type whose collection is observed.
    ///   - bufferingPolicy: what to keep while the consumer falls behind.
    /// - Returns: a stream of the collection's changes, until it is released or its task cancelled.
    public func changes<T>(
        of type: T.Type,
        bufferingPolicy: AsyncStream<CollectionChange>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<CollectionChange> {
        guard let collection = try? collectionName(for: type) else {
            return AsyncStream { $0.finish() }
        }
        return changes(in: collection, bufferingPolicy: bufferingPolicy)
    }

    /// The changes committed to the collection named `collection` (as given to
    /// `insert(jsonArray:into:)`, say) from now on; see `changes(of:bufferingPolicy:)`.
    /// An invalid collection name gives a stream that finishes at once.
    /// - Parameters:
    ///   - collection: the collection's name.
    ///   - bufferingPolicy: what to keep while the consumer falls behind.
    /// - Returns: a stream of the collection's changes, until it is released or its task cancelled.
    public func changes(
        in collection: String,
        bufferingPolicy: AsyncStream<CollectionChange>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<CollectionChange> {
        guard (try? Identifier.validateCollection(collection)) != nil else {
            return AsyncStream { $0.finish() }
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: CollectionChange.self,
            bufferingPolicy: bufferingPolicy
        )
        changeHub.subscribe(collection, continuation)
        // A backend that reports other processes' commits starts doing so now, at the store's
        // first subscription, and is reporting when this returns.
        observeCommitsElsewhere()
        return stream
    }

    /// How many change streams of this store are live. A stream whose consumer was cancelled,
    /// or that was released, no longer counts.
    package var changeSubscriberCount: Int { changeHub.subscriberCount }
}
