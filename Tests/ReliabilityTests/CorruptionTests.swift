internal import CLMDB
internal import CSQLite
import Foundation
import Glibc
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Damaged stores (docs/RELIABILITY.md, section 6): a store of known records is copied, the copy
/// damaged (bytes flipped in about 1% of its pages; or a file cut short), and everything in it
/// read back. Every read must give the right data or a `StorageError`; never a crash (each
/// store is read in a child process, so a crash is counted rather than ending the run), never an
/// error of another type. Where the format has checksums (archives) no read may give wrong data;
/// SQLite and LMDB have none over record contents, so there a changed value can be read back
/// as it now is — those reads are counted and reported, not refused.
@Suite(.dedicatedThreads)
struct CorruptionTests {
    /// The flip seeds: 12 in CI; `CORRUPTION_SEEDS=n` runs n (the long run).
    static let flipSeeds: [UInt64] = Array(
        1...max(1, ProcessInfo.processInfo.environment["CORRUPTION_SEEDS"].flatMap { UInt64($0) } ?? 12)
    )

    /// Whether the tests run under ThreadSanitizer (its runtime exports `__tsan_init`). The
    /// damage tests are skipped then: their reads are single-threaded, in child processes,
    /// so there is nothing for it to check, and they would add minutes to that run. They run in
    /// the normal suite and under AddressSanitizer.
    static let underThreadSanitizer: Bool = {
        guard let handle = dlopen(nil, RTLD_NOW) else { return false }
        defer { dlclose(handle) }
        return dlsym(handle, "__tsan_init") != nil
    }()

    /// A store image to damage: each backend's files as it leaves them when closed (SQLite's
    /// close checkpoints the WAL into the database file, so the damage reaches the B-tree
    /// pages), and SQLite also as a writer that was killed leaves it: the data still in the WAL.
    struct Image: Sendable, CustomStringConvertible {
        var backend: DiskBackend
        var withWAL = false
        var description: String { withWAL ? "\(backend)-wal" : "\(backend)" }

        static let all = [
            Image(backend: .sqlite), Image(backend: .sqlite, withWAL: true), Image(backend: .lmdb),
            Image(backend: .archive),
        ]
    }

    /// Builds the store of `CorruptionRecord.all` under `directory/pristine` and closes it; the
    /// WAL image is a copy of the files taken while the store is still open, as a writer that
    /// was killed leaves them.
    private static func buildPristine(_ image: Image, in directory: URL) throws -> URL {
        let backend = image.backend
        let pristine = directory.appendingPathComponent("pristine")
        if image.withWAL {
            let live = directory.appendingPathComponent("live")
            try FileManager.default.createDirectory(at: live, withIntermediateDirectories: true)
            let store = try write(backend, path: backend.storePath(in: live))
            #expect(FileManager.default.fileExists(atPath: backend.storePath(in: live) + "-wal"))
            try CorruptionFiles.copy(live, to: pristine)
            withExtendedLifetime(store) {}
        } else {
            try FileManager.default.createDirectory(at: pristine, withIntermediateDirectories: true)
            _ = try write(backend, path: backend.storePath(in: pristine))
        }
        let files = try CorruptionFiles.list(in: pristine)
        let sizes = try files.map { "\($0) \(try CorruptionFiles.size(pristine.appendingPathComponent($0).path))" }
        print("corruption \(image) store: \(files.count) files: \(sizes.prefix(4).joined(separator: ", "))")
        return pristine
    }

    /// Writes the records (in batches of 50) and reads them back; the store closes on return.
    private static func write(_ backend: DiskBackend, path: String) throws -> ObjectStore {
        let store = try backend.openStore(path: path)
        let records = CorruptionRecord.all
        for start in stride(from: 0, to: records.count, by: 50) {
            try store.save(contentsOf: records[start..<min(records.count, start + 50)])
        }
        // The pristine store reads back whole (else the damage tests would prove nothing).
        #expect(try store.fetchAll(CorruptionRecord.self) == records)
        return store
    }

    /// Copies the pristine store once per damage, damages each copy, reads them all in child
    /// processes, and returns the outcome of each, with what was damaged.
    private static func run(
        _ backend: DiskBackend,
        in directory: URL,
        pristine: URL,
        damages: [CorruptionDamage]
    ) throws -> [(damage: String, outcome: CorruptionChild.Outcome?)] {
        var cases: [(DiskBackend, String)] = []
        var changes: [String] = []
        for (index, damage) in damages.enumerated() {
            let copy = directory.appendingPathComponent("case-\(index)")
            try CorruptionFiles.copy(pristine, to: copy)
            changes.append("\(damage): " + (try damage.apply(in: copy)))
            cases.append((backend, backend.storePath(in: copy)))
        }
        let outcomes = try CorruptionChild.run(cases, in: directory)
        return Array(zip(changes, outcomes))
    }

