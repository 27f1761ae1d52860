import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// The `async` one-query reads (`fetch(_:id:)`, `fetchAll`, `count`) on the backends that read
/// without waiting (`StorageBackend.readsWithoutWaiting`: SQLite on a file, LMDB, the archive)
/// run on the calling task, and go to the store's threads only when they would wait.
@Suite struct AsyncReadWithoutWaitingTests {
    struct Note: Codable, Equatable, Sendable {
        var id: Int64
        var text: String
    }

    static func notes(_ range: ClosedRange<Int64>) -> [Note] {
        range.map { Note(id: $0, text: "note \($0)") }
    }

    /// More blocked transactions than the store has threads (at most 64): one holds the writer,
    /// the others wait for it or in the queue, so a call handed to the store's threads waits
    /// for the writer to be released.
    static let blockedCalls = 65

    @Test(arguments: DiskBackend.allCases)
    func readsCompleteWhileEveryStoreThreadIsBlocked(_ backend: DiskBackend) async throws {
        let directory = try TemporaryDirectory("async-read-no-thread")
        defer { directory.remove() }
        let store = try backend.openStore(path: backend.storePath(in: directory.url))
        try await store.save(contentsOf: Self.notes(1...20))
        // A first read opens SQLite's reader connection (on the store's threads: there is no
        // idle one yet), which later reads find idle.
        #expect(try await store.fetch(Note.self, id: 1) == Note(id: 1, text: "note 1"))

        let holding = Gate()
        let release = Gate()
        let writes = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for offset in 0..<Self.blockedCalls {
                    group.addTask {
                        try await store.transaction { tx in
                            if offset == 0 {
                                holding.open()
                                _ = release.wait(seconds: 60)
                            }
                            try tx.save(Note(id: 100 + Int64(offset), text: "blocked"))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        try await holding.arrival()

        let readDone = Gate()
        let reads = Task {
            defer { readDone.open() }
            let found = try await store.fetch(Note.self, id: 7)
            let all = try await store.fetchAll(Note.self, where: Column("id") <= 20)
            let count = try await store.count(Note.self)
            let untyped = try await store.count(in: "Note", where: Column("id") > 18 && Column("id") <= 20)
            return (found, all.count, count, untyped)
        }
        // Without reads on the calling task they would wait behind the blocked transactions.
        var readBeforeRelease = false
        for _ in 0..<2_000 {
            if readDone.wait(seconds: 0) {
                readBeforeRelease = true
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        release.open()
        try await writes.value
        let (found, all, count, untyped) = try await reads.value
        #expect(readBeforeRelease, "an async read waited for a thread of the store")
        #expect(found == Note(id: 7, text: "note 7"))
        #expect(all == 20)
        // Transactions that took the writer before the held one may have committed; the held
        // one has not.
        #expect(count >= 20 && count < 20 + Self.blockedCalls)
        #expect(untyped == 2)
        #expect(try await store.count(Note.self) == 20 + Self.blockedCalls)
        try await store.close()
    }

    @Test(arguments: DiskBackend.allCases)
    func readsSeeWhatAnotherStoreOnTheSameFilesCommitted(_ backend: DiskBackend) async throws {
        let directory = try TemporaryDirectory("async-read-elsewhere")
        defer { directory.remove() }
        let path = backend.storePath(in: directory.url)
        let reader = try backend.openStore(path: path)
        try await reader.save(contentsOf: Self.notes(1...5))
        #expect(try await reader.fetch(Note.self, id: 5) == Note(id: 5, text: "note 5"))
        #expect(try await reader.fetch(Note.self, id: 6) == nil)

        // Another store (another backend instance: the archive's snapshot of this one goes
        // stale, and its reload waits for the lock file, so it is not read on the caller).
        let writer = try backend.openStore(path: path)
        for round in 6...8 {
            let id = Int64(round)
            try await writer.save(Note(id: id, text: "elsewhere \(round)"))
            #expect(try await reader.fetch(Note.self, id: id) == Note(id: id, text: "elsewhere \(round)"))
            #expect(try await reader.count(Note.self) == round)
        }
        try await writer.close()
        try await reader.close()
    }

    @Test(arguments: DiskBackend.allCases)
    func aCancelledReadThrowsAndAClosedStoreRefusesReads(_ backend: DiskBackend) async throws {
        let directory = try TemporaryDirectory("async-read-cancel")
        defer { directory.remove() }
        let store = try backend.openStore(path: backend.storePath(in: directory.url))
        try await store.save(contentsOf: Self.notes(1...3))
        _ = try await store.fetch(Note.self, id: 1)
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await store.fetch(Note.self, id: 1)
        }
        await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
        try await store.close()
        await #expect(throws: StorageError.self) { _ = try await store.fetch(Note.self, id: 1) }
        await #expect(throws: StorageError.self) { _ = try await store.count(Note.self) }
    }
}
