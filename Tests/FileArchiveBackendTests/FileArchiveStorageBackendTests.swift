import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import FileArchiveBackend

#if canImport(Glibc)
import Glibc
#endif

private struct Item: Codable, Equatable, StorableModel {
    static let collectionName = "items"
    static let indexes: [IndexDefinition] = [.init(["code"], unique: true)]
    var id: Int64
    var code: String
    var count: Int
}

private func mode(_ path: String) -> mode_t {
    var status = stat()
    #expect(lstat(path, &status) == 0, "no file at \(path)")
    return status.st_mode & 0o777
}

/// Every file and folder under `root`, relative to it.
private func allFiles(under root: String) throws -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: root)
    var names: [String] = []
    while let name = enumerator?.nextObject() as? String { names.append(name) }
    return names.sorted()
}

private func storePath(_ directory: URL) -> String {
    directory.appendingPathComponent("store").path
}

@Test func theStoreIsAFolderPerCollectionAndAFilePerRecordWithPrivateModes() throws {
    try TemporaryDirectory.with("archive-backend") { directory in
        let path = storePath(directory)
        let store = try ObjectStore(backend: .fileArchive(directory: path))
        try store.save(contentsOf: (1...3).map { Item(id: $0, code: "c\($0)", count: Int($0)) })
        let folder = try FileNames.folder(for: "items")
        #expect(folder == "c-items")
        let records = try FileSystem.list(path + "/" + folder).filter(FileNames.isRecord).sorted()
        #expect(records == (1...3).map { "01" + String(format: "%016llx", $0) })
        #expect(mode(path) == 0o700)
        #expect(mode(path + "/" + folder) == 0o700)
        #expect(mode(path + "/lock") == 0o600)
        #expect(mode(path + "/" + folder + "/schema") == 0o600)
        for record in records { #expect(mode(path + "/" + folder + "/" + record) == 0o600) }
        #expect(!FileSystem.exists(path + "/journal"))
        // Reopened, the store reads its records back.
        let reopened = try ObjectStore(backend: .fileArchive(directory: path))
        #expect(try reopened.fetchAll(Item.self, orderBy: [.ascending("id")]).map(\.code) == ["c1", "c2", "c3"])
    }
}

@Test func hostileKeysStayInsideTheStore() throws {
    try TemporaryDirectory.with("archive-backend") { directory in
        let path = storePath(directory)
        let store = try ObjectStore(backend: .fileArchive(directory: path))
        let keys = ["../../etc/passwd", "/abs", "a\0b", ".", "..", "", String(repeating: "k", count: 126), "%2e"]
        try store.insert(dictionaries: keys.map { ["id": $0, "v": 1] }, into: "hostile")
        for key in keys {
            #expect(
                try store.fetchDictionaries(from: "hostile", where: Column("id") == StorageValue.text(key)).count == 1
            )
        }
        let tooLong = String(repeating: "x", count: 300)
        let error = try #require(throws: StorageError.self) {
            try store.insert(dictionaries: [["id": tooLong, "v": 2]], into: "hostile")
        }
        #expect(error.code == .invalidKey)
        #expect(try store.fetchDictionaries(from: "hostile").count == keys.count)
        // Only the store's own names: the lock file, and one folder of hex-named records.
        let files = try allFiles(under: path)
        let folder = try FileNames.folder(for: "hostile")
        #expect(files.filter { !$0.hasPrefix(folder + "/") } == [folder, "lock"])
        #expect(files.filter { $0.hasPrefix(folder + "/") }.count == keys.count + 1)
        #expect(try allFiles(under: directory.path).allSatisfy { $0 == "store" || $0.hasPrefix("store/") })
        // And a key always names the same file, so reopening finds every record.
        let reopened = try ObjectStore(backend: .fileArchive(directory: path))
        #expect(try reopened.fetchDictionaries(from: "hostile").count == keys.count)
    }
}

@Test func collectionNamesAreEncodedForFolders() throws {
    #expect(try FileNames.folder(for: "People.v2") == "c-people%2ev2")
    #expect(try FileNames.folder(for: "Ünï") == "c-%c3%9cn%c3%af")
    #expect(throws: StorageError.self) { try FileNames.folder(for: String(repeating: "é", count: 128)) }
}

