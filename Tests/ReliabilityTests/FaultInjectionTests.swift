import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// One way of faulting a save: which backend, which save, which calls fail with which error.
struct FaultScenario: Sendable, CustomStringConvertible {
    var backend: DiskBackend
    /// The store's first save (which also creates the collections) rather than a later one.
    var firstSave = false
    /// SQLite's `synchronous` setting, `nil` for the default.
    var synchronous: String?
    var errno = "EIO"
    /// The calls counted and faulted (see faultshim.c), `nil` for all of them.
    var calls: String?
    /// Records per batch. From 16 files on, the archive flushes a commit with one `syncfs`.
    var batchSize = 5

    var description: String {
        "\(backend)\(synchronous.map { " synchronous=\($0)" } ?? "") \(firstSave ? "first" : "later") save"
            + " of \(batchSize) records, \(errno) on \(calls ?? "every") call"
    }

    static let all: [FaultScenario] = [
        .init(backend: .sqlite), .init(backend: .sqlite, synchronous: "full"), .init(backend: .sqlite, firstSave: true),
        .init(backend: .sqlite, errno: "ENOSPC", calls: "write"),
        .init(backend: .lmdb), .init(backend: .lmdb, firstSave: true),
        .init(backend: .lmdb, errno: "ENOSPC", calls: "write"),
        .init(backend: .archive), .init(backend: .archive, firstSave: true),
        .init(backend: .archive, errno: "ENOSPC", calls: "write"), .init(backend: .archive, batchSize: 20),
    ]
}

/// What one faulted save did, for the figures in docs/RELIABILITY.md.
struct FaultTally: CustomStringConvertible {
    var faults = 0
    var failedCleanly = 0
    /// The fault hit after the commit point: the save reported an error but the batch is whole in
    /// the store (the archive's journal rolled it forward, or the engine's log had it).
    var failedButApplied = 0
    /// The faulted call's failure was ignored and the save succeeded (the batch is there).
    var succeededAnyway = 0
    /// The same store object could not save again until the store was reopened.
    var neededReopen = 0
    /// The faulted calls behind `failedButApplied`, `succeededAnyway` and `neededReopen`, e.g. "rename #16".
    var notable: [String] = []

    var description: String {
        "\(faults) faults: \(failedCleanly) failed with nothing applied, \(failedButApplied) failed after the"
            + " commit point (batch whole), \(succeededAnyway) succeeded despite the fault, \(neededReopen) needed"
            + " a reopen before the next save" + (notable.isEmpty ? "" : " (\(notable.joined(separator: ", ")))")
    }
}

