internal import CLMDB
import Foundation
import Storage
import StorageTestSupport
import Synchronization
import Testing

@testable import LMDBBackend

private struct Row: Codable, Equatable {
    var id: Int64
    var name: String
    var score: Double
}

private func tinyMap() -> LMDBStorageBackend.Configuration {
    .init(initialMapSize: 1 << 20)
}

@Test(.dedicatedThreads) func aOneMebibyteMapTakesTwoHundredThousandRecords() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path, configuration: tinyMap())
        let store = ObjectStore(backend: backend)
        let rows = (1...200_000).map { Row(id: Int64($0), name: "row \($0)", score: Double($0) / 3) }
        let clock = ContinuousClock()
        let elapsed = try clock.measure { try store.save(contentsOf: rows) }
        let usage = backend.environment.mapUsage()
        print(
            "LMDB: 200,000 records into a 1 MiB map in \(elapsed); map now \(usage.mapSize >> 20) MiB, \(usage.used >> 20) MiB used"
        )
        #expect(usage.mapSize > 1 << 20)
        #expect(try store.count(Row.self, where: nil) == 200_000)
        #expect(try store.fetch(Row.self, id: 199_999) == rows[199_998])
        // Many small transactions grow it too.
        let more = (200_001...210_000).map { Row(id: Int64($0), name: String(repeating: "x", count: 200), score: 0) }
        for chunk in stride(from: 0, to: more.count, by: 500) {
            try store.save(contentsOf: more[chunk..<chunk + 500])
        }
        #expect(try store.count(Row.self, where: nil) == 210_000)
    }
}

@Test(.dedicatedThreads) func aFullMapIsGrownAndTheWriteReplayedEvenWhenTheBodyCaughtTheError() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path, configuration: tinyMap())
        let schema = CollectionSchema(
            name: "blobs",
            columns: [.init(name: "id", type: .integer), .init(name: "data", type: .blob)],
            primaryKey: "id"
        )
        var runs = 0
        var swallowed = 0
        try backend.write { transaction in
            runs += 1
            _ = try transaction.prepareCollection(schema)
            let writer = try transaction.makeWriter(for: "blobs", columns: ["id", "data"])
            for id in 0..<64 {
                do {
                    try writer.put([.integer(Int64(id)), .blob(Data(repeating: UInt8(id), count: 64 << 10))])
                } catch {
                    swallowed += 1  // a careless body: the backend must still not commit a partial write
                }
            }
        }
        #expect(runs > 1)
        #expect(swallowed > 0)
        #expect(backend.environment.mapUsage().mapSize >= 4 << 20)
        try backend.read { transaction in
            #expect(try transaction.count(in: "blobs", where: nil) == 64)
            var seen = 0
            try transaction.scan(ScanRequest(collection: "blobs", columns: ["id", "data"])) { row in
                #expect(row.value(at: 1) == .blob(Data(repeating: UInt8(seen), count: 64 << 10)))
                seen += 1
                return true
            }
            #expect(seen == 64)
        }
    }
}

@Test(.dedicatedThreads) func aMapGrownByAnotherProcessIsAdopted() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path, configuration: tinyMap())
        let store = ObjectStore(backend: backend)
        try store.save(Row(id: 1, name: "before", score: 0))
        // A read, so a reset read transaction waits in the pool to be renewed after the growth.
        #expect(try store.count(Row.self, where: nil) == 1)
        // Another process (the crash writer, default 64 MiB map) writes far more than 1 MiB.
        let process = Process()
        process.executableURL = CrashHarness.executable
        process.arguments = ["--backend", "lmdb", "--path", path, "--batch-size", "100", "--batches", "40"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(backend.environment.mapUsage().mapSize == 1 << 20)
        // This process's next transaction meets MDB_MAP_RESIZED, adopts the new size, and reads.
        #expect(try CrashWorkload.verify(store, batchSize: 100, acknowledged: 40) == 40)
        #expect(backend.environment.mapUsage().mapSize > 1 << 20)
        try store.save(Row(id: 2, name: "after", score: 0))
        #expect(try store.count(Row.self, where: nil) == 2)
    }
}

