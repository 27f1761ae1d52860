import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// How many kills each backend gets: 30 in `swift test`, 10 under ThreadSanitizer (the writer is a
/// child process saving on one thread, so ThreadSanitizer sees only this process reopening and
/// checking the store, the same after every kill; the plain run kills 30 times); scripts/torture.sh
/// sets `TORTURE_KILLS` for a long run.
let tortureKills =
    ProcessInfo.processInfo.environment["TORTURE_KILLS"].flatMap { Int($0) }
    ?? Sanitizers.count(30, underThreadSanitizer: 10)
/// The backends a long run tortures (`TORTURE_BACKENDS=sqlite,lmdb`); all by default.
let tortureBackends = ProcessInfo.processInfo.environment["TORTURE_BACKENDS"].map {
    $0.split(separator: ",").map(String.init)
}

/// How many kills one store gets before a long run starts a fresh one.
let tortureRound = 100
/// The longest wait, in microseconds, between the writer's first commit and its kill.
let tortureMaximumDelay = ProcessInfo.processInfo.environment["TORTURE_MAX_DELAY_US"].flatMap { Int($0) } ?? 20_000

/// The crash writer (a child process committing numbered batches of 20 records and the tally, one
/// transaction each, printing "ack N" after each commit returns) is killed with SIGKILL at a
/// random moment, again and again on one store. After every kill the reopened store holds every
/// acknowledged batch, each record byte-identical to what was written, no torn batch, at most one
/// unacknowledged batch; no temporary file or journal is left; and the engine's own check passes
/// (SQLite's `PRAGMA integrity_check`, a cursor walk of every LMDB database against `mdb_stat`,
/// a decode of every archive).
@Test(.dedicatedThreads, arguments: DiskBackend.allCases)
func killedWriterLosesNoAcknowledgedBatch(_ backend: DiskBackend) throws {
    if let tortureBackends, !tortureBackends.contains(backend.rawValue) { return }
    var checked = 0
    var committed: Int64 = 0
    let start = ContinuousClock.now
    // A long run starts a fresh store every `tortureRound` kills, so that checking the whole
    // store after each kill does not grow without bound.
    for round in stride(from: 0, to: tortureKills, by: tortureRound) {
        let kills = min(tortureRound, tortureKills - round)
        try TemporaryDirectory.with("torture-\(backend)") { directory in
            let path = backend.storePath(in: directory)
            committed += try CrashHarness.killRepeatedly(
                backend: backend.rawValue,
                path: path,
                kills: kills,
                maximumDelay: tortureMaximumDelay
            ) {
                try backend.openStore(path: $0)
            } afterEach: {
                #expect(leftovers(in: directory).isEmpty, "\(leftovers(in: directory))")
                try checkIntegrity(backend, path: path)
                checked += 1
            }
        }
    }
    #expect(checked == tortureKills)
    #expect(committed >= Int64(tortureKills))
    print(
        "kill torture, \(backend): \(checked) kills survived, \(committed) batches of 20 committed,"
            + " integrity checked after each kill, in \(ContinuousClock.now - start)"
    )
}
