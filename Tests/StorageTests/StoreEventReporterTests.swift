import Foundation
import Storage
import StorageTestSupport
import Testing

/// `StoreEventReporter` and `ObjectStore.events(bufferingNewest:)`: who listens, what a stream
/// sees, what it drops, when it ends.
@Suite struct StoreEventReporterTests {
    /// The in-memory backend with a reporter of its own, reporting what the tests tell it to.
    final class ReportingBackend: StoreEventSource {
        let inner = InMemoryStorageBackend()
        let eventReporter: StoreEventReporter

        init(_ reporter: StoreEventReporter = StoreEventReporter()) {
            eventReporter = reporter
        }

        func read<Result>(_ body: (any BackendReadTransaction) throws -> Result) throws -> Result {
            try inner.read(body)
        }

        func write<Result>(_ body: (any BackendWriteTransaction) throws -> Result) throws -> Result {
            try inner.write(body)
        }
    }

    static func retry(_ attempt: Int) -> StoreEvent {
        StoreEvent(.retry, backend: "Test", attempt: attempt, code: .busy, reason: "test")
    }

    static func collect(_ stream: StoreEventStream) async -> [StoreEvent] {
        var events: [StoreEvent] = []
        for await event in stream { events.append(event) }
        return events
    }

    @Test func nobodyListensUntilAHandlerOrAStreamDoesAndNothingIsBuiltMeanwhile() {
        let backend = ReportingBackend()
        let store = ObjectStore(backend: backend)
        let reporter = backend.eventReporter
        #expect(!reporter.isListening)
        let built = Locked(0)
        func made() -> StoreEvent {
            built.withLock { $0 += 1 }
            return Self.retry(2)
        }
        reporter.report(made())
        #expect(built.withLock { $0 } == 0)
        #expect(reporter.statementStarting() == nil)
        do {
            let stream = store.events()
            #expect(reporter.isListening)
            reporter.report(made())
            #expect(built.withLock { $0 } == 1)
            #expect(stream.droppedCount == 0)
        }
        // The stream was released: its subscription ended.
        #expect(!reporter.isListening)
        #expect(StoreEventReporter { _ in }.isListening)
    }

    @Test func aStreamSeesOnlyLaterEventsKeepsTheNewestAndCountsWhatItDropped() async throws {
        let backend = ReportingBackend()
        let store = ObjectStore(backend: backend)
        let early = store.events()
        backend.eventReporter.report(Self.retry(1))
        let late = store.events(bufferingNewest: 2)
        for attempt in 2...6 { backend.eventReporter.report(Self.retry(attempt)) }
        try await store.close()
        let earlyEvents = await Self.collect(early)
        let lateEvents = await Self.collect(late)
        #expect(earlyEvents.map(\.attempt) == [1, 2, 3, 4, 5, 6])
        #expect(lateEvents.map(\.attempt) == [5, 6])
        #expect(late.droppedCount == 3)
        #expect(early.droppedCount == 0)
        // After close: a stream that ends at once.
        let afterClose = await Self.collect(store.events())
        #expect(afterClose.isEmpty)
    }

    @Test func theHandlerGetsEveryEventOnTheReportingThread() {
        let seen = Locked<[Int?]>([])
        let reporter = StoreEventReporter { event in seen.withLock { $0.append(event.attempt) } }
        for attempt in 1...3 { reporter.report(Self.retry(attempt)) }
        #expect(seen.withLock { $0 } == [1, 2, 3])
    }

    @Test func aStatementIsTimedOnlyWithAThresholdAndAListener() throws {
        let seen = Locked<[StoreEvent]>([])
        let reporter = StoreEventReporter(slowStatementThreshold: .zero) { event in seen.withLock { $0.append(event) } }
        let start = try #require(reporter.statementStarting())
        reporter.statementEnded(startedAt: start, "SELECT ? FROM t", backend: "Test", location: "here")
        reporter.statementEnded(startedAt: nil, "never", backend: "Test")
        let events = seen.withLock { $0 }
        #expect(events.map(\.kind) == [.slowStatement])
        #expect(events.first?.statement == "SELECT ? FROM t")
        #expect(events.first?.description.hasPrefix("Test slowStatement: took ") == true)
        #expect(StoreEventReporter(slowStatementThreshold: .seconds(1)).statementStarting() == nil)
        let far = StoreEventReporter(slowStatementThreshold: .seconds(3600)) { event in
            seen.withLock { $0.append(event) }
        }
        far.statementEnded(startedAt: far.statementStarting(), "SELECT 1", backend: "Test")
        #expect(seen.withLock { $0.count } == 1)
    }

    @Test func aBackendThatReportsNothingGivesAStreamThatEndsAtOnce() async {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        let events = await Self.collect(store.events())
        #expect(events.isEmpty)
    }

    /// Four threads report while another makes and drops streams: every event reaches the
    /// handler, and streams come and go safely (run under ThreadSanitizer in CI).
    @Test func reportsFromManyThreadsWhileStreamsComeAndGo() {
        let count = Locked(0)
        let reporter = StoreEventReporter { _ in count.withLock { $0 += 1 } }
        let backend = ReportingBackend(reporter)
        let store = ObjectStore(backend: backend)
        DispatchQueue.concurrentPerform(iterations: 5) { worker in
            if worker == 4 {
                for _ in 0..<200 {
                    let stream = store.events(bufferingNewest: 8)
                    _ = stream.droppedCount
                }
            } else {
                for attempt in 0..<1_000 { reporter.report(Self.retry(attempt)) }
            }
        }
        #expect(count.withLock { $0 } == 4_000)
        #expect(reporter.isListening)
        try? store.close()
    }
}
