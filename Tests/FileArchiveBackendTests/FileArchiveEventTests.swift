import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import FileArchiveBackend

/// A write that finds the store's lock file held by another process reports a `conflict` (code
/// `.busy`, the lock file's path) when it starts waiting.
@Test(.timeLimit(.minutes(10)))
func aWriteWaitingForAnotherProcessesLockFileReportsAConflict() throws {
    struct Note: Codable {
        var id: Int64
    }
    try TemporaryDirectory.with("archive-events") { directory in
        let path = directory.appendingPathComponent("store").path
        let lockPath = path + "/" + FileNames.lockFile
        let events = Locked<[StoreEvent]>([])
        let reporter = StoreEventReporter { event in events.withLock { $0.append(event) } }
        let store = try ObjectStore(
            backend: .fileArchive(
                directory: path,
                configuration: .init(lockTimeout: .milliseconds(200), events: reporter)
            )
        )
        try store.save(Note(id: 1))
        #expect(events.withLock { $0 }.isEmpty)
        let holder = try startLockHolder(lockPath, committing: false)
        defer { stop(holder) }
        let error = #expect(throws: StorageError.self) { try store.save(Note(id: 2)) }
        #expect(error?.code == .busy)
        let conflicts = events.withLock { $0 }.filter { $0.kind == .conflict }
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.code == .busy)
        #expect(conflicts.first?.location == lockPath)
        #expect(conflicts.first?.backend == "FileArchive")
    }
}