/// Starts a Python process that opens the store through liblmdb and, with `reading`, begins a
/// read transaction; returns once it is in place.
private func startLMDBProcess(_ path: String, reading: Bool) throws -> Process {
    let script = """
        import ctypes, sys, time
        lmdb = ctypes.CDLL("liblmdb.so.0")
        env = ctypes.c_void_p(); txn = ctypes.c_void_p()
        assert lmdb.mdb_env_create(ctypes.byref(env)) == 0
        assert lmdb.mdb_env_open(env, sys.argv[1].encode(), 0x4000 | 0x200000, 0o600) == 0
        if sys.argv[2] == "read":
            assert lmdb.mdb_txn_begin(env, None, 0x20000, ctypes.byref(txn)) == 0
        print("ready", flush=True)
        time.sleep(60)
        """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", script, path, reading ? "read" : "keep"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    _ = output.fileHandleForReading.availableData
    return process
}

/// Needs python3 (for its ctypes binding to liblmdb; `scripts/setup.sh` installs it): the other
/// processes must be real ones.
@Test(.dedicatedThreads)
func readerSlotsOfDeadProcessesAreClearedAtOpen() throws {
    try withStorePath { _, path in
        try ObjectStore(backend: .lmdb(path: path)).save(Row(id: 1, name: "x", score: 0))
        // One process keeps the environment open (so the lock file is not reset by the next
        // opener); another is killed while it holds a read transaction, leaving its slot behind.
        let keeper = try startLMDBProcess(path, reading: false)
        defer {
            kill(keeper.processIdentifier, SIGKILL)
            keeper.waitUntilExit()
        }
        let reader = try startLMDBProcess(path, reading: true)
        kill(reader.processIdentifier, SIGKILL)
        reader.waitUntilExit()
        let backend = try LMDBStorageBackend(path: path)
        var dead: Int32 = -1
        #expect(mdb_reader_check(backend.environment.env, &dead) == 0)
        #expect(dead == 0, "the dead reader's slot was still taken after open")
    }
}

@Test(.dedicatedThreads) func aWriteInsideAReadWorksAndFailsFastWhenItWouldNeedTheMapToGrow() throws {
    try withStorePath { _, path in
        // A resize that waited for the open transactions would wait this long: the write must
        // fail well before it (a loaded machine under ThreadSanitizer took 6.4 s to fail fast).
        var configuration = tinyMap()
        configuration.mapResizeTimeoutSeconds = 600
        let store = try ObjectStore(backend: .lmdb(path: path, configuration: configuration))
        try store.save(Row(id: 1, name: "a", score: 0))
        let clock = ContinuousClock()
        let start = clock.now
        var outcome: StorageError?
        try store.forEach(Row.self) { _ in
            try store.save(Row(id: 2, name: "small", score: 0))
            do {
                // Far more than the map holds: growing it would wait for this thread's own read.
                try store.save(
                    contentsOf: (3..<2_000).map { Row(id: $0, name: String(repeating: "z", count: 1_000), score: 0) }
                )
            } catch let error as StorageError {
                outcome = error
            }
        }
        #expect(outcome?.code == .busy)
        #expect(clock.now - start < .seconds(120))
        #expect(try store.count(Row.self, where: nil) == 2)
        // Outside the read, the same write grows the map.
        try store.save(
            contentsOf: (3..<2_000).map { Row(id: $0, name: String(repeating: "z", count: 1_000), score: 0) }
        )
        #expect(try store.count(Row.self, where: nil) == 1_999)
    }
}