    /// Checks the promises over all cases of one backend, and prints the figures.
    private static func check(
        _ image: Image,
        _ label: String,
        _ results: [(damage: String, outcome: CorruptionChild.Outcome?)]
    ) {
        let backend = image.backend
        var total = CorruptionTally()
        var crashes: [String] = []
        var engineCrashes: [String] = []
        var damagedCases = 0
        let readsPerCase = Int(CorruptionRecord.count) + 4
        for (damage, outcome) in results {
            switch outcome {
            case .read(let tally)?:
                total.add(tally)
                if tally.correct < readsPerCase { damagedCases += 1 }
                #expect(tally.untyped == 0, "\(backend) \(damage): an error that is not a StorageError: \(tally.notes)")
                #expect(
                    tally.named == tally.detected,
                    "\(backend) \(damage): a damaged store not named: \(tally.codes)"
                )
                if backend == .archive {
                    // Every archive carries a CRC-32: damage is always detected.
                    #expect(tally.wrong == 0, "archive \(damage): wrong data read without an error: \(tally.notes)")
                    #expect(tally.typed == 0, "archive \(damage): damage reported as \(tally.codes): \(tally.notes)")
                }
            case .crashed(let report, let frame)?:
                if backend == .lmdb && frame.contains("liblmdb") {
                    // liblmdb 0.9 trusts its pages: a flipped node flag can make it dereference a
                    // sub-cursor that does not exist (see docs/RELIABILITY.md, section 6). Counted
                    // and reported; a crash anywhere else fails the test.
                    engineCrashes.append("\(damage): \(frame)")
                } else {
                    crashes.append("\(damage): \(report) at \(frame)")
                }
            case nil:
                Issue.record("\(backend) \(damage): the case was not run")
            }
        }
        print(
            "corruption \(label) \(image): \(results.count) cases, \(damagedCases) with an effect, "
                + "crashes=\(crashes.count) liblmdb crashes=\(engineCrashes.count) reads: \(total.line)"
        )
        for crash in engineCrashes { print("corruption \(label) \(image): crash inside liblmdb: \(crash)") }
        #expect(crashes.isEmpty, "\(backend): reading a damaged store crashed: \(crashes)")
        // The damage must have reached the data in some cases, or the test proves nothing.
        #expect(damagedCases > 0, "\(backend): no damage had any effect")
    }

    @Test(
        "bytes flipped in about 1% of the pages",
        .disabled(if: underThreadSanitizer, "single-threaded; run in the normal and AddressSanitizer suites"),
        arguments: Image.all
    )
    func flippedPages(_ image: Image) throws {
        try TemporaryDirectory.with("corruption-flip") { directory in
            let pristine = try Self.buildPristine(image, in: directory)
            let results = try Self.run(
                image.backend,
                in: directory,
                pristine: pristine,
                damages: Self.flipSeeds.map { .flip(seed: $0) }
            )
            Self.check(image, "flip", results)
        }
    }

    @Test(
        "store files cut short",
        .disabled(if: underThreadSanitizer, "single-threaded; run in the normal and AddressSanitizer suites"),
        arguments: Image.all
    )
    func truncatedFiles(_ image: Image) throws {
        try TemporaryDirectory.with("corruption-truncate") { directory in
            let pristine = try Self.buildPristine(image, in: directory)
            var files = try CorruptionFiles.list(in: pristine)
            if files.count > 5 {
                // Archives: one file per record; cut the first, the last and three more.
                var generator = SeededGenerator(seed: 7)
                let middle = files.dropFirst().dropLast().shuffled(using: &generator).prefix(3)
                files = [files.first!, files.last!] + middle
            }
            var damages: [CorruptionDamage] = []
            for file in files {
                let size = try CorruptionFiles.size(pristine.appendingPathComponent(file).path)
                let lengths = Set([0, 1, 100, 4096, size / 2, size - 4096, size - 1].filter { $0 >= 0 && $0 < size })
                damages += lengths.sorted().map { .truncate(file: file, length: $0) }
            }
            let results = try Self.run(image.backend, in: directory, pristine: pristine, damages: damages)
            Self.check(image, "truncate", results)
        }
    }

    /// The child's side of `CorruptionChild.run`: runs only when the parent asks for it.
    @Test(.enabled(if: CorruptionChild.planPath != nil))
    func childEntry() throws {
        try CorruptionChild.runPlan()
    }
}

