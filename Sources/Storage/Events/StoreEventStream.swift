import Synchronization

/// The ``StoreEvent``s reported from when it was made, as `ObjectStore.events(bufferingNewest:)`
/// gives them; see ``StoreEventReporter`` for delivery.
///
/// It holds at most its buffer's worth of undelivered events: when the consumer falls behind,
/// the oldest are dropped (the reporting thread never waits) and counted in `droppedCount`. It
/// ends when its store closes, and its subscription ends when the consuming task is cancelled
/// or the stream is released.
public struct StoreEventStream: AsyncSequence, Sendable {
    /// The stream's iterator.
    public typealias AsyncIterator = AsyncStream<StoreEvent>.Iterator
    /// The stream's elements.
    public typealias Element = StoreEvent

    /// The stream's side in the reporter: yields, counting what its buffer drops.
    final class Subscription: Sendable {
        let continuation: AsyncStream<StoreEvent>.Continuation
        let dropped = Atomic<Int>(0)

        init(_ continuation: AsyncStream<StoreEvent>.Continuation) {
            self.continuation = continuation
        }

        func yield(_ event: StoreEvent) {
            if case .dropped = continuation.yield(event) { dropped.wrappingAdd(1, ordering: .relaxed) }
        }

        func finish() { continuation.finish() }
    }

    private let stream: AsyncStream<StoreEvent>
    private let subscription: Subscription?

    /// A stream and its subscription; `ended` runs when the stream terminates.
    static func make(
        bufferingNewest limit: Int,
        ended: @escaping @Sendable () -> Void
    ) -> (StoreEventStream, Subscription) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: StoreEvent.self,
            bufferingPolicy: .bufferingNewest(Swift.max(1, limit))
        )
        continuation.onTermination = { _ in ended() }
        let subscription = Subscription(continuation)
        return (StoreEventStream(stream: stream, subscription: subscription), subscription)
    }

    /// A stream that has ended: the events of a backend that reports none.
    static var finished: StoreEventStream {
        StoreEventStream(stream: AsyncStream { $0.finish() }, subscription: nil)
    }

    private init(stream: AsyncStream<StoreEvent>, subscription: Subscription?) {
        self.stream = stream
        self.subscription = subscription
    }

    /// How many events this stream has dropped so far because its buffer was full (the oldest
    /// undelivered ones are dropped).
    public var droppedCount: Int { subscription?.dropped.load(ordering: .relaxed) ?? 0 }

    /// Makes the iterator.
    /// - Returns: the stream's iterator.
    public func makeAsyncIterator() -> AsyncIterator { stream.makeAsyncIterator() }
}
