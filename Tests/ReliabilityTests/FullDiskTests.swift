import Foundation
import LMDBBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Mounts (and unmounts) small tmpfs file systems; needs root and a kernel that lets this
/// process mount, which is checked once by trying.
enum TinyFileSystem {
    static func mount(at folder: URL, size: String) -> Bool {
        guard let program = findProgram("mount") else { return false }
        let result = try? runChild(program, ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", folder.path])
        return result?.status == 0
    }

    static func resize(_ folder: URL, to size: String) throws {
        let program = try #require(findProgram("mount"))
        let result = try runChild(program, ["-o", "remount,size=\(size)", folder.path])
        #expect(result.status == 0, "\(result.output)")
    }

    static func unmount(_ folder: URL) {
        if let program = findProgram("umount") { _ = try? runChild(program, ["-l", folder.path]) }
    }

    /// Whether a tmpfs can be mounted here (root in a sandbox that allows it).
    static let isAvailable: Bool = {
        guard getuid() == 0, let directory = try? TemporaryDirectory("tmpfs-probe") else { return false }
        defer { directory.remove() }
        guard mount(at: directory.url, size: "64k") else { return false }
        unmount(directory.url)
        return true
    }()
}

/// Saves crash-test batches until one fails; returns the number saved and the error.
private func fill(
    _ store: ObjectStore,
    batchSize: Int,
    limit: Int = 20_000
) throws -> (saved: Int64, error: StorageError?) {
    var saved: Int64 = 0
    while saved < limit {
        do {
            try CrashWorkload.run(on: store, batchSize: batchSize, limit: 1) { _ in }
            saved += 1
        } catch let error as StorageError {
            return (saved, error)
        }
    }
    return (saved, nil)
}

/// A store on a 1 MiB tmpfs is filled until a save fails: the failure is a `StorageError` with
/// code `.io`, every batch saved before it is whole, and once the file system is given room (a
/// remount to 64 MiB) the same store object saves again; reopened, the store passes the engine's
/// integrity check and holds no temporary file.
@Test(
    .dedicatedThreads,
    .enabled(if: TinyFileSystem.isAvailable, "mounting a tmpfs needs root; the shim's ENOSPC test runs instead"),
    arguments: DiskBackend.allCases
)
func aFullFileSystemFailsCleanlyAndRecoversWhenSpaceReturns(_ backend: DiskBackend) throws {
    try TemporaryDirectory.with("full-disk-\(backend)") { directory in
        let mountPoint = directory.appendingPathComponent("tiny")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: false)
        try #require(TinyFileSystem.mount(at: mountPoint, size: "1m"))
        defer { TinyFileSystem.unmount(mountPoint) }
        let path = backend.storePath(in: mountPoint)
        let batchSize = 20
        var saved: Int64 = 0
        do {
            let store = try backend.openStore(path: path)
            let filled = try fill(store, batchSize: batchSize)
            saved = filled.saved
            let error = try #require(filled.error, "1 MiB took \(saved) batches without failing")
            #expect(error.code == .io, "\(error)")
            #expect(saved > 0)
            // Still full: failing again changes nothing.
            #expect(throws: StorageError.self) {
                try CrashWorkload.run(on: store, batchSize: batchSize, limit: 1) { _ in }
            }
            #expect(try CrashWorkload.verify(store, batchSize: batchSize, acknowledged: saved) >= saved)

            try TinyFileSystem.resize(mountPoint, to: "64m")
            try CrashWorkload.run(on: store, batchSize: batchSize, limit: 1) { _ in }
            saved = try CrashWorkload.verify(store, batchSize: batchSize, acknowledged: saved + 1)
            print(
                "full disk, \(backend): the 1 MiB file system took \(filled.saved) batches; then \(error.code): \(error.message)"
            )
        }
        let reopened = try backend.openStore(path: path)
        #expect(try CrashWorkload.verify(reopened, batchSize: batchSize, acknowledged: saved) == saved)
        #expect(leftovers(in: mountPoint).isEmpty, "\(leftovers(in: mountPoint))")
        try checkIntegrity(backend, path: path)
    }
}

