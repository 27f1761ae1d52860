import Foundation
import Storage

#if canImport(Glibc)
import Glibc
#endif

/// A record of the fork workload.
struct ForkRecord: Codable {
    var id: Int64
    var writer: String
}

/// A store and `fork()`, in a process of its own. The parent opens the store, writes and forks.
/// The child tries the parent's store: a save, a fetch, and a read and a write on its backend
/// directly, each of which must throw `.misuse` about the fork; then (unless `busy`) it opens the
/// store again itself, writes and reads, which must work. It reports through its exit status, a
/// bit for each thing that went wrong. The parent waits for it (120 seconds at most: a child stuck
/// on a lock copied at the fork is reported, `diagnosis` lines with its stacks, and killed), writes again and reports `child S` (0 when all went as
/// it should, `hung` when killed), then `records 1,2,3`: the ids below 1,000 it finds.
///
/// With `busy`, a second thread of the parent commits transactions without pause from before
/// the fork until the child has ended, so that the fork copies the store's locks while a writer
/// holds them: the child must still get `.misuse`, not wait for a lock no thread will release.
/// (The child then only runs code the parent ran before, and does not open a store of its own,
/// which would take SQLite's and LMDB's global locks that the writing thread may hold.)
///
/// Why a process of its own: a child of the test runner, which runs many tests on many threads,
/// can block on any lock another thread held at the fork (in the runtime, in a test's code),
/// which is not the store's doing; here the only other thread is the store's writer.
enum ForkWorkload {
    static let saveWorked: Int32 = 1
    static let fetchWorked: Int32 = 2
    static let backendReadWorked: Int32 = 4
    static let backendWriteWorked: Int32 = 8
    static let otherError: Int32 = 16
    static let ownStoreFailed: Int32 = 32

    static func run(busy: Bool, open: () throws -> ObjectStore, report: (String) -> Void) throws {
        let store = try open()
        // Three saves: the first creates the collection, the later ones take the path of a save
        // whose type's write plan is kept (docs/RELIABILITY.md, section 8).
        for _ in 0..<3 { try store.save(ForkRecord(id: 1, writer: "parent")) }
        // Everything the child runs, run once here first.
        _ = isForkMisuse(StorageError(.misuse, "warm-up: used after fork()"))
        _ = try store.fetch(ForkRecord.self, id: 1)
        _ = try store.backend.read { _ in 0 }
        _ = try store.backend.write { _ in 0 }
        let writer = busy ? BusyWriter(store) : nil
        writer?.startAndWaitForSteadyCommits()

        let child = fork()
        if child == 0 {
            _exit(
                busy
                    ? childAttempts(store, openOwn: nil)
                    : withoutActuallyEscaping(open) { childAttempts(store, openOwn: $0) }
            )
        }
        guard child > 0 else { throw StorageError(.io, "fork failed") }
        // Far longer than the child needs (well under a second) even on a loaded machine: a deadlock
        // never ends, and a child that is only slow must not be taken for one.
        let status = wait(for: child, seconds: 120, report: report)
        try writer?.stop()
        report("child \(status.map(String.init) ?? "hung")")
        try store.save(ForkRecord(id: 3, writer: "parent"))
        let ids = try store.fetchAll(ForkRecord.self, where: Column("id") < 1_000).map { String($0.id) }
        report("records \(ids.joined(separator: ","))")
    }

    private static func childAttempts(_ store: ObjectStore, openOwn: (() throws -> ObjectStore)?) -> Int32 {
        var status: Int32 = 0
        func attempt(_ bit: Int32, _ body: () throws -> Void) {
            do {
                try body()
                status |= bit
            } catch {
                if !isForkMisuse(error) { status |= otherError }
            }
        }
        attempt(saveWorked) { try store.save(ForkRecord(id: 9, writer: "child, through the parent's store")) }
        attempt(fetchWorked) { _ = try store.fetch(ForkRecord.self, id: 1) }
        attempt(backendReadWorked) { _ = try store.backend.read { _ in 0 } }
        attempt(backendWriteWorked) { _ = try store.backend.write { _ in 0 } }
        guard let openOwn else { return status }
        do {
            let own = try openOwn()
            try own.save(ForkRecord(id: 2, writer: "child"))
            if try own.fetch(ForkRecord.self, id: 1)?.writer != "parent" { status |= ownStoreFailed }
        } catch {
            status |= ownStoreFailed
        }
        return status
    }

