import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// The PostgreSQL backend's store events: retries and conflicts, slow statements, connections
/// opened and lost (issue 37, item 4).
@Suite(.dedicatedThreads) struct PostgreSQLEventTests {
    struct LoadCounter: Codable {
        var id: Int64
        var value: Int64
    }

    struct LoadTick: Codable {
        var id: Int64
        var writer: Int64
        var value: Int64
    }

    struct Secret: Codable, Equatable {
        var id: Int64
        var password: String
    }

    /// The events a reporter's handler was given, in order.
    final class Recorder: Sendable {
        let events = Locked<[StoreEvent]>([])
        var all: [StoreEvent] { events.withLock { $0 } }
        func reporter(slowStatementThreshold: Duration? = nil) -> StoreEventReporter {
            StoreEventReporter(slowStatementThreshold: slowStatementThreshold) { event in
                self.events.withLock { $0.append(event) }
            }
        }
    }

    /// The issue's test: two processes each increment one shared counter 500 times in
    /// read-modify-write transactions, counting their closure's runs and the `retry` events they
    /// are given. In each, every run beyond the first of a transaction was reported (retries ==
    /// runs − 500, less any call the workload made again after `.busy`), the store's event stream
    /// delivered the same retries and dropped none, and the counter ends at 1,000.
    @Test func twoProcessesCountEveryRetryOfTheirReadModifyWrites() throws {
        let increments = 500
        try withStore("retry-events") { store, path in
            try store.save(LoadCounter(id: 1, value: 0))
            let children = try (1...2).map { writer in
                try Child(
                    CrashHarness.executable.path,
                    [
                        "--backend", "postgresql", "--path", path, "--workload", "retries",
                        "--writer", String(writer), "--count", String(increments),
                    ]
                )
            }
            var totalRetries = 0
            for (index, child) in children.enumerated() {
                let (status, lines) = child.wait(deadline: .now + .seconds(600))
                #expect(status == 0, "writer \(index + 1): \(lines.suffix(3))")
                let counts = try #require(lines.last.map(Self.counts), "writer \(index + 1): \(lines.suffix(3))")
                #expect(counts["runs"].map { $0 >= increments } == true, "\(counts)")
                // A call that failed with `.busy` (its retries used up, on a loaded machine) was made
                // again by the workload: one more call, whose first run is no retry.
                let calls = increments + (counts["busy"] ?? 0)
                #expect(counts["retries"] == counts["runs"].map { $0 - calls }, "writer \(index + 1): \(counts)")
                #expect(counts["streamed"] == counts["retries"], "writer \(index + 1): \(counts)")
                #expect(counts["dropped"] == 0, "writer \(index + 1): \(counts)")
                // Each failed run of a conflict is reported (a call that failed with `.busy` had one
                // more than its retries); a run again after a schema another process changed (two
                // writers creating the ticks' table at once) is a retry without a conflict.
                let conflicts = counts["conflicts"] ?? 0
                #expect(conflicts <= (counts["retries"] ?? 0) + (counts["busy"] ?? 0), "\(counts)")
                #expect(counts["retries"] == 0 || conflicts > 0, "writer \(index + 1): \(counts)")
                totalRetries += counts["retries"] ?? 0
                print("writer \(index + 1): \(lines.last ?? "")")
            }
            #expect(try store.fetch(LoadCounter.self, id: 1)?.value == Int64(2 * increments))
            let values = try store.fetchAll(LoadTick.self).map(\.value).sorted()
            #expect(values == (1...Int64(2 * increments)).map { $0 })
            print("two processes, 2 × \(increments) read-modify-writes: \(totalRetries) retries")
        }
    }

    /// `runs 7 retries 2 …` as a dictionary.
    static func counts(_ line: String) -> [String: Int] {
        let words = line.split(separator: " ").map(String.init)
        var counts: [String: Int] = [:]
        for index in stride(from: 0, to: words.count - 1, by: 2) {
            if let value = Int(words[index + 1]) { counts[words[index]] = value }
        }
        return counts
    }