/// Without root: the fault shim makes every write of a save fail with ENOSPC (a disk that stays
/// full), then is disarmed (space returns). The save fails with `.io`, and the next save, on the
/// same store object (LMDB: after reopening, see `everyFaultAlongASaveFailsCleanly`), succeeds.
@Test(.dedicatedThreads, arguments: DiskBackend.allCases)
func aDiskThatStaysFullFailsTheSaveAndTheNextSaveSucceeds(_ backend: DiskBackend) throws {
    try TemporaryDirectory.with("enospc-\(backend)") { directory in
        let path = backend.storePath(in: directory)
        let arguments = ["--backend", backend.rawValue, "--path", path, "--batch-size", "20"]
        let setup = try runChild(faultWriter, arguments)
        #expect(setup.line("save") == "ok" && setup.line("next") == "ok", "\(setup.output)")
        let result = try runChild(
            faultWriter,
            arguments,
            environment: try FaultShim.environment(nth: 1, errno: "ENOSPC", calls: "write", sticky: true)
        )
        #expect(result.exitedNormally && result.status == 0, "\(result.output)")
        let save = try #require(result.line("save"), "\(result.output)")
        #expect(save.hasPrefix("error io "), "\(result.output)")
        // SQLite says SQLITE_FULL's own words.
        #expect(save.contains("No space left on device") || save.contains("disk is full"), "\(result.output)")
        let next = try #require(result.line("next"))
        let store = try backend.openStore(path: path)
        var acknowledged: Int64 = 2
        if next == "ok" {
            acknowledged += 1
        } else {
            #expect(backend == .lmdb && next.hasPrefix("error io ") && next.contains("reopen"), "\(result.output)")
            try CrashWorkload.run(on: store, batchSize: 20, limit: 1) { _ in }
            acknowledged += 1
        }
        #expect(try CrashWorkload.verify(store, batchSize: 20, acknowledged: acknowledged) == acknowledged)
        #expect(leftovers(in: directory).isEmpty, "\(leftovers(in: directory))")
    }
}

/// LMDB's map: a store whose map may not grow past 256 KiB fills up, and the write that would
/// need more fails with `.io` ("the store is full") without losing a committed batch; reopened
/// with a larger maximum, the map grows and the write succeeds. (A small map that may grow is
/// tested by `aOneMebibyteMapTakesTwoHundredThousandRecords` in LMDBBackendTests.)
@Test(.dedicatedThreads) func anLMDBMapAtItsMaximumFailsCleanlyAndAReopenWithALargerOneSucceeds() throws {
    try TemporaryDirectory.with("full-map") { directory in
        let path = DiskBackend.lmdb.storePath(in: directory)
        let batchSize = 20
        var saved: Int64 = 0
        do {
            let capped = LMDBStorageBackend.Configuration(initialMapSize: 64 << 10, maximumMapSize: 256 << 10)
            let store = try ObjectStore(backend: .lmdb(path: path, configuration: capped))
            let filled = try fill(store, batchSize: batchSize)
            saved = filled.saved
            let error = try #require(filled.error)
            #expect(error.code == .io && error.message.contains("full"), "\(error)")
            #expect(try CrashWorkload.verify(store, batchSize: batchSize, acknowledged: saved) == saved)
        }
        let larger = LMDBStorageBackend.Configuration(initialMapSize: 64 << 10, maximumMapSize: 4 << 20)
        let store = try ObjectStore(backend: .lmdb(path: path, configuration: larger))
        try CrashWorkload.run(on: store, batchSize: batchSize, limit: 1) { _ in }
        #expect(try CrashWorkload.verify(store, batchSize: batchSize, acknowledged: saved + 1) == saved + 1)
    }
}
