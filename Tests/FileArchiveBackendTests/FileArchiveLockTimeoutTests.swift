import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import FileArchiveBackend

#if canImport(Glibc)
import Glibc
#endif

private struct Note: Codable, Equatable, StorableModel {
    static let collectionName = "notes"
    var id: Int64
    var text: String
}

/// Starts a Python process that takes `flock(LOCK_EX)` on the store's lock file and keeps it;
/// with `committing`, it also advances the generation counter, as a process committing does.
/// Returns once the lock is held. Needs python3 (`scripts/setup.sh` installs it): the holder is
/// a real process, as a hung or stopped one would be.
func startLockHolder(_ lockPath: String, committing: Bool) throws -> Process {
    let script = """
        import fcntl, os, struct, sys, time
        fd = os.open(sys.argv[1], os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if sys.argv[2] == "commit":
            (generation,) = struct.unpack("<q", os.pread(fd, 8, 0))
            os.pwrite(fd, struct.pack("<q", generation + 1), 0)
        print("locked", flush=True)
        time.sleep(60)
        """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", script, lockPath, committing ? "commit" : "hold"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    var printed = Data()
    while !String(decoding: printed, as: UTF8.self).contains("locked") {
        let chunk = output.fileHandleForReading.availableData
        guard !chunk.isEmpty else {
            process.waitUntilExit()
            throw StorageError(.io, "the lock holder exited before taking the lock", path: lockPath)
        }
        printed.append(chunk)
    }
    return process
}

/// Kills `process` and waits for it; does nothing once it has exited.
func stop(_ process: Process) {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
}

private let shortWait = FileArchiveStorageBackend.Configuration(lockTimeout: .milliseconds(200))

// The time limit only stops a hang. Swift Testing counts it from when the test case starts, and
// a case can then wait for one of Swift's cooperative threads (one per core): with one minute,
// these failed in a clean CI run whose bodies took seconds, while tests blocked in `waitpid` held
// both threads. Those tests now run on threads of their own (`.dedicatedThreads`); the margin stays.
@Test(.timeLimit(.minutes(10)))
func aSaveFailsWithBusyWhileAnotherProcessHoldsTheLockAndChangesNothing() throws {
    try TemporaryDirectory.with("archive-lock") { directory in
        let path = directory.appendingPathComponent("store").path
        let lockPath = path + "/" + FileNames.lockFile
        let store = try ObjectStore(backend: .fileArchive(directory: path, configuration: shortWait))
        let before = (1...3).map { Note(id: $0, text: "n\($0)") }
        try store.save(contentsOf: before)

        let holder = try startLockHolder(lockPath, committing: false)
        defer { stop(holder) }
        let clock = ContinuousClock()
        let start = clock.now
        let error = #expect(throws: StorageError.self) { try store.save(Note(id: 4, text: "late")) }
        let waited = clock.now - start
        #expect(error?.code == .busy)
        #expect(error?.path == lockPath)
        #expect(error?.message.contains("another process holds the store's lock") == true)
        #expect(waited >= .milliseconds(200))
        #expect(waited < .seconds(5), "waited \(waited)")
        #expect(try store.fetchAll(Note.self, orderBy: [.ascending("id")]) == before)
        // Opening the store waits for the lock too, and gives up the same way.
        let opening = #expect(throws: StorageError.self) {
            try FileArchiveStorageBackend(directory: path, configuration: shortWait)
        }
        #expect(opening?.code == .busy)
        #expect(opening?.path == lockPath)

        stop(holder)
        // Nothing of the refused save reached the disk.
        #expect(!FileSystem.exists(path + "/" + FileNames.journalFile))
        let reopened = try ObjectStore(backend: .fileArchive(directory: path, configuration: shortWait))
        #expect(try reopened.fetchAll(Note.self, orderBy: [.ascending("id")]) == before)
        // With the holder gone, the same save succeeds.
        try store.save(Note(id: 4, text: "late"))
        #expect(try store.count(Note.self) == 4)
        #expect(try reopened.count(Note.self) == 4)
    }
}

@Test(.timeLimit(.minutes(10)))
func aReloadAfterAnotherProcessCommitsFailsWithBusyWhileThatProcessHoldsTheLock() throws {
    try TemporaryDirectory.with("archive-lock") { directory in
        let path = directory.appendingPathComponent("store").path
        let lockPath = path + "/" + FileNames.lockFile
        let store = try ObjectStore(backend: .fileArchive(directory: path, configuration: shortWait))
        let before = [Note(id: 1, text: "one")]
        try store.save(contentsOf: before)

        let holder = try startLockHolder(lockPath, committing: true)
        defer { stop(holder) }
        let error = #expect(throws: StorageError.self) { try store.fetchAll(Note.self, orderBy: []) }
        #expect(error?.code == .busy)
        #expect(error?.path == lockPath)

        stop(holder)
        #expect(try store.fetchAll(Note.self, orderBy: [.ascending("id")]) == before)
    }
}
