import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// kill -9 cannot catch a missing fsync (the kernel keeps the page cache), so these tests record
/// the system calls of one save with strace and check the order each backend documents
/// (docs/RELIABILITY.md, "Durability by default, per backend"). strace is installed by
/// scripts/setup.sh.

/// Saves with the fault writer (no shim) under strace, after `setup` saves without it.
private func traceSave(
    _ backend: DiskBackend,
    synchronous: String? = nil,
    batchSize: Int = 3,
    freshStore: Bool = false,
    in directory: URL
) throws -> SyscallTrace {
    let path = backend.storePath(in: directory)
    let arguments =
        ["--backend", backend.rawValue, "--path", path, "--batch-size", "\(batchSize)"]
        + (synchronous.map { ["--synchronous", $0] } ?? [])
    if !freshStore {
        // A store with its collections and a batch, so the traced save is an ordinary one.
        let setup = try runChild(faultWriter, arguments + ["--no-next"])
        #expect(setup.line("save") == "ok", "\(setup.output)")
    }
    let (trace, status) = try traceSyscalls([faultWriter.path] + arguments, in: directory)
    #expect(status == 0)
    let store = try backend.openStore(path: path)
    #expect(
        try CrashWorkload.verify(store, batchSize: batchSize, acknowledged: freshStore ? 2 : 3) == (freshStore ? 2 : 3)
    )
    return trace
}

/// SQLite in WAL mode with the default `synchronous = NORMAL`: a save appends its frames to the
/// `-wal` file and does not touch the database file (that is the checkpoint's job), and it does
/// not sync: a commit survives a crash of the process, and a power loss may lose the last ones.
@Test(.dedicatedThreads) func sqliteDefaultSaveAppendsToTheWALWithoutSyncing() throws {
    try TemporaryDirectory.with("order-sqlite") { directory in
        let calls = try traceSave(.sqlite, in: directory).between("begin", and: "save")
        let walWrites = calls.filter {
            if case .write = $0.call { $0.path?.hasSuffix(".sqlite-wal") == true } else { false }
        }
        #expect(!walWrites.isEmpty, "no write to the -wal file: \(calls)")
        let databaseWrites = calls.filter {
            if case .write = $0.call { $0.path?.hasSuffix(".sqlite") == true } else { false }
        }
        #expect(databaseWrites.isEmpty, "the save wrote the database file itself: \(databaseWrites)")
        let syncs = calls.filter { if case .sync = $0.call { true } else { false } }
        #expect(syncs.isEmpty, "synchronous=NORMAL synced on commit: \(syncs)")
    }
}

/// SQLite with `synchronous: .full`: the save's frames are written to the `-wal` file, then the
/// `-wal` file is synced (fdatasync) before the save returns; nothing is written to it after.
@Test(.dedicatedThreads) func sqliteFullSaveSyncsTheWALAfterItsLastWrite() throws {
    try TemporaryDirectory.with("order-sqlite-full") { directory in
        let calls = try traceSave(.sqlite, synchronous: "full", in: directory).between("begin", and: "save")
        let isWAL = { (path: String?) in path?.hasSuffix(".sqlite-wal") == true }
        let lastWrite = calls.lastIndex { if case .write = $0.call { isWAL($0.path) } else { false } }
        let lastSync = calls.lastIndex { if case .sync = $0.call { isWAL($0.path) } else { false } }
        let written = try #require(lastWrite, "no write to the -wal file: \(calls)")
        let synced = try #require(lastSync, "the -wal file was not synced: \(calls)")
        #expect(written < synced, "the -wal file was written after its last sync: \(calls)")
        let databaseWrites = calls.filter {
            if case .write = $0.call { $0.path?.hasSuffix(".sqlite") == true } else { false }
        }
        #expect(databaseWrites.isEmpty)
    }
}