/// LMDB (0.9) begins a read by reading the newest commit's id, then copying the roots from that
/// commit's meta page without checking it again; a writer that finishes one commit and writes the
/// next meanwhile overwrites the page being copied. A read whose beginning overlapped that much
/// of this process's committing is begun again (`LMDBEnvironment.startRead`); here the two
/// commits are made, on another thread, inside the window.
@Test(.dedicatedThreads) func aReadWhoseBeginningOverlappedTwoCommitsIsBegunAgain() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path)
        let store = ObjectStore(backend: backend)
        let environment = backend.environment
        try store.save(Row(id: 1, name: "a", score: 0))
        #expect(try store.fetch(Row.self, id: 1) == Row(id: 1, name: "a", score: 0))

        /// Sets the hook to make `commits` saves on another thread the first time it runs.
        func commitInTheWindow(_ commits: [Row]) {
            let pending = Locked(commits)
            environment.beforeReadBegins = {
                let rows = pending.withLock { rows in
                    defer { rows = [] }
                    return rows
                }
                guard !rows.isEmpty else { return }
                let done = DispatchSemaphore(value: 0)
                let writer = Thread {
                    for row in rows { _ = try? store.save(row) }
                    done.signal()
                }
                writer.start()
                done.wait()
            }
        }
        defer { environment.beforeReadBegins = nil }

        let before = environment.snapshotRetries.load(ordering: .relaxed)
        commitInTheWindow([Row(id: 1, name: "b", score: 1), Row(id: 1, name: "c", score: 2)])
        #expect(try store.fetch(Row.self, id: 1) == Row(id: 1, name: "c", score: 2))
        #expect(environment.snapshotRetries.load(ordering: .relaxed) == before + 1)

        // One commit in the window writes the other meta page: no race, no second begin.
        commitInTheWindow([Row(id: 1, name: "d", score: 3)])
        #expect(try store.fetch(Row.self, id: 1) == Row(id: 1, name: "d", score: 3))
        #expect(environment.snapshotRetries.load(ordering: .relaxed) == before + 1)
    }
}

/// The counter workload's shared counter (Sources/StorageCrashWriter/CounterWorkload.swift).
private struct LoadCounter: Codable, Equatable {
    var id: Int64
    var value: Int64
}

/// Two commits by another process, which the commit counter of this one cannot see, made after
/// the read began on its snapshot (as if the reader were held up after LMDB read the newest id):
/// the meta pages themselves show that the page the read copied from was written again
/// (`LMDBEnvironment.metaPageWasRewritten`), and the read is begun again on the newest commit.
@Test(.dedicatedThreads) func aReadHeldUpWhileAnotherProcessCommitsTwiceIsBegunAgain() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path)
        let store = ObjectStore(backend: backend)
        let environment = backend.environment
        try store.save(LoadCounter(id: 1, value: 0))
        #expect(try store.fetch(LoadCounter.self, id: 1) == LoadCounter(id: 1, value: 0))

        let pending = Locked(true)
        let exitStatus = Locked<Int32?>(nil)
        environment.afterReadBegins = {
            let first = pending.withLock { pending in
                defer { pending = false }
                return pending
            }
            guard first else { return }
            // Two transactions, each committed by the child.
            let child = Process()
            child.executableURL = CrashHarness.executable
            child.arguments = [
                "--backend", "lmdb", "--path", path, "--workload", "counter", "--writer", "1", "--count", "2",
            ]
            child.standardOutput = FileHandle.nullDevice
            do {
                try child.run()
                child.waitUntilExit()
                exitStatus.withLock { $0 = child.terminationStatus }
            } catch {
                exitStatus.withLock { $0 = -1 }
            }
        }
        defer { environment.afterReadBegins = nil }

        let retries = environment.snapshotRetries.load(ordering: .relaxed)
        let commits = environment.commitSequence.load(ordering: .relaxed)
        #expect(try store.fetch(LoadCounter.self, id: 1) == LoadCounter(id: 1, value: 2))
        #expect(exitStatus.withLock { $0 } == 0)
        #expect(environment.commitSequence.load(ordering: .relaxed) == commits)
        #expect(environment.snapshotRetries.load(ordering: .relaxed) == retries + 1)
    }
}
