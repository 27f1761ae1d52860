extension ObjectStore {
    /// The events the backend reports from now on: retries, conflicts, slow statements,
    /// connections opened and lost, maps grown (see ``StoreEvent`` and, for which backend
    /// reports what, <doc:TransactionsAndConcurrency>).
    ///
    /// ```swift
    /// let events = store.events()
    /// Task {
    ///     for await event in events where event.kind == .retry { log(event.description) }
    /// }
    /// ```
    ///
    /// Each call makes a new stream, which sees only events reported after it was made. While
    /// no stream lives (and the backend's ``StoreEventReporter`` has no handler), reporting costs
    /// one atomic load. A consumer that falls behind never slows the store: the stream keeps the
    /// newest `limit` undelivered events, drops older ones and counts them
    /// (``StoreEventStream/droppedCount``). The stream ends when the store is closed; a backend
    /// that reports no events (``StoreEventSource``) gives a stream that ends at once.
    /// - Parameter limit: how many undelivered events the stream keeps (at least 1).
    /// - Returns: the stream of events.
    public func events(bufferingNewest limit: Int = 1_000) -> StoreEventStream {
        // Counted as a call, so that a `close()` running now finishes this stream too.
        guard let source = backend as? any StoreEventSource, (try? lifecycle.enter()) != nil else {
            return .finished
        }
        defer { lifecycle.leave() }
        return source.eventReporter.subscribe(store: ObjectIdentifier(self), bufferingNewest: limit)
    }

    /// Finishes this store's event streams: at `close()`.
    func finishEventStreams() {
        (backend as? any StoreEventSource)?.eventReporter.finishStreams(of: ObjectIdentifier(self))
    }
}
