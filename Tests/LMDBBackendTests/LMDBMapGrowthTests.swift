import Dispatch
import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import LMDBBackend

// Map growth under concurrency. Run under `swift test --sanitize=thread --filter LMDBMapGrowth`.

private struct Seed: Codable, Equatable {
    var id: Int64
}

private struct Entry: Codable, Equatable {
    var id: Int64
    var text: String
}

private struct Blob: Codable {
    var id: Int64
    var data: Data
}

/// Runs `body` with a store whose map starts at 64 KiB, holding one `Seed`.
private func withSeededSmallMap(
    resizeTimeout seconds: Int,
    _ body: (LMDBStorageBackend, ObjectStore) throws -> Void
) throws {
    try withStorePath { _, path in
        let configuration = LMDBStorageBackend.Configuration(
            initialMapSize: 64 << 10,
            mapResizeTimeoutSeconds: seconds
        )
        let backend = try LMDBStorageBackend(path: path, configuration: configuration)
        let store = ObjectStore(backend: backend)
        try store.save(Seed(id: 1))
        try body(backend, store)
    }
}

@Test func lmdbMapGrowthWithAWriteInsideForEachAndASaverOnAnotherThreadDoesNotStall() throws {
    // A short resize timeout: a growth that waits for a read which waits for the writer lock
    // fails within it instead of stalling the test.
    try withSeededSmallMap(resizeTimeout: 5) { backend, store throws in
        let failures = Locked<[String]>([])
        let text = String(repeating: "x", count: 500)
        let clock = ContinuousClock()
        let started = clock.now
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            for n in 0..<200 {
                do {
                    if worker == 0 {
                        try store.forEach(Seed.self) { _ in try store.save(Entry(id: Int64(n), text: text)) }
                    } else {
                        try store.save(Entry(id: Int64(1_000 + n), text: text))
                    }
                } catch {
                    failures.withLock { $0.append("worker \(worker), write \(n): \(error)") }
                    return
                }
            }
        }
        let elapsed = clock.now - started
        print("LMDB: 200 writes inside forEach and 200 saves beside them, from a 64 KiB map, in \(elapsed)")
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
        #expect(elapsed < .seconds(10))
        #expect(try store.count(Entry.self, where: nil) == 400)
        #expect(backend.environment.mapUsage().mapSize > 64 << 10)
    }
}

@Test func lmdbMapGrowthWaitsOnlyForTheReadsAlreadyOpen() throws {
    try withStorePath { _, path in
        let configuration = LMDBStorageBackend.Configuration(initialMapSize: 1 << 20, mapResizeTimeoutSeconds: 10)
        let backend = try LMDBStorageBackend(path: path, configuration: configuration)
        let store = ObjectStore(backend: backend)
        try store.save(contentsOf: (1...300).map { Entry(id: $0, text: "entry \($0)") })
        try store.save(Blob(id: 0, data: Data()))
        let sizeBefore = backend.environment.mapUsage().mapSize
        let longestRead = Locked(Duration.zero)
        let stop = Locked(false)
        let readersStarted = Locked(0)
        let failures = Locked<[String]>([])
        let clock = ContinuousClock()
        let group = DispatchGroup()
        for _ in 0..<64 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                readersStarted.withLock { $0 += 1 }
                while !stop.withLock({ $0 }) {
                    let start = clock.now
                    do {
                        let all = try store.fetchAll(Entry.self)
                        if all.count != 300 { failures.withLock { $0.append("read \(all.count) entries") } }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                    let took = clock.now - start
                    longestRead.withLock { $0 = max($0, took) }
                }
            }
        }
        while readersStarted.withLock({ $0 }) < 64 { usleep(1_000) }
        usleep(100_000)  // the readers are looping
        let start = clock.now
        // A record larger than the whole map: the save grows it.
        let outcome = Result { try store.save(Blob(id: 1, data: Data(repeating: 8, count: sizeBefore))) }
        let saveTook = clock.now - start
        // The reads open when the save began take at most the longest read seen; a few more of
        // them once the save is done tell how long a read takes under this load.
        usleep(200_000)
        stop.withLock { $0 = true }
        group.wait()
        let longest = longestRead.withLock { $0 }
        print("LMDB: a save needing a growth beside 64 looping readers took \(saveTook); the longest read \(longest)")
        if case .failure(let error) = outcome { Issue.record("the save failed: \(error)") }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
        #expect(backend.environment.mapUsage().mapSize > sizeBefore)
        // The save waits for the reads open when the growth was asked for (one read each), and
        // then for a CPU among 64 busy threads: never for the reads begun after it.
        #expect(saveTook < longest * 2 + .milliseconds(500))
    }
}

@Test func lmdbMapGrowthTimeoutNamesTheTransactionsItWaitedFor() throws {
    try withSeededSmallMap(resizeTimeout: 1) { backend, store throws in
        let readerIsIn = DispatchSemaphore(value: 0)
        let saverIsDone = DispatchSemaphore(value: 0)
        let reader = Thread {
            try? backend.read { _ in
                readerIsIn.signal()
                saverIsDone.wait()
            }
        }
        reader.start()
        readerIsIn.wait()
        defer { saverIsDone.signal() }
        // Far more than the map holds: growing it waits for the other thread's read.
        do {
            try store.save(contentsOf: (1...400).map { Entry(id: $0, text: String(repeating: "y", count: 1_000)) })
            Issue.record("the growth did not wait for the open read")
        } catch let error as StorageError {
            #expect(error.code == .busy)
            #expect(
                error.message.contains("1 read transaction(s) and 0 write transaction(s) were still open"),
                "\(error)"
            )
            #expect(!error.message.contains("this thread"), "\(error)")
        }
    }
}
