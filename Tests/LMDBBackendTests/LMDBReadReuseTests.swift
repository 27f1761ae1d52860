import Foundation
import Storage
import StorageTestSupport
import Synchronization
import Testing

@testable import LMDBBackend

/// A record whose two fields must always agree: a reader that sees one from one snapshot and
/// the other from another, or a row read for another record, fails the check.
private struct Versioned: Codable, Equatable, Sendable {
    var id: Int64
    var version: Int64
    var check: Int64

    init(id: Int64, version: Int64) {
        self.id = id
        self.version = version
        self.check = id * 1_000_000 + version
    }
}

/// A record whose decoding looks up another record of its collection in the same read
/// transaction, between two of its own properties.
private struct Linked: Codable, Equatable {
    var id: Int64
    var next: Int64
    var name: String
    /// The name of record `next`, looked up while this record is being decoded.
    var nextName: String?

    nonisolated(unsafe) static var transaction: StoreReadTransaction?

    init(id: Int64, next: Int64, name: String) {
        self.id = id
        self.next = next
        self.name = name
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        next = try container.decode(Int64.self, forKey: .next)
        if let transaction = Self.transaction, next != id {
            nextName = try transaction.fetch(Linked.self, id: next)?.name
        }
        name = try container.decode(String.self, forKey: .name)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(next, forKey: .next)
        try container.encode(name, forKey: .name)
    }

    private enum CodingKeys: String, CodingKey {
        case id, next, name
    }
}

/// Read transactions are kept and renewed between look-ups: each renewal must start on the
/// newest committed snapshot, whoever committed it (another store object of the process,
/// another thread, another process). A kept transaction that were not renewed would go on
/// reading the snapshot of its first look-up.
@Test(.dedicatedThreads) func aKeptReadTransactionSeesEveryLaterCommit() throws {
    try withStorePath { _, path in
        let store = try ObjectStore(backend: .lmdb(path: path))
        try store.save(CrashTally(lastBatch: 0))
        for _ in 0..<3 { #expect(try store.fetch(CrashTally.self, id: 1)?.lastBatch == 0) }

        // Another store object on the same file (the same environment and kept transactions).
        let other = try ObjectStore(backend: .lmdb(path: path))
        try other.save(CrashTally(lastBatch: 40))
        #expect(try store.fetch(CrashTally.self, id: 1)?.lastBatch == 40)
        try other.close()

        // Another thread, through this store.
        let saved = DispatchSemaphore(value: 0)
        Thread {
            _ = try? store.save(CrashTally(lastBatch: 50))
            saved.signal()
        }.start()
        saved.wait()
        #expect(try store.fetch(CrashTally.self, id: 1)?.lastBatch == 50)

        // Other processes: each commits one more batch, and the next look-up sees it.
        var last = try #require(try store.fetch(CrashTally.self, id: 1)?.lastBatch)
        for _ in 0..<2 {
            let process = Process()
            process.executableURL = CrashHarness.executable
            process.arguments = ["--backend", "lmdb", "--path", path, "--batch-size", "5", "--batches", "1"]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            let now = try #require(try store.fetch(CrashTally.self, id: 1)?.lastBatch)
            #expect(now != last)
            last = now
        }
        try store.close()
    }
}

/// Several threads look records up in one store while another thread commits new versions of
/// them: every record read is whole and of one version, a thread never sees a version older
/// than one it saw before (each look-up reads the newest snapshot), and after the writer's
/// last commit every thread reads the last version.
@Test(.dedicatedThreads) func threadsLookUpWhileAnotherWrites() throws {
    try withStorePath { _, path in
        let store = try ObjectStore(backend: .lmdb(path: path))
        let ids = Int64(1)...40
        try store.save(contentsOf: ids.map { Versioned(id: $0, version: 0) })
        let lastVersion: Int64 = 30
        let failures = Locked<[String]>([])
        let writerDone = Atomic(false)
        let group = DispatchGroup()
        for reader in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                var seen = [Int64: Int64]()
                var generator = SeededGenerator(seed: UInt64(reader + 1))
                func lookUp(_ id: Int64) {
                    do {
                        guard let record = try store.fetch(Versioned.self, id: id) else {
                            return failures.withLock { $0.append("record \(id) missing") }
                        }
                        if record != Versioned(id: id, version: record.version) {
                            failures.withLock { $0.append("record \(id) torn: \(record)") }
                        }
                        if record.version < seen[id, default: 0] {
                            failures.withLock { $0.append("record \(id) went back to \(record.version)") }
                        }
                        seen[id] = record.version
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
                while !writerDone.load(ordering: .acquiring) {
                    lookUp(Int64.random(in: ids, using: &generator))
                }
                for id in ids {
                    lookUp(id)
                    if seen[id] != lastVersion {
                        failures.withLock { $0.append("record \(id) read as \(seen[id] ?? -1) after the last commit") }
                    }
                }
            }.start()
        }
        group.enter()
        Thread {
            defer { group.leave() }
            do {
                for version in 1...lastVersion {
                    try store.save(contentsOf: ids.map { Versioned(id: $0, version: version) })
                }
            } catch {
                failures.withLock { $0.append("the writer failed: \(error)") }
            }
            writerDone.store(true, ordering: .releasing)
        }.start()
        group.wait()
        #expect(failures.withLock { $0 } == [])
        try store.close()
    }
}

/// A look-up made while another look-up of the same collection and columns is decoding, in
/// the same read transaction, reads into a row of its own: the outer record's remaining
/// properties still come from the outer record.
@Test(.dedicatedThreads) func aLookUpInsideADecodeKeepsTheOuterRow() throws {
    try withStorePath { _, path in
        let store = try ObjectStore(backend: .lmdb(path: path))
        try store.save(contentsOf: [
            Linked(id: 1, next: 2, name: "first"), Linked(id: 2, next: 2, name: "second"),
        ])
        // Kept transaction state first: the same look-up, outside the nesting.
        #expect(try store.fetch(Linked.self, id: 1)?.name == "first")
        let read = try store.read { transaction in
            Linked.transaction = transaction
            defer { Linked.transaction = nil }
            return try (transaction.fetch(Linked.self, id: 1), transaction.fetch(Linked.self, id: 1))
        }
        for record in [read.0, read.1] {
            #expect(record?.name == "first")
            #expect(record?.nextName == "second")
        }
        try store.close()
    }
}

/// A transaction that a backend read handed out is refused with `.misuse` once the read has
/// ended, though its object is kept and begun again by the next read.
@Test(.dedicatedThreads) func aBackendReadTransactionIsRefusedAfterItsClosure() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path)
        let store = ObjectStore(backend: backend)
        try store.save(CrashTally(lastBatch: 3))
        let escaped = try backend.read { $0 }
        _ = try backend.read { try $0.schema(of: "CrashTally") }
        do {
            _ = try escaped.schema(of: "CrashTally")
            Issue.record("an ended read transaction was used")
        } catch let error as StorageError {
            #expect(error.code == .misuse)
        }
        try store.close()
    }
}
