import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Item 8 of docs/RELIABILITY.md, the part about `fork()`: a store opened by a process and used
/// in a child it forked fails with `.misuse` instead of sharing the parent's files, locks and
/// engine state; the child opens the store again instead, and that works.
///
/// The forking happens in a process of its own, `StorageCrashWriter --workload fork`
/// (Sources/StorageCrashWriter/ForkWorkload.swift), not in the test runner: a child of the
/// runner, which runs many tests on many threads, can block on any lock another thread held at
/// the fork, in code that is not the store's. (A first version forked the runner; its child hung
/// once in a full run under ThreadSanitizer.)
@Suite(.dedicatedThreads) struct ForkTests {
    /// The parent opens a store, writes and forks. The child's save, fetch, and read and write on
    /// the backend directly through the parent's store all throw `.misuse` about the fork (exit
    /// status 0; a bit is set for each that does anything else), and a store it opens again
    /// itself works: it writes a record and reads the parent's. The parent then writes once more
    /// and finds its record, the child's and its new one, and not the one the child tried to
    /// save through the parent's store.
    @Test(arguments: DiskBackend.allCases)
    func aForkedChildGetsMisuseAndOpensTheStoreAgain(_ backend: DiskBackend) throws {
        let lines = try Self.runForkWorkload(backend, busy: false)
        #expect(lines == ["child 0", "records 1,2,3"])
    }

    /// The same while a second thread of the parent commits without pause, so that the fork
    /// copies the store's locks while they are held: the child still gets `.misuse` at once
    /// rather than waiting forever for a lock no thread of its own will release, and the parent
    /// carries on.
    ///
    /// Not under ThreadSanitizer: there a forked child of this two-thread process hung in the
    /// Swift runtime's `swift_once`, before reaching the store (docs/RELIABILITY.md, section 8),
    /// and the sanitizer sees no race across processes; the plain run keeps the test.
    @Test(
        .disabled(if: Sanitizers.thread, "a multi-threaded fork hangs in swift_once under ThreadSanitizer"),
        arguments: DiskBackend.allCases
    )
    func aForkWhileTheParentWritesGivesTheChildMisuseNotADeadlock(_ backend: DiskBackend) throws {
        let lines = try Self.runForkWorkload(backend, busy: true)
        #expect(lines == ["child 0", "records 1,3"])
    }

    /// Runs the fork workload on a fresh store and returns its report lines.
    static func runForkWorkload(_ backend: DiskBackend, busy: Bool) throws -> [String] {
        try TemporaryDirectory.with("fork-\(backend)") { directory in
            let process = Process()
            process.executableURL = CrashHarness.executable
            process.arguments =
                ["--backend", backend.rawValue, "--path", backend.storePath(in: directory), "--workload", "fork"]
                + (busy ? ["--busy"] : [])
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(text)")
            return text.split(separator: "\n").map(String.init)
        }
    }
}