/// Leaves the store as a crash would after a commit's journal reached the disk, before any
/// rename: temporary files for every write, and the journal.
private func writeInterruptedCommit(
    in path: String,
    records: [[StorageValue]],
    removing removed: [StorageValue],
    tornJournal: Bool
) throws {
    let backend = try FileArchiveStorageBackend(directory: path)
    let schema = try #require(try backend.read { try $0.schema(of: "items") })
    let folder = try FileNames.folder(for: "items")
    var renames: [JournalArchive.Rename] = []
    for record in records {
        let temporary = folder + "/" + FileSystem.temporaryName()
        try FileSystem.writeNewFile(
            try #require(RecordArchive.encode(record, columns: schema.columns)),
            at: path + "/" + temporary,
            sync: true
        )
        renames.append(.init(from: temporary, to: folder + "/" + (try FileNames.record(for: record[0], in: "items"))))
    }
    let removals = try removed.map { folder + "/" + (try FileNames.record(for: $0, in: "items")) }
    var journal = try ArchiveEncoder().encodeBytes(JournalArchive(renames: renames, removals: removals), kind: .journal)
    if tornJournal { journal.removeLast(journal.count / 3) }
    try FileSystem.writeNewFile(journal, at: path + "/journal", sync: true)
}

@Test func anIntactJournalIsRolledForwardWhenTheStoreOpens() throws {
    try TemporaryDirectory.with("archive-backend") { directory in
        let path = storePath(directory)
        let store = try ObjectStore(backend: .fileArchive(directory: path))
        try store.save(contentsOf: [Item(id: 1, code: "a", count: 1), Item(id: 2, code: "b", count: 2)])
        try writeInterruptedCommit(
            in: path,
            records: [[.integer(2), .text("b"), .integer(20)], [.integer(3), .text("c"), .integer(3)]],
            removing: [.integer(1)],
            tornJournal: false
        )
        let reopened = try ObjectStore(backend: .fileArchive(directory: path))
        #expect(
            try reopened.fetchAll(Item.self, orderBy: [.ascending("id")])
                == [Item(id: 2, code: "b", count: 20), Item(id: 3, code: "c", count: 3)]
        )
        #expect(!FileSystem.exists(path + "/journal"))
        #expect(try allFiles(under: path).allSatisfy { !$0.contains(".tmp-") })
    }
}

@Test func aTornJournalIsRolledBackWhenTheStoreOpens() throws {
    try TemporaryDirectory.with("archive-backend") { directory in
        let path = storePath(directory)
        let store = try ObjectStore(backend: .fileArchive(directory: path))
        try store.save(contentsOf: [Item(id: 1, code: "a", count: 1), Item(id: 2, code: "b", count: 2)])
        try writeInterruptedCommit(
            in: path,
            records: [[.integer(2), .text("b"), .integer(20)], [.integer(3), .text("c"), .integer(3)]],
            removing: [.integer(1)],
            tornJournal: true
        )
        let reopened = try ObjectStore(backend: .fileArchive(directory: path))
        #expect(
            try reopened.fetchAll(Item.self, orderBy: [.ascending("id")])
                == [Item(id: 1, code: "a", count: 1), Item(id: 2, code: "b", count: 2)]
        )
        #expect(!FileSystem.exists(path + "/journal"))
        #expect(try allFiles(under: path).allSatisfy { !$0.contains(".tmp-") })
    }
}

@Test func aJournalLeftBehindIsCompletedByTheNextWriterOfAnOpenStore() throws {
    try TemporaryDirectory.with("archive-backend") { directory in
        let path = storePath(directory)
        let store = try ObjectStore(backend: .fileArchive(directory: path))
        try store.save(Item(id: 1, code: "a", count: 1))
        try writeInterruptedCommit(
            in: path,
            records: [[.integer(5), .text("e"), .integer(5)]],
            removing: [],
            tornJournal: false
        )
        try store.save(Item(id: 6, code: "f", count: 6))
        #expect(try store.fetchAll(Item.self, orderBy: [.ascending("id")]).map(\.id) == [1, 5, 6])
        #expect(!FileSystem.exists(path + "/journal"))
    }
}

@Test func strayTemporaryFilesAreRemovedWhenTheStoreOpens() throws {
    try TemporaryDirectory.with("archive-backend") { directory in
        let path = storePath(directory)
        let store = try ObjectStore(backend: .fileArchive(directory: path))
        try store.save(Item(id: 1, code: "a", count: 1))
        let stray = path + "/c-items/" + FileSystem.temporaryName()
        try FileSystem.writeNewFile([1, 2, 3], at: stray, sync: false)
        _ = try FileArchiveStorageBackend(directory: path)
        #expect(!FileSystem.exists(stray))
        #expect(try ObjectStore(backend: .fileArchive(directory: path)).count(Item.self) == 1)
    }
}

