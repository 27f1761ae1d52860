import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import LMDBBackend

/// The crash writer's record with only its first two properties: stored first, it makes the
/// collection's schema narrower than the one the crash writer migrates it to.
private struct NarrowCrashRecord: Codable, StorableModel {
    static var collectionName: String { "CrashRecord" }
    var id: Int64
    var batch: Int64
}

/// Read transactions skip the catalog read when a read of the same snapshot already did it; a
/// schema changed by another process is a new snapshot, so the next read must see it.
@Test(.dedicatedThreads) func aSchemaWidenedByAnotherProcessIsSeenByTheNextRead() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path)
        let store = ObjectStore(backend: backend)
        // Both collections exist before the other process writes, so it creates no database
        // (the catalog generation stays) and only rewrites the record collection's schema.
        try store.save(CrashTally(lastBatch: 0))
        try store.save(NarrowCrashRecord(id: 1_000_000, batch: 0))
        for _ in 0..<3 {
            #expect(try store.fetch(NarrowCrashRecord.self, id: 1_000_000)?.batch == 0)
            #expect(try backend.read { try $0.schema(of: "CrashRecord") }?.columns.map(\.name) == ["id", "batch"])
        }
        let process = Process()
        process.executableURL = CrashHarness.executable
        process.arguments = ["--backend", "lmdb", "--path", path, "--batch-size", "10", "--batches", "1"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let columns = try backend.read { try $0.schema(of: "CrashRecord") }?.columns.map(\.name)
        #expect(columns == ["id", "batch", "payload", "blob"])
        #expect(try store.fetch(CrashRecord.self, id: 15) == CrashRecord(id: 15, batch: 1))
        #expect(try store.fetch(CrashTally.self, id: 1)?.lastBatch == 1)
        #expect(try store.fetch(NarrowCrashRecord.self, id: 1_000_000)?.batch == 0)
    }
}

/// A look-up of a collection that does not exist yet is not remembered past the snapshot it was
/// made in: once another write creates it, the next read finds it.
@Test(.dedicatedThreads) func aCollectionCreatedAfterALookUpIsFound() throws {
    try withStorePath { _, path in
        let store = try ObjectStore(backend: .lmdb(path: path))
        try store.save(CrashTally(lastBatch: 0))
        #expect(try store.fetch(NarrowCrashRecord.self, id: 1) == nil)
        #expect(try store.fetch(NarrowCrashRecord.self, id: 1) == nil)
        try store.save(NarrowCrashRecord(id: 1, batch: 7))
        #expect(try store.fetch(NarrowCrashRecord.self, id: 1)?.batch == 7)
    }
}
