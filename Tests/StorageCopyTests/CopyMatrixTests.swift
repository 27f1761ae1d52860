import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Every backend the copy runs between: the persistent ones and the in-memory one.
let everyBackend: [BackendFixture] = BackendFixture.onDisk + [.inMemory]

/// Every ordered pair of backends (25). Under ThreadSanitizer, a ring of five: each backend the
/// source once and the destination once, never its own. What ThreadSanitizer looks for, a race
/// between the copy's reader thread and the writing, is in how one backend reads or writes beside
/// that thread, which the ring runs for every backend on both sides; a fault of one pairing (a
/// value one backend hands back that another stores differently) is not a race, and the plain run
/// copies across all 25.
let backendPairs: [(BackendFixture, BackendFixture)] =
    Sanitizers.thread
    ? everyBackend.indices.map { (everyBackend[$0], everyBackend[($0 + 1) % everyBackend.count]) }
    : everyBackend.flatMap { source in everyBackend.map { (source, $0) } }

/// A new folder `name` inside `directory`.
func subfolder(_ name: String, of directory: URL) throws -> URL {
    let url = directory.appendingPathComponent(name, isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Runs `body` with a store of `source` and one of `destination`, each in a folder of its own in
/// a fresh temporary folder `label-…`; closes both and removes the folder afterwards.
func withStores<Result>(
    _ label: String,
    _ source: BackendFixture,
    _ destination: BackendFixture,
    _ body: (_ from: ObjectStore, _ to: ObjectStore) throws -> Result
) throws -> Result {
    try TemporaryDirectory.with(label) { directory in
        let from = try source.openStore(in: subfolder("source", of: directory))
        defer { try? from.close() }
        let to = try destination.openStore(in: subfolder("destination", of: directory))
        defer { try? to.close() }
        return try body(from, to)
    }
}

/// Fills `store` with the samples, auto-keyed entries (one deleted) and settings.
func fill(_ store: ObjectStore) throws -> (samples: [Sample], entries: [StorageValue]) {
    let samples = Sample.samples()
    try store.save(contentsOf: samples)
    var keys = try store.save(contentsOf: (0..<6).map { Entry(text: "entry \($0)") })
    try store.delete(Entry.self, id: keys[2])
    keys.remove(at: 2)
    let settings = try CopySettings(store: store)
    settings.greeting = "hello \u{1F600}"
    settings.launches = 42
    return (samples, keys)
}

@Suite("Copy between backends", .dedicatedThreads)
struct CopyMatrixTests {
    @Test(arguments: backendPairs)
    func everythingIsCopiedExactlyAndVerifies(_ source: BackendFixture, _ destination: BackendFixture) throws {
        try withStores("copy-matrix", source, destination) { from, to in
            let (samples, entryKeys) = try fill(from)

            let report = try from.copy(to: to)
            #expect(report["samples"]?.records == samples.count)
            #expect(report["Entry"]?.records == entryKeys.count)
            #expect(report["_settings"]?.records == 2)
            #expect(report.collections.allSatisfy { $0.verified })
            #expect(report.records == samples.count + entryKeys.count + 2)

            // Typed reads are the same on both sides.
            let copied = try to.fetchAll(Sample.self, orderBy: [.ascending("id")])
            let original = try from.fetchAll(Sample.self, orderBy: [.ascending("id")])
            #expect(copied.count == samples.count)
            #expect(zip(copied, original).allSatisfy { $0.matches($1) })
            #expect(zip(copied, samples.sorted { $0.id < $1.id }).allSatisfy { $0.matches($1) })
            #expect(copied.contains { $0.real == -.greatestFiniteMagnitude })
            #expect(copied.contains { $0.real == .infinity } && copied.contains { $0.real == -.infinity })
            #expect(copied.contains { $0.big == .min } && copied.contains { $0.big == .max })
            #expect(copied.contains { $0.blob.count == 1_048_576 } && copied.contains { $0.blob.isEmpty })

            // The schema: key, columns and their types, indexes with the unique one.
            let sourceSchema = try #require(try from.schema(of: "samples"))
            let copiedSchema = try #require(try to.schema(of: "samples"))
            #expect(copiedSchema.primaryKey == "id")
            #expect(Set(copiedSchema.columns.map(\.name)) == Set(sourceSchema.columns.map(\.name)))
            for column in sourceSchema.columns {
                #expect(copiedSchema.column(named: column.name)?.type == column.type, "\(column.name)")
            }
            #expect(Set(copiedSchema.indexes) == Set(sourceSchema.indexes))
            var duplicate = samples[3]
            duplicate.id = 1_000
            #expect(throws: StorageError.self) { try to.save(duplicate) }

            // Auto keys kept, and the next one is past every copied key.
            let copiedEntries = try to.read { tx in
                try tx.fetchAll(Entry.self, where: nil, orderBy: [], limit: nil, offset: 0)
            }
            #expect(copiedEntries.map(\.text) == ["entry 0", "entry 1", "entry 3", "entry 4", "entry 5"])
            let entryRows = try to.fetchDictionaries(from: "Entry", orderBy: [.ascending("_key")])
            #expect(entryRows.map { $0["_key"] } == entryKeys)
            let next = try to.save(Entry(text: "new"))
            for key in entryKeys {
                guard case .integer(let number) = key, case .integer(let added) = next else {
                    Issue.record("keys are not integers: \(key), \(next)")
                    continue
                }
                #expect(added > number)
            }

            // Settings.
            let settings = try CopySettings(store: to)
            #expect(settings.greeting == "hello \u{1F600}")
            #expect(settings.launches == 42)
        }
    }

    @Test(arguments: backendPairs)
    func damageIsFoundAndNamedByCollectionAndKey(_ source: BackendFixture, _ destination: BackendFixture) throws {
        try withStores("copy-damage", source, destination) { from, to in
            var samples = Sample.samples()
            samples[1].blob = Data([1, 2, 3])
            try from.save(contentsOf: samples)
            try from.copy(to: to)
            try from.verify(against: to)
            try to.verify(against: from)

            var damaged = samples[5]
            damaged.text += "!"
            try to.save(damaged)
            do {
                try from.verify(against: to)
                Issue.record("verify passed over a damaged record")
            } catch let error as StorageError {
                #expect(error.code == .verificationFailed)
                #expect(error.collection == "samples")
                #expect(error.key == .integer(damaged.id))
                #expect(error.message.contains("text"))
            }
            try to.delete(Sample.self, id: damaged.id)
            #expect(throws: StorageError.self) { try from.verify(against: to) }
            do {
                try to.verify(against: from)
            } catch let error as StorageError {
                #expect(error.key == .integer(damaged.id))
            }
        }
    }
}

@Suite("Copy modes", .dedicatedThreads)
struct CopyModeTests {
    @Test(arguments: backendPairs)
    func theNextAutoKeyIsPastTheKeysTheSourceDeleted(_ source: BackendFixture, _ destination: BackendFixture) throws {
        try withStores("copy-next-key", source, destination) { from, to in
            let keys = try from.save(contentsOf: (0..<6).map { Entry(text: "entry \($0)") })
            let numbers = keys.compactMap { key -> Int64? in
                guard case .integer(let number) = key else { return nil }
                return number
            }
            #expect(numbers.count == keys.count)
            // The highest keys go: only the source's sequence still knows them.
            for key in keys.suffix(3) { try from.delete(Entry.self, id: key) }

            _ = try from.copy(to: to)
            let added = try to.save(Entry(text: "after the copy"))
            guard case .integer(let addedNumber) = added else {
                Issue.record("the new key is not an integer: \(added)")
                return
            }
            #expect(addedNumber > numbers.max() ?? 0, "\(source) to \(destination): \(addedNumber), \(numbers)")
        }
    }

    @Test func aDestinationCollectionWithRecordsIsRefusedUnlessMergedOrReplaced() throws {
        try TemporaryDirectory.with("copy-modes") { directory in
            let from = try DiskBackend.sqlite.openStore(path: directory.appendingPathComponent("a.sqlite").path)
            let to = try DiskBackend.lmdb.openStore(path: directory.appendingPathComponent("b.lmdb").path)
            defer {
                try? from.close()
                try? to.close()
            }
            let samples = Sample.samples()
            try from.save(contentsOf: samples)
            var extra = samples[0]
            extra.id = 999
            extra.email = "extra@example.com"
            try to.save(extra)

            do {
                try from.copy(to: to)
                Issue.record("the copy went over a collection holding records")
            } catch let error as StorageError {
                #expect(error.code == .collectionNotEmpty)
                #expect(error.collection == "samples")
            }
            #expect(try to.count(Sample.self) == 1)

            // Merge keeps the destination's own record beside the copied ones; verify then sees it.
            let merged = try from.copy(to: to, mode: .merge, verifying: false)
            #expect(merged.records == samples.count)
            #expect(try to.count(Sample.self) == samples.count + 1)
            do {
                try from.verify(against: to)
                Issue.record("verify passed with an extra record")
            } catch let error as StorageError {
                #expect(error.code == .verificationFailed)
                #expect(error.key == .integer(999))
            }

            // Replace drops it.
            let replaced = try from.copy(to: to, mode: .replace)
            #expect(replaced["samples"]?.verified == true)
            #expect(try to.count(Sample.self) == samples.count)

            #expect(throws: StorageError.self) { try from.copy(to: to, collections: ["nothing"]) }
            #expect(throws: StorageError.self) { try from.copy(to: from) }
        }
    }

    @Test func aCopyInBatchesReportsProgressAndCopiesOnlyTheCollectionsAsked() async throws {
        let directory = try TemporaryDirectory("copy-progress")
        defer { directory.remove() }
        let from = ObjectStore(backend: InMemoryStorageBackend())
        let to = try DiskBackend.archive.openStore(path: directory.url.appendingPathComponent("store").path)
        try await from.save(contentsOf: (0..<25).map { Entry(text: "e\($0)") })
        try await from.save(contentsOf: Sample.samples())
        let seen = Locked<[StoreCopyProgress]>([])
        let report = try await from.copy(to: to, collections: ["entry"], batchSize: 10) { progress in
            seen.withLock { $0.append(progress) }
        }
        #expect(report.collections.map(\.name) == ["Entry"])
        let progress = seen.withLock { $0 }
        #expect(progress.filter { $0.phase == .copying }.map(\.records) == [10, 20, 25])
        #expect(progress.allSatisfy { $0.total == 25 })
        #expect(progress.last?.phase == .verifying)
        #expect(try await to.collectionNames() == ["Entry"])
        try await to.close()
    }
}
