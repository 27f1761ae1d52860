import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import FileArchiveBackend

#if canImport(Glibc)
import Glibc
#endif

/// A record of the read-only tests.
private struct Card: Codable, Equatable, StorableModel {
    static let collectionName = "cards"
    var id: Int64
    var title: String
}

/// Every file and folder under `directory` with its bytes (none for a folder) and modification
/// time: equal listings mean nothing was created, removed, written or touched.
private func listing(_ directory: URL) throws -> [String: (Data?, Int64)] {
    var entries: [String: (Data?, Int64)] = [:]
    for case let relative as String in FileManager.default.enumerator(atPath: directory.path) ?? .init() {
        let path = directory.path + "/" + relative
        var status = stat()
        try #require(lstat(path, &status) == 0)
        let time = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        let isFolder = status.st_mode & S_IFMT == S_IFDIR
        entries[relative] = (isFolder ? nil : try Data(contentsOf: URL(fileURLWithPath: path)), time)
    }
    return entries
}

/// Whether two listings name the same entries with the same bytes and times.
private func same(_ a: [String: (Data?, Int64)], _ b: [String: (Data?, Int64)]) -> Bool {
    a.count == b.count && a.allSatisfy { name, entry in b[name].map { $0.0 == entry.0 && $0.1 == entry.1 } ?? false }
}

private let readOnly = FileArchiveStorageBackend.Configuration(lockTimeout: .milliseconds(300), readOnly: true)

@Suite("File archive opened read-only", .serialized)
struct FileArchiveReadOnlyTests {
    /// A folder that is not a store (no lock file) is refused read-only, and stays empty.
    @Test func aFolderWithoutTheLockFileIsNotAStore() throws {
        try TemporaryDirectory.with("archive-read-only-empty") { directory in
            let error = expectStorageError(.cannotOpen) {
                _ = try FileArchiveStorageBackend(directory: directory.path, configuration: readOnly)
            }
            #expect(error?.message.contains("no 'lock' file") == true)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(names.isEmpty)
        }
    }

    /// A store whose last commit a crash interrupted (its journal is there) is refused read-only,
    /// naming the journal, and left as it is for a read-write open to complete.
    @Test func anInterruptedCommitIsLeftAlone() throws {
        try TemporaryDirectory.with("archive-read-only-journal") { directory in
            let folder = directory.appendingPathComponent("store")
            let writable = ObjectStore(backend: try .fileArchive(directory: folder.path))
            try writable.save(Card(id: 1, title: "one"))
            try writable.close()
            try Data("a journal torn by a crash".utf8).write(to: folder.appendingPathComponent("journal"))
            let before = try listing(folder)
            let error = expectStorageError(.cannotOpen) {
                _ = try FileArchiveStorageBackend(directory: folder.path, configuration: readOnly)
            }
            #expect(error?.path?.hasSuffix("/journal") == true)
            #expect(same(try listing(folder), before))
        }
    }

    /// A read-only store sees the commits of a store that writes (another process's, as the lock
    /// file's counter tells it), and its own loads change no file: only the writer's commits do.
    @Test func readsTheCommitsOfAWriter() throws {
        try TemporaryDirectory.with("archive-read-only-reload") { directory in
            let folder = directory.appendingPathComponent("store").path
            let writable = ObjectStore(backend: try .fileArchive(directory: folder))
            try writable.save(Card(id: 1, title: "one"))
            let reader = ObjectStore(backend: try .fileArchive(directory: folder, configuration: readOnly))
            #expect(try reader.fetchAll(Card.self).map(\.id) == [1])
            try writable.save(Card(id: 2, title: "two"))
            #expect(try reader.fetchAll(Card.self).map(\.id) == [1, 2])
            let before = try listing(directory)
            #expect(try reader.fetch(Card.self, id: 2)?.title == "two")
            expectStorageError(.readOnly) { try reader.save(Card(id: 3, title: "three")) }
            #expect(same(try listing(directory), before))
            try writable.close()
            try reader.close()
        }
    }

    /// While another process holds the lock file exclusively (a commit under way), a read-only
    /// open waits for it, up to `lockTimeout`, instead of reading a commit half-done. The limit
    /// guards against a hang only: it also counts the wait for a thread of the cooperative pool,
    /// which a loaded run can make long (see `DedicatedThreadsTrait`), so it is the suites' 10 minutes.
    @Test(.timeLimit(.minutes(10))) func waitsForACommitUnderWay() throws {
        try TemporaryDirectory.with("archive-read-only-locked") { directory in
            let folder = directory.appendingPathComponent("store")
            let writable = ObjectStore(backend: try .fileArchive(directory: folder.path))
            try writable.save(Card(id: 1, title: "one"))
            try writable.close()
            let holder = try startLockHolder(folder.appendingPathComponent("lock").path, committing: false)
            defer { stop(holder) }
            expectStorageError(.busy) {
                _ = try FileArchiveStorageBackend(directory: folder.path, configuration: readOnly)
            }
            stop(holder)
            let reader = ObjectStore(backend: try .fileArchive(directory: folder.path, configuration: readOnly))
            #expect(try reader.count(Card.self) == 1)
            try reader.close()
        }
    }
}