/// LMDB with the default flags (no MDB_NOSYNC, MDB_NOMETASYNC or MDB_WRITEMAP): a save writes its
/// new pages to the data file, fdatasyncs it, and only then writes the meta page that points at
/// them, through a descriptor opened O_DSYNC (so the meta write is on disk when it returns); the
/// meta page is the last thing written.
@Test(.dedicatedThreads) func lmdbSaveSyncsPagesBeforeTheMetaPage() throws {
    try TemporaryDirectory.with("order-lmdb") { directory in
        for freshStore in [false, true] {
            let folder = directory.appendingPathComponent(freshStore ? "fresh" : "used")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            let calls = try traceSave(.lmdb, freshStore: freshStore, in: folder).between("begin", and: "save")
            let isMeta = { (flags: String?) in flags?.contains("O_DSYNC") == true || flags?.contains("O_SYNC") == true }
            let onStore = { (path: String?) in path?.hasSuffix(".lmdb") == true }
            let pageWrites = calls.indices.filter {
                if case .write = calls[$0].call { onStore(calls[$0].path) && !isMeta(calls[$0].flags) } else { false }
            }
            let dataSyncs = calls.indices.filter {
                if case .sync = calls[$0].call { onStore(calls[$0].path) && !isMeta(calls[$0].flags) } else { false }
            }
            let metaWrites = calls.indices.filter {
                if case .write = calls[$0].call { onStore(calls[$0].path) && isMeta(calls[$0].flags) } else { false }
            }
            let context = "\(freshStore ? "first" : "later") save: \(calls.map(\.call))"
            let lastPage = try #require(pageWrites.last, "no page written: \(context)")
            let sync = try #require(dataSyncs.last, "the data file was not synced: \(context)")
            #expect(metaWrites.count == 1, "\(context)")
            let meta = try #require(metaWrites.last)
            #expect(lastPage < sync && sync < meta, "pages → fdatasync → meta page not kept: \(context)")
            let writes = calls.indices.filter {
                if case .write = calls[$0].call { onStore(calls[$0].path) } else { false }
            }
            #expect(writes.last == meta, "written after the meta page: \(context)")
        }
    }
}

/// The file archive: each file a save writes goes temporary file (created 0600, O_EXCL,
/// O_NOFOLLOW) → write → fsync → rename over the record → fsync of the record's folder; a save of
/// several files first writes and fsyncs its journal and fsyncs the store folder, before any
/// rename. Checked over a first save (which creates the collections) and a later one.
@Test(.dedicatedThreads) func archiveSaveWritesFsyncsRenamesThenFsyncsTheFolder() throws {
    try TemporaryDirectory.with("order-archive") { directory in
        let trace = try traceSave(.archive, freshStore: true, in: directory)
        let calls = trace.between("begin", and: "next")
        var written = Set<String>()
        var synced = Set<String>()
        var journalReady = false
        var renamed: [String: String] = [:]  // temporary file → target, awaiting the folder's fsync
        var completed = 0
        for (call, path, flags) in calls {
            switch call {
            case .open(let opened, let flags, _) where opened.contains("/.tmp-"):
                #expect(flags.contains("O_CREAT") && flags.contains("O_EXCL") && flags.contains("O_NOFOLLOW"))
                #expect(flags.hasSuffix("0600"), "\(opened) created with \(flags)")
            case .write:
                if let path, path.contains("/.tmp-") || path.hasSuffix("/journal") { written.insert(path) }
            case .sync:
                guard let path else { continue }
                if path.contains("/.tmp-") || path.hasSuffix("/journal") {
                    #expect(written.contains(path), "fsync before write of \(path)")
                    synced.insert(path)
                } else if flags?.contains("O_DIRECTORY") == true {
                    if synced.contains(where: { $0.hasSuffix("/journal") }) { journalReady = true }
                    for (temporary, target) in renamed where (target as NSString).deletingLastPathComponent == path {
                        renamed[temporary] = nil
                        completed += 1
                    }
                }
            case .rename(let from, let to):
                guard from.contains("/.tmp-") else { continue }
                #expect(synced.contains(from), "\(from) renamed before it was fsynced")
                #expect(journalReady, "\(from) renamed before the journal and its folder were synced")
                renamed[from] = to
            default:
                break
            }
        }
        #expect(renamed.isEmpty, "renamed without an fsync of the folder afterwards: \(renamed)")
        // Two batches of three records and a tally, and the new collections' schemas.
        #expect(completed >= 10)
    }
}
