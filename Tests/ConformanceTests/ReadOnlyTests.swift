import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// The records the read-only tests store before they open the store read-only.
struct ReadOnlyItem: Codable, Equatable, Sendable, StorableModel {
    var id: Int64
    var name: String
    var score: Double
}

/// A setting written before the store is opened read-only, read and refused afterwards.
final class ReadOnlySettings: Settings, @unchecked Sendable {
    @Setting var theme = "light"
}

/// The files of an engine that a reader writes by design, left out of the fingerprints: SQLite's
/// `-shm` (and the empty `-wal` a read-only connection makes when none is there; see
/// `SQLiteStorageBackend.Configuration.readOnly`), and LMDB's reader table (`-lock`). The archive's
/// `lock` file is in the fingerprint: a read-only archive never writes it.
let readerFiles = ["-shm", "-wal", "-lock"]

/// What a store holds, read through the store: its collections, each one's schema and records.
func contents(of store: ObjectStore) throws -> [String] {
    try store.collectionNames().map { name in
        let schema = try #require(try store.schema(of: name))
        let rows = try store.fetchDictionaries(from: name, orderBy: [.ascending(schema.primaryKey)])
        return "\(schema) \(rows.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } })"
    }
}

@Suite("Stores opened read-only", .dedicatedThreads)
struct ReadOnlyTests {
    static let items = [
        ReadOnlyItem(id: 1, name: "Ann", score: 1.5),
        ReadOnlyItem(id: 2, name: "Bob", score: 2.5),
        ReadOnlyItem(id: 3, name: "Cy", score: 3.5),
    ]

    /// Every kind of write throws `.readOnly`, after every kind of read answered what is there, and
    /// afterwards the store's files are byte for byte and time for time what they were (the server's
    /// store: the same records, read back read-write).
    @Test(arguments: DiskBackend.everyCase)
    func readsWhatIsThereAndRefusesEveryWrite(_ backend: DiskBackend) async throws {
        let directory = try TemporaryDirectory("read-only-\(backend)")
        defer { directory.remove() }
        let path = backend.storePath(in: directory.url)
        let (before, files) = try Self.fill(backend, path: path, in: directory.url)
        let store = try backend.openStore(path: path, readOnly: true)
        var streamed: [Int64] = []
        for try await item in store.stream(ReadOnlyItem.self, batchSize: 2) { streamed.append(item.id) }
        #expect(streamed == [1, 2, 3])
        #expect(try await store.fetch(ReadOnlyItem.self, id: 1) == Self.items[0])
        #expect(try await store.count(ReadOnlyItem.self) == 3)
        do {
            try await store.save(ReadOnlyItem(id: 9, name: "", score: 0))
            Issue.record("\(backend): an async save was not refused")
        } catch let error as StorageError {
            #expect(error.code == .readOnly, "\(error)")
        }
        try Self.readAndRefuse(backend, store, before: before)
        try await store.close()

        #expect(try FolderFingerprint(of: directory.url, ignoring: readerFiles) == files)
        let reopened = try backend.openStore(path: path, readOnly: false)
        defer { try? reopened.close() }
        #expect(try Self.contentsNow(of: reopened) == before)
    }

    /// Stores the items and a setting read-write, and returns what the store then holds and the
    /// fingerprint of its folder.
    static func fill(_ backend: DiskBackend, path: String, in directory: URL) throws -> ([String], FolderFingerprint) {
        let writable = try backend.openStore(path: path, readOnly: false)
        try writable.save(contentsOf: Self.items)
        let settings = try ReadOnlySettings(store: writable)
        try settings.$theme.set("dark")
        #expect(!writable.isReadOnly)
        let before = try contents(of: writable)
        try writable.close()
        return (before, try FolderFingerprint(of: directory, ignoring: readerFiles))
    }

    /// `contents(of:)` and the setting, read synchronously.
    static func contentsNow(of store: ObjectStore) throws -> [String] {
        let settings = try ReadOnlySettings(store: store)
        #expect(try settings.$theme.get() == "dark")
        return try contents(of: store)
    }

