import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Item 8 of docs/RELIABILITY.md, the part about `fork()`: a store opened by a process and used
/// in a child it forked fails with `.misuse` instead of sharing the parent's files, locks and
/// engine state.
@Suite struct ForkTests {
    struct Item: Codable, Equatable {
        var id: Int64
        var text: String
    }

    /// What the child did that it should not have, as bits of its exit status.
    static let saveWorked: Int32 = 1
    static let fetchWorked: Int32 = 2
    static let backendReadWorked: Int32 = 4
    static let backendWriteWorked: Int32 = 8
    static let otherError: Int32 = 16

    /// The parent opens a store, writes to it and forks. The child tries a save and a fetch
    /// through the `ObjectStore`, then a read and a write on its backend directly, and exits
    /// with a bit set for each that did anything but throw `.misuse` about the fork. The parent
    /// waits (with a deadline: a child stuck on a lock copied at the fork is a failure too),
    /// then finds its store intact and usable, without the child's record.
    ///
    /// The child only runs code the parent has run before (so no type metadata is created in
    /// it) and leaves with `_exit`, running no exit handlers or destructors of the parent's.
    @Test(arguments: DiskBackend.allCases)
    func aStoreUsedInAForkedChildThrowsMisuse(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("fork-\(backend)") { directory in
            let path = backend.storePath(in: directory)
            let store = try backend.openStore(path: path)
            try store.save(Item(id: 1, text: "parent"))
            #expect(try store.fetch(Item.self, id: 1) != nil)
            // Warm up everything the child runs, so that it only runs code the parent has run.
            _ = Self.isForkMisuse(StorageError(.misuse, "warm-up: used after fork()"))
            _ = Self.isForkMisuse(CancellationError())
            _ = try store.backend.read { _ in 0 }
            _ = try store.backend.write { _ in 0 }

            let child = fork()
            if child == 0 { _exit(Self.childAttempts(store)) }
            try #require(child > 0, "fork failed: \(errno)")
            let status = try #require(Self.wait(for: child, seconds: 30), "the child hung")
            #expect(status == 0, "the child could use the parent's store (status bits \(status))")

            #expect(try store.fetch(Item.self, id: 1) == Item(id: 1, text: "parent"))
            try store.save(Item(id: 3, text: "parent again"))
            let reopened = try backend.openStore(path: path)
            #expect(try reopened.fetchAll(Item.self).map(\.id) == [1, 3])
        }
    }

    /// Runs in the child: tries the store, and returns the status bits.
    private static func childAttempts(_ store: ObjectStore) -> Int32 {
        var status: Int32 = 0
        do {
            try store.save(Item(id: 2, text: "child"))
            status |= saveWorked
        } catch {
            if !isForkMisuse(error) { status |= otherError }
        }
        do {
            _ = try store.fetch(Item.self, id: 1)
            status |= fetchWorked
        } catch {
            if !isForkMisuse(error) { status |= otherError }
        }
        do {
            _ = try store.backend.read { _ in 0 }
            status |= backendReadWorked
        } catch {
            if !isForkMisuse(error) { status |= otherError }
        }
        do {
            _ = try store.backend.write { _ in 0 }
            status |= backendWriteWorked
        } catch {
            if !isForkMisuse(error) { status |= otherError }
        }
        return status
    }

    private static func isForkMisuse(_ error: any Error) -> Bool {
        guard let error = error as? StorageError else { return false }
        return error.code == .misuse && error.message.contains("fork")
    }

    /// The child's exit status, or `nil` (after killing it) when it has not exited in time.
    private static func wait(for child: pid_t, seconds: Int) -> Int32? {
        var status: Int32 = 0
        for _ in 0..<(seconds * 100) {
            let result = waitpid(child, &status, WNOHANG)
            if result == child {
                // WIFEXITED / WEXITSTATUS, which Swift does not import.
                return status & 0x7f == 0 ? (status >> 8) & 0xff : 1_000 + (status & 0x7f)
            }
            if result < 0 && errno != EINTR { return nil }
            usleep(10_000)
        }
        kill(child, SIGKILL)
        _ = waitpid(child, &status, 0)
        return nil
    }

    /// A single-threaded process (`StorageCrashWriter --workload fork`) opens a store, writes and
    /// forks. Its child gets `.misuse` from the parent's store, and a store it opens again itself
    /// works: it writes and reads the parent's record. The parent then writes once more and finds
    /// its record, the child's and its new one (and not the one the child tried through the
    /// parent's store).
    @Test(arguments: DiskBackend.allCases)
    func aForkedChildOpensTheStoreAgainAndUsesIt(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("fork-reopen-\(backend)") { directory in
            let process = Process()
            process.executableURL = CrashHarness.executable
            process.arguments = [
                "--backend", backend.rawValue, "--path", backend.storePath(in: directory), "--workload", "fork",
            ]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(text)")
            let lines = text.split(separator: "\n").map(String.init)
            #expect(lines == ["child 0", "records 1,2,3"])
        }
    }
}