    /// With a zero threshold every statement is reported slow, with its text: the values are
    /// bound parameters (`$1`), so a secret saved, fetched and filtered on appears in no event.
    @Test func slowStatementsWithAZeroThresholdShowNoValue() throws {
        let recorder = Recorder()
        let configuration = PostgreSQLStorageBackend.Configuration(
            poolSize: 2,
            events: recorder.reporter(slowStatementThreshold: .zero)
        )
        try withStore("slow-statements", configuration: configuration) { store, _ in
            try store.save(Secret(id: 1, password: "hunter2-secret"))
            try store.save(contentsOf: (2...5).map { Secret(id: $0, password: "hunter2-secret-\($0)") })
            #expect(try store.fetch(Secret.self, id: 1)?.password == "hunter2-secret")
            #expect(try store.count(Secret.self, where: Column("password") == "hunter2-secret") == 1)
            let slow = recorder.all.filter { $0.kind == .slowStatement }
            #expect(slow.count >= 4)
            for event in slow {
                let statement = try #require(event.statement)
                #expect(!statement.contains("hunter2"), "\(statement)")
                #expect(!event.description.contains("hunter2"), "\(event)")
                #expect(event.duration.map { $0 >= .zero } == true)
                #expect(event.backend == "PostgreSQL")
            }
            #expect(slow.contains { $0.statement?.contains("$1") == true }, "\(slow.map(\.description))")
            #expect(slow.contains { $0.statement?.uppercased().contains("COPY") == true }, "\(slow.map(\.description))")
        }
    }

    /// A store sees its connections opened; when the server ends them (`pg_terminate_backend`)
    /// the next write reports the loss, runs its closure again (`retry`, run 2, code
    /// `.connectionLost`) on a new connection (`connectionOpened`) and succeeds. A stream made
    /// after the store opened does not replay the events before it: it holds exactly those the
    /// handler got after it was made, in the same order.
    @Test func aConnectionTheServerEndsIsReportedLostAndStreamsDoNotReplay() throws {
        try TemporaryDirectory.with("postgres-events-lost") { directory in
            let recorder = Recorder()
            let name = "storage-events-" + UUID().uuidString.prefix(8).lowercased()
            // The store's own connections, to end them and no other test's.
            let base = try PostgreSQLTestServer.url()
            let url =
                base.hasPrefix("postgres")
                ? base + (base.contains("?") ? "&" : "?") + "application_name=" + name
                : base + " application_name=" + name
            let store = try ObjectStore(
                backend: .postgreSQL(
                    url: url,
                    configuration: .init(
                        schema: PostgreSQLTestServer.schema(for: directory.path),
                        poolSize: 1,
                        observesOtherProcesses: false,
                        events: recorder.reporter()
                    )
                )
            )
            let opened = recorder.all.filter { $0.kind == .connectionOpened }
            #expect(!opened.isEmpty)
            #expect(opened.allSatisfy { $0.location?.isEmpty == false && $0.backend == "PostgreSQL" })
            let before = recorder.all.count
            let stream = store.events()
            try store.save(Secret(id: 1, password: "one"))
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            let terminated = try raw.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '\(name)'"
            )
            #expect(terminated.first.flatMap(Int.init).map { $0 >= 1 } == true)
            usleep(200_000)
            var runs = 0
            try store.transaction { tx in
                runs += 1
                try tx.save(Secret(id: 2, password: "two"))
            }
            #expect(runs == 2)
            let events = recorder.all
            let lost = try #require(events.firstIndex { $0.kind == .connectionLost }, "\(events)")
            #expect(events[lost].code == .connectionLost)
            let retry = try #require(events.firstIndex { $0.kind == .retry }, "\(events)")
            #expect(retry > lost)
            #expect(events[retry].attempt == 2)
            #expect(events[retry].code == .connectionLost)
            #expect(events[retry...].contains { $0.kind == .connectionOpened })
            try store.close()
            let done = DispatchSemaphore(value: 0)
            let collected = Locked<[StoreEvent]>([])
            Task.detached {
                for await event in stream { collected.withLock { $0.append(event) } }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 30) == .success)
            let streamed = collected.withLock { $0 }
            let after = recorder.all[before...]
            #expect(streamed.map(\.kind) == after.map(\.kind))
            #expect(streamed.map(\.date) == after.map(\.date))
        }
    }
}