    /// Every synchronous kind of read, then every kind of write, on the read-only `store`.
    static func readAndRefuse(_ backend: DiskBackend, _ store: ObjectStore, before: [String]) throws {
        #expect(store.isReadOnly)
        #expect(try store.fetch(ReadOnlyItem.self, id: 2) == Self.items[1])
        #expect(try store.fetchAll(ReadOnlyItem.self, orderBy: [.ascending("id")]) == Self.items)
        #expect(try store.count(ReadOnlyItem.self, where: Column("score") > 2.0) == 2)
        #expect(try store.count(in: "ReadOnlyItem") == 3)
        #expect(try store.collectionNames() == ["ReadOnlyItem"])
        #expect(try store.schema(of: "readonlyitem")?.primaryKey == "id")
        #expect(try store.fetchDictionaries(from: "ReadOnlyItem", where: Column("id") == 3).first?["name"] == "Cy")
        #expect(try store.read { try $0.count(ReadOnlyItem.self) } == 3)
        let settings = try ReadOnlySettings(store: store)
        #expect(try settings.$theme.get() == "dark")
        #expect(settings.theme == "dark")

        // Writes: every kind, each refused with `.readOnly`.
        let extra = ReadOnlyItem(id: 9, name: "New", score: 9)
        let writes: [(String, () throws -> Void)] = [
            ("save", { try store.save(extra) }),
            ("save(contentsOf:)", { try store.save(contentsOf: [extra]) }),
            ("delete", { try store.delete(ReadOnlyItem.self, id: 1) }),
            ("deleteAll", { try store.deleteAll(ReadOnlyItem.self) }),
            ("deleteAll(from:)", { try store.deleteAll(from: "ReadOnlyItem", where: Column("id") == 1) }),
            ("update", { try store.update(ReadOnlyItem.self, set: ["name": "x"], where: Column("id") == 1) }),
            ("update(in:)", { try store.update(in: "ReadOnlyItem", set: ["name": "x"]) }),
            ("drop", { try store.drop(collection: "ReadOnlyItem") }),
            ("transaction", { try store.transaction { _ in } }),
            ("transaction that saves", { try store.transaction { _ = try $0.save(extra) } }),
            ("insert(jsonArray:)", { try store.insert(jsonArray: Data(#"[{"id": 8}]"#.utf8), into: "Other") }),
            ("insert(csv:)", { try store.insert(csv: Data("id,name\n8,x\n".utf8), into: "Other") }),
            ("insert(dictionaries:)", { try store.insert(dictionaries: [["id": 8]], into: "ReadOnlyItem") }),
            ("a setting set", { try settings.$theme.set("light") }),
            ("a setting reset", { try settings.$theme.reset() }),
            ("a setting updated", { try settings.$theme.update { $0 += "!" } }),
            ("every setting reset", { try settings.resetAll() }),
            (
                "a copy into it",
                {
                    let source = ObjectStore(backend: InMemoryStorageBackend())
                    try source.save(extra)
                    try source.copy(to: store, mode: .merge)
                }
            ),
            ("the backend's own write", { try store.backend.write { _ in } }),
        ]
        for (name, write) in writes {
            do {
                try write()
                Issue.record("\(backend): \(name) was not refused")
            } catch let error as StorageError {
                #expect(error.code == .readOnly, "\(backend): \(name): \(error)")
            }
        }
        settings.theme = "assigned"  // reported to `settingsProblem`, not stored
        #expect(try settings.$theme.get() == "dark")
        #expect(try contents(of: store) == before)
    }

    /// A store that does not exist, opened read-only, is `.cannotOpen`, and nothing is left behind.
    @Test(arguments: DiskBackend.everyCase)
    func aMissingStoreIsNotCreated(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("read-only-missing-\(backend)") { directory in
            let path = backend.storePath(in: directory)
            for _ in 0..<2 {
                do {
                    let store = try backend.openStore(path: path, readOnly: true)
                    try? store.close()
                    Issue.record("\(backend): a missing store opened read-only")
                } catch let error as StorageError {
                    #expect(error.code == .cannotOpen, "\(error)")
                    #expect(error.message.contains("never created") || error.message.contains("no schema"), "\(error)")
                }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }
}
