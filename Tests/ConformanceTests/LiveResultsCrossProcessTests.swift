import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Live results see what another process commits (issue 34), on every persistent backend:
/// PostgreSQL reports other sessions' commits (LISTEN/NOTIFY), the embedded engines are seen
/// through their commit counters. Here rather than in the conformance suite, whose fixtures
/// cannot tell a child process how to open their store; the crash writer can (`--backend`).
@Suite(.timeLimit(.minutes(10))) struct LiveResultsCrossProcessTests {
    /// Commits the crash writer's next batch of `CrashRecord`s (`batchSize` of them) in a process
    /// of its own, off Swift's cooperative pool while it waits for the process.
    static func commitBatchInAnotherProcess(_ backend: DiskBackend, path: String, batchSize: Int) async throws {
        let (status, text) = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    let process = Process()
                    process.executableURL = CrashHarness.executable
                    process.arguments = [
                        "--backend", backend.rawValue, "--path", path, "--batch-size", String(batchSize),
                        "--batches", "1",
                    ]
                    let output = Pipe()
                    process.standardOutput = output
                    try process.run()
                    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    process.waitUntilExit()
                    continuation.resume(returning: (process.terminationStatus, text))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        #expect(status == 0 && text.contains("ack "), "\(text)")
    }

    /// Waits until `condition` holds, for at most a minute: generous, for a loaded machine.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    @Test(arguments: DiskBackend.everyCase)
    func aCommitOfAnotherProcessIsDelivered(_ backend: DiskBackend) async throws {
        let directory = try TemporaryDirectory("live-process-\(backend)")
        defer { directory.remove() }
        let path = backend.storePath(in: directory.url)
        // Opened first: on PostgreSQL that starts the tests' server, which the child then uses.
        let store = try backend.openStore(path: path)
        try await Self.commitBatchInAnotherProcess(backend, path: path, batchSize: 3)
        let deliveries = Locked<[[Int64]]>([])
        let consumer = Task {
            for try await records in store.observe(CrashRecord.self, orderBy: [.ascending("id")]) {
                deliveries.withLock { $0.append(records.map(\.id)) }
            }
        }
        defer { consumer.cancel() }
        #expect(await Self.eventually { deliveries.withLock { $0 } == [[3, 4, 5]] })

        try await Self.commitBatchInAnotherProcess(backend, path: path, batchSize: 3)
        #expect(await Self.eventually { deliveries.withLock { $0.last } == [3, 4, 5, 6, 7, 8] })
        try await Self.commitBatchInAnotherProcess(backend, path: path, batchSize: 3)
        #expect(await Self.eventually { deliveries.withLock { $0.last } == Array(3...11) })
        // Each commit once: the records are `Equatable`, so a re-read that finds nothing new
        // (a counter that moved for the tally's collection, say) delivers nothing.
        #expect(deliveries.withLock { $0 }.count == 3)
        consumer.cancel()
        _ = await consumer.result
        try await store.close()
    }
}