/// For every call N along one save, a child process saves a batch with the shim failing the Nth
/// write/pwrite/writev/fsync/fdatasync/syncfs/rename. The save must end in a `StorageError`
/// (never a trap, never a success that is not in the store, nor one that a store open in
/// another process does not see); after reopening, every earlier batch is whole, the faulted
/// batch is absent or whole, no temporary file or journal is left, the engine's integrity check
/// passes, and the next save succeeds.
@Test(.dedicatedThreads, arguments: FaultScenario.all)
func everyFaultAlongASaveFailsCleanly(_ scenario: FaultScenario) throws {
    let backend = scenario.backend
    let batchSize = scenario.batchSize
    try TemporaryDirectory.with("fault-\(backend)") { directory in
        let base = directory.appendingPathComponent("base")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: false)
        func arguments(_ folder: URL) -> [String] {
            ["--backend", backend.rawValue, "--path", backend.storePath(in: folder), "--batch-size", "\(batchSize)"]
                + (scenario.synchronous.map { ["--synchronous", $0] } ?? [])
        }
        // The state before the faulted save: an opened, empty store, or one with two batches.
        let before: Int64
        if scenario.firstSave {
            _ = try backend.openStore(path: backend.storePath(in: base))
            before = 0
        } else {
            let setup = try runChild(faultWriter, arguments(base))
            #expect(setup.line("save") == "ok" && setup.line("next") == "ok", "\(setup.output)")
            before = 2
        }

        // How many calls the save makes.
        let counting = directory.appendingPathComponent("count")
        try copyFolder(base, to: counting)
        let counted = try runChild(
            faultWriter,
            arguments(counting),
            environment: try FaultShim.environment(nth: 0, errno: scenario.errno, calls: scenario.calls)
        )
        let calls = try #require(counted.line("calls")?.split(separator: " ").first.flatMap { Int($0) })
        #expect(counted.line("save") == "ok")
        #expect(calls > 0, "the shim counted no call: is it loaded? \(counted.output)")

        var tally = FaultTally()
        let faulted = faultedCalls(of: calls)
        for nth in faulted {
            let folder = directory.appendingPathComponent("fault-\(nth)")
            try copyFolder(base, to: folder)
            let path = backend.storePath(in: folder)
            let log = directory.appendingPathComponent("fault-\(nth).log").path
            // A store open in this process across the child's save must see a save that
            // reported success, before the child goes on.
            let watcher = try backend.openStore(path: path)
            _ = try watcher.fetch(CrashTally.self, id: 1)
            var seenAfterSave: Int64 = -1
            var environment = try FaultShim.environment(nth: nth, errno: scenario.errno, calls: scenario.calls)
            environment["FAULT_LOG"] = log
            let result = try runChild(
                faultWriter,
                arguments(folder) + ["--pause"],
                environment: environment,
                pausingAfter: "calls"
            ) {
                seenAfterSave = try watcher.fetch(CrashTally.self, id: 1)?.lastBatch ?? 0
            }
            // "N name fd fail": the call that failed.
            let faultedCall =
                (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n")
                .first { $0.hasSuffix(" fail") }?.split(separator: " ").dropFirst().first.map { "\($0) #\(nth)" }
                ?? "call #\(nth)"
            let context = "\(scenario), call \(nth) of \(calls): \(result.output)"
            // No trap: the child ends normally and reports both saves.
            #expect(result.exitedNormally && result.status == 0, "\(context)")
            let save = try #require(result.line("save"), "\(context)")
            let next = try #require(result.line("next"), "\(context)")
            #expect(result.line("calls")?.hasSuffix("failures 1") == true, "the fault was not injected: \(context)")
            let saved = save == "ok"
            #expect(saved || save.hasPrefix("error "), "not a StorageError: \(context)")
            if !saved { #expect(save.hasPrefix("error io "), "\(context)") }
            tally.faults += 1

            // Reopened: every acknowledged batch whole, at most one more, nothing left over.
            do {
                let store = try backend.openStore(path: path)
                if next != "ok" {
                    // The same store object could not go on (LMDB after a failed meta page
                    // write); a reopened one must.
                    #expect(next.hasPrefix("error io ") && next.contains("reopen"), "\(context)")
                    try CrashWorkload.run(on: store, batchSize: batchSize, limit: 1) { _ in }
                    tally.neededReopen += 1
                    tally.notable.append("reopen after \(faultedCall)")
                }
                let acknowledged = before + (saved ? 1 : 0) + 1
                let last = try CrashWorkload.verify(store, batchSize: batchSize, acknowledged: acknowledged)
                if saved {
                    #expect(
                        seenAfterSave == before + 1,
                        "the save succeeded, but a store open in another process saw batch \(seenAfterSave): \(context)"
                    )
                    tally.succeededAnyway += 1
                    tally.notable.append("ignored \(faultedCall)")
                } else if last > acknowledged {
                    tally.failedButApplied += 1
                    tally.notable.append("applied after \(faultedCall)")
                } else {
                    tally.failedCleanly += 1
                }
                // And the reopened store saves.
                try CrashWorkload.run(on: store, batchSize: batchSize, limit: 1) { _ in }
                #expect(try CrashWorkload.verify(store, batchSize: batchSize, acknowledged: last + 1) == last + 1)
            }
            #expect(leftovers(in: folder).isEmpty, "\(context): \(leftovers(in: folder))")
            try checkIntegrity(backend, path: path)
            try FileManager.default.removeItem(at: folder)
        }
        print("fault injection, \(scenario): \(tally)")
        #expect(tally.faults == faulted.count)
    }
}

/// The calls a scenario faults, one child process each: every call from the first to the last in
/// a plain build. Under ThreadSanitizer, at most eight spread from the first to the last (11
/// scenarios of up to 49 calls each, every call a ThreadSanitizer-built child process): each fault is a child process that
/// saves alone on one thread, so what ThreadSanitizer adds is this process's side (the watcher,
/// the checks after the reopen), the same for every call; which calls fail cleanly is the plain
/// run's question, and it asks it of every call.
/// - Parameter calls: how many calls the save makes.
/// - Returns: the numbers of the calls to fault, ascending, the first and the last among them.
func faultedCalls(of calls: Int) -> [Int] {
    let last = max(1, calls)
    guard Sanitizers.thread, last > 8 else { return Array(1...last) }
    return (0..<8).map { 1 + ($0 * (last - 1)) / 7 }
}