@Test func twoBackendsOnOneFolderSeeEachOthersCommits() throws {
    try TemporaryDirectory.with("archive-backend") { directory in
        let path = storePath(directory)
        // Two backends hold separate lock-file descriptors, as two processes would.
        let first = try ObjectStore(backend: .fileArchive(directory: path))
        let second = try ObjectStore(backend: .fileArchive(directory: path))
        try first.save(Item(id: 1, code: "a", count: 1))
        #expect(try second.fetch(Item.self, id: 1)?.code == "a")
        try second.save(Item(id: 2, code: "b", count: 2))
        try second.delete(Item.self, id: 1)
        #expect(try first.fetchAll(Item.self).map(\.id) == [2])
        // The unique index holds across both.
        #expect(throws: StorageError.self) { try first.save(Item(id: 3, code: "b", count: 3)) }
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            let store = worker % 2 == 0 ? first : second
            for step in 0..<15 {
                let id = Int64(100 + worker * 100 + step)
                do {
                    try store.save(Item(id: id, code: "w\(id)", count: step))
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try first.count(Item.self) == 61)
        #expect(try second.count(Item.self) == 61)
        #expect(try ObjectStore(backend: .fileArchive(directory: path)).count(Item.self) == 61)
    }
}

@Test func aNestedWriteOnTheSameThreadIsRefused() throws {
    try TemporaryDirectory.with("archive-backend") { directory in
        let backend = try FileArchiveStorageBackend(directory: storePath(directory))
        let error = try #require(throws: StorageError.self) {
            try backend.write { _ in try backend.write { _ in } }
        }
        #expect(error.code == .misuse)
    }
}

@Test func aStoreFolderThatIsAFileCannotBeOpened() throws {
    try TemporaryDirectory.with("archive-backend") { directory in
        let path = storePath(directory)
        try FileSystem.writeNewFile([1], at: path, sync: false)
        let error = try #require(throws: StorageError.self) { try FileArchiveStorageBackend(directory: path) }
        #expect(error.code == .cannotOpen)
        #expect(error.path == path)
    }
}

@Test func aLargeBatchIsFlushedWithOneSyncOfTheFileSystem() throws {
    try TemporaryDirectory.with("archive-backend") { directory in
        #if os(Linux)
        #expect(try FileSystem.syncFileSystem(containing: directory.path))
        #endif
        let path = storePath(directory)
        let store = try ObjectStore(backend: .fileArchive(directory: path))
        let items = (1...40).map { Item(id: $0, code: "c\($0)", count: Int($0)) }
        try store.save(contentsOf: items)
        #expect(
            try ObjectStore(backend: .fileArchive(directory: path)).fetchAll(Item.self, orderBy: [.ascending("id")])
                == items
        )
    }
}

private struct WholeMeasure: Codable, StorableModel {
    static let collectionName = "measures"
    static let indexes: [IndexDefinition] = [.init(["value"], unique: true)]
    var id: Int64
    var value: Int
}

private struct Measure: Codable, StorableModel {
    static let collectionName = "measures"
    static let indexes: [IndexDefinition] = [.init(["value"], unique: true)]
    var id: Int64
    var value: Double
}

@Test func aUniqueIndexStillHoldsAfterItsColumnIsWidenedToReal() throws {
    try TemporaryDirectory.with("archive-backend") { directory in
        let path = storePath(directory)
        let store = try ObjectStore(backend: .fileArchive(directory: path))
        try store.save(WholeMeasure(id: 1, value: 1))
        // A real arrives: the column is widened, and 1 is now stored as 1.0.
        try store.save(Measure(id: 2, value: 2.5))
        let error = try #require(throws: StorageError.self) { try store.save(Measure(id: 3, value: 1)) }
        #expect(error.code == .constraintViolation)
        let reopened = try ObjectStore(backend: .fileArchive(directory: path))
        #expect(throws: StorageError.self) { try reopened.save(Measure(id: 4, value: 1)) }
        #expect(try reopened.fetchDictionaries(from: "measures").count == 2)
    }
}

@Test func aFIFOUnderARecordsNameIsRefusedWithoutHanging() throws {
    try TemporaryDirectory.with("archive-backend") { directory in
        let path = storePath(directory)
        let store = try ObjectStore(backend: .fileArchive(directory: path))
        try store.save(Item(id: 1, code: "a", count: 1))
        let fifo = path + "/c-items/" + (try FileNames.record(for: .integer(2), in: "items"))
        #expect(mkfifo(fifo, 0o600) == 0)
        let error = try #require(throws: StorageError.self) { try FileArchiveStorageBackend(directory: path) }
        #expect(error.code == .corrupt)
        #expect(error.path == fifo)
    }
}