/// Regression: an LMDB file cut short used to open, and the first read of a page past its end
/// killed the process with SIGBUS (LMDB maps the file and trusts the meta page).
@Test(.dedicatedThreads) func anLMDBFileCutShortIsRefusedAtOpenNamingTheFile() throws {
    try TemporaryDirectory.with("corruption-lmdb-cut") { directory in
        let path = DiskBackend.lmdb.storePath(in: directory)
        do {
            let store = try DiskBackend.lmdb.openStore(path: path)
            try store.save(contentsOf: CorruptionRecord.all)
        }
        let size = try CorruptionFiles.size(path)
        try CorruptionDamage.truncate(file: "store.lmdb", length: size / 2).apply(in: directory)
        #expect {
            _ = try DiskBackend.lmdb.openStore(path: path)
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .corrupt && error.path == path && error.message.contains("last page")
        }
    }
}

/// Regression: SQLite's "database disk image is malformed" found by a query (not at open) used to
/// come without the store's path.
@Test(.dedicatedThreads) func aDamagedSQLitePageIsReportedAsCorruptNamingTheFile() throws {
    try TemporaryDirectory.with("corruption-sqlite-page") { directory in
        let path = DiskBackend.sqlite.storePath(in: directory)
        do {
            let store = try DiskBackend.sqlite.openStore(path: path)
            try store.save(contentsOf: CorruptionRecord.all)
        }
        // Closing the store checkpointed its WAL into the database file.
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        // Every page after the first gets an invalid page type: each B-tree but the schema's is
        // damaged.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try CorruptionFiles.size(path)
        for page in stride(from: 4096, to: size, by: 4096) {
            try handle.seek(toOffset: UInt64(page))
            try handle.write(contentsOf: [0xEE])
        }
        try handle.close()
        #expect {
            let store = try DiskBackend.sqlite.openStore(path: path)
            _ = try store.fetchAll(CorruptionRecord.self)
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .corrupt
                && error.path.map { URL(fileURLWithPath: $0).lastPathComponent } == "store.sqlite"
        }
    }
}

/// Regression: a damaged LMDB index entry (found by the long flip run) was reported as
/// `.corrupt` without the store's path. The entries are written with liblmdb directly: one whose
/// bytes are not a key component, and one naming a record that does not exist.
@Test(.dedicatedThreads, arguments: [[0xEE, 0x01], LMDBKeyComponent.text("t3") + LMDBKeyComponent.integer(999_999)])
func aDamagedLMDBIndexEntryIsReportedAsCorruptNamingTheFile(_ entry: [UInt8]) throws {
    try TemporaryDirectory.with("corruption-lmdb-index") { directory in
        let path = DiskBackend.lmdb.storePath(in: directory)
        do {
            let store = try DiskBackend.lmdb.openStore(path: path)
            try store.save(contentsOf: CorruptionRecord.all.prefix(20))
        }
        var env: OpaquePointer?
        try #require(mdb_env_create(&env) == 0)
        defer { mdb_env_close(env) }
        mdb_env_set_maxdbs(env, 16)
        try #require(mdb_env_open(env, path, UInt32(MDB_NOSUBDIR), 0o600) == 0)
        var transaction: OpaquePointer?
        try #require(mdb_txn_begin(env, nil, 0, &transaction) == 0)
        var dbi: MDB_dbi = 0
        try #require(mdb_dbi_open(transaction, "i:damage:0", 0, &dbi) == 0)
        let empty = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
        defer { empty.deallocate() }
        var value = MDB_val(mv_size: 0, mv_data: empty)
        let rc = entry.withUnsafeBytes { bytes in
            var key = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            return mdb_put(transaction, dbi, &key, &value, 0)
        }
        try #require(rc == 0)
        try #require(mdb_txn_commit(transaction) == 0)
        mdb_env_close(env)
        env = nil
        #expect {
            let store = try DiskBackend.lmdb.openStore(path: path)
            _ = try store.fetchAll(CorruptionRecord.self, where: Column("tag") >= "t3")
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .corrupt && error.path == path
        }
    }
}

/// Key components as the LMDB backend writes them (LMDBKeyCoding), for the test above.
enum LMDBKeyComponent {
    static func text(_ text: String) -> [UInt8] { [0x20] + Array(text.utf8) + [0, 1] }
    static func integer(_ number: Int64) -> [UInt8] {
        let bits = UInt64(bitPattern: number) ^ (1 << 63)
        return [0x11] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: bits >> ($0 * 8)) }
            + Array(repeating: 0, count: 8)
    }
}
