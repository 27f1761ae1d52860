import Synchronization

/// Where a backend reports its ``StoreEvent``s, and where an app listens: a handler given when
/// the reporter is made, and the streams of `ObjectStore.events(bufferingNewest:)`.
///
/// Pass one in a backend's configuration to see the events from the moment the store opens
/// (its first connection) and to time statements:
///
/// ```swift
/// let events = StoreEventReporter(slowStatementThreshold: .milliseconds(250)) { event in
///     if event.kind == .retry { retries.add(1) }   // any Sendable counter
/// }
/// let store = try ObjectStore(backend: .postgreSQL(url: url, configuration: .init(events: events)))
/// ```
///
/// A backend given none makes its own, without a handler or a threshold: its events then reach
/// only the store's streams.
///
/// # Cost and delivery
///
/// While nobody listens (no handler, no live stream), reporting an event costs one atomic load
/// and builds nothing, and statements are not timed. The handler is called synchronously on the
/// thread where the event happened — a writer in the middle of a transaction, a connection being
/// opened — so it must be quick, must not block, and must not call the store (it may be inside
/// the store's write lock). Streams never block the reporting thread: each holds at most its
/// `bufferingNewest` undelivered events and drops the oldest beyond that, counting them
/// (``StoreEventStream/droppedCount``). A stream sees only events reported after it was made:
/// nothing is replayed.
///
/// Hashable by identity, so that the configurations holding it stay `Hashable`.
public final class StoreEventReporter: Sendable, Hashable {
    /// A statement that runs at least this long is reported as `slowStatement`; `nil` times no
    /// statement. Statements are timed only while somebody listens.
    public let slowStatementThreshold: Duration?
    private let handler: (@Sendable (StoreEvent) -> Void)?
    /// The live streams, by the store that made them (its `ObjectIdentifier`), so that a store's
    /// `close()` finishes its own streams and not those of another store sharing the reporter.
    private let streams = Locked<[(id: Int, store: ObjectIdentifier, stream: StoreEventStream.Subscription)]>([])
    /// How many streams are live: read without the lock by every report.
    private let streamCount = Atomic<Int>(0)
    private let nextID = Atomic<Int>(0)

    /// Creates a reporter.
    /// - Parameters:
    ///   - slowStatementThreshold: the duration from which a statement is reported as slow, or
    ///     `nil` to time none.
    ///   - handler: called with every event, synchronously on the thread where it happened; quick,
    ///     never blocking, never calling the store. `nil` for none (streams only).
    public init(
        slowStatementThreshold: Duration? = nil,
        handler: (@Sendable (StoreEvent) -> Void)? = nil
    ) {
        self.slowStatementThreshold = slowStatementThreshold
        self.handler = handler
    }

    deinit {
        for entry in streams.withLock({ $0 }) { entry.stream.finish() }
    }

    /// Whether anybody listens: a handler, or at least one live stream. One atomic load.
    public var isListening: Bool {
        handler != nil || streamCount.load(ordering: .relaxed) > 0
    }

    /// Reports an event to the handler and every live stream; builds it only when somebody
    /// listens.
    /// - Parameter event: the event, made only while `isListening`.
    public func report(_ event: @autoclosure () -> StoreEvent) {
        guard isListening else { return }
        let made = event()
        handler?(made)
        guard streamCount.load(ordering: .relaxed) > 0 else { return }
        // Yielded outside the lock: a stream's termination handler takes the lock.
        for entry in streams.withLock({ $0 }) { entry.stream.yield(made) }
    }

    /// The time a statement starts, when it is to be timed: while somebody listens and a
    /// `slowStatementThreshold` is set; `nil` (having read no clock) otherwise. Pass it to
    /// `statementEnded(startedAt:_:backend:location:)` when the statement ends.
    ///
    /// ```swift
    /// let started = reporter.statementStarting()
    /// defer { reporter.statementEnded(startedAt: started, sql, backend: "MyEngine") }
    /// ```
    /// - Returns: the start, or `nil` when no statement is timed.
    public func statementStarting() -> ContinuousClock.Instant? {
        guard slowStatementThreshold != nil, isListening else { return nil }
        return .now
    }

    /// Reports a statement begun at `start` as `slowStatement` when it took at least
    /// `slowStatementThreshold`; does nothing when `start` is `nil`. `description` is made only
    /// for a slow statement.
    /// - Parameters:
    ///   - start: what `statementStarting()` returned.
    ///   - description: the statement's text with its values as parameters, never a value.
    ///   - backend: the backend's name, for the event.
    ///   - location: the server or path, for the event.
    public func statementEnded(
        startedAt start: ContinuousClock.Instant?,
        _ description: @autoclosure () -> String,
        backend: String,
        location: @autoclosure () -> String? = nil
    ) {
        guard let start, let threshold = slowStatementThreshold else { return }
        let elapsed = ContinuousClock.now - start
        guard elapsed >= threshold else { return }
        report(
            StoreEvent(
                .slowStatement,
                backend: backend,
                duration: elapsed,
                statement: description(),
                location: location()
            )
        )
    }

    /// Starts a stream for the store `store`.
    func subscribe(store: ObjectIdentifier, bufferingNewest limit: Int) -> StoreEventStream {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let (stream, subscription) = StoreEventStream.make(bufferingNewest: limit) { [weak self] in
            self?.unsubscribe(id)
        }
        streams.withLock { streams in
            streams.append((id, store, subscription))
            streamCount.store(streams.count, ordering: .relaxed)
        }
        return stream
    }

    private func unsubscribe(_ id: Int) {
        streams.withLock { streams in
            streams.removeAll { $0.id == id }
            streamCount.store(streams.count, ordering: .relaxed)
        }
    }

    /// Finishes the streams `store` made (at its `close()`).
    func finishStreams(of store: ObjectIdentifier) {
        let finished = streams.withLock { streams in
            let mine = streams.filter { $0.store == store }
            streams.removeAll { $0.store == store }
            streamCount.store(streams.count, ordering: .relaxed)
            return mine
        }
        for entry in finished { entry.stream.finish() }
    }

    /// Whether two reporters are the same object.
    /// - Parameters:
    ///   - lhs: a reporter.
    ///   - rhs: another.
    /// - Returns: `lhs === rhs`.
    public static func == (lhs: StoreEventReporter, rhs: StoreEventReporter) -> Bool { lhs === rhs }

    /// Hashes the reporter's identity.
    /// - Parameter hasher: the hasher.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}

/// A backend that reports ``StoreEvent``s: `ObjectStore.events(bufferingNewest:)` streams them.
///
/// Implementation requirements: report through `eventReporter` (the one of the backend's
/// configuration, or one of the backend's own), checking `isListening` (which `report(_:)`
/// does) before building anything per statement; never block on a report.
public protocol StoreEventSource: StorageBackend {
    /// Where the backend reports its events.
    var eventReporter: StoreEventReporter { get }
}