    private static func isForkMisuse(_ error: any Error) -> Bool {
        guard let error = error as? StorageError else { return false }
        return error.code == .misuse && error.message.contains("fork")
    }

    /// The child's exit status, or `nil` after killing it when it has not ended in time (having
    /// reported, as `diagnosis` lines, where it was stuck), or when it cannot be waited for.
    private static func wait(for child: pid_t, seconds: Int, report: (String) -> Void) -> Int32? {
        var status: Int32 = 0
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            let result = waitpid(child, &status, WNOHANG)
            if result == child {
                // WIFEXITED and WEXITSTATUS, which Swift does not import.
                return status & 0x7f == 0 ? (status >> 8) & 0xff : 1_000 + (status & 0x7f)
            }
            if result < 0 && errno != EINTR {
                report("diagnosis: waitpid failed: errno \(errno)")
                return nil
            }
            usleep(10_000)
        }
        for line in diagnosis(of: child) { report("diagnosis: \(line)") }
        kill(child, SIGKILL)
        _ = waitpid(child, &status, 0)
        return nil
    }

    /// Where a stuck process is: its state, the kernel function it waits in and its system call
    /// (from /proc), and the stack of each thread when gdb is installed.
    private static func diagnosis(of process: pid_t) -> [String] {
        var lines: [String] = []
        for name in ["stat", "wchan", "syscall"] {
            let text = (try? String(contentsOfFile: "/proc/\(process)/\(name)", encoding: .utf8)) ?? "unreadable"
            lines.append("\(name) \(text.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        let gdb = "/usr/bin/gdb"
        guard FileManager.default.isExecutableFile(atPath: gdb) else { return lines + ["(no gdb for stacks)"] }
        let debugger = Process()
        // Bounded by timeout(1), so that a debugger that cannot attach does not stall the report.
        debugger.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        debugger.arguments = ["20", gdb, "-batch", "-p", String(process), "-ex", "thread apply all bt 40"]
        let output = Pipe()
        debugger.standardOutput = output
        debugger.standardError = FileHandle.nullDevice
        guard (try? debugger.run()) != nil else { return lines + ["(gdb did not start)"] }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        debugger.waitUntilExit()
        let stacks = text.split(separator: "\n").filter { $0.hasPrefix("#") || $0.hasPrefix("Thread") }
        return lines + stacks.map(String.init)
    }
}

/// A thread that commits one small transaction after another until stopped.
private final class BusyWriter: Sendable {
    private let store: ObjectStore
    /// Commits so far, and whether to stop (a sized value behind the lock, never `Void`).
    private let state = Locked<(commits: Int, stop: Bool, failure: String?)>((0, false, nil))
    private let done = DispatchSemaphore(value: 0)

    init(_ store: ObjectStore) {
        self.store = store
    }

    /// Starts the thread and returns once it has committed three times. A thread that runs code
    /// for the first time at the fork may be inside one of the Swift runtime's one-time
    /// initializations (a generic type's metadata, taken under a `swift_once`); the child's copy
    /// of it then waits forever for a thread it does not have. Its first saves take other paths
    /// than the later ones (the write plan is kept from the second), so the fork waits for those.
    func startAndWaitForSteadyCommits() {
        Thread { [self] in
            var next: Int64 = 1_000
            while !state.withLock({ $0.stop }) {
                do {
                    try store.save(ForkRecord(id: next, writer: "busy parent thread"))
                    next += 1
                    state.withLock { $0.commits += 1 }
                } catch {
                    state.withLock { $0.failure = "\(error)" }
                    break
                }
            }
            done.signal()
        }.start()
        while state.withLock({ $0.commits < 3 && $0.failure == nil }) { usleep(1_000) }
    }

    func stop() throws {
        state.withLock { $0.stop = true }
        done.wait()
        if let failure = state.withLock({ $0.failure }) {
            throw StorageError(.engine, "the busy writer failed: \(failure)")
        }
    }
}
