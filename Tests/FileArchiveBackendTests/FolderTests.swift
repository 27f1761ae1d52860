import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import FileArchiveBackend

private struct First: Codable, Equatable, StorableModel {
    static let collectionName = "item1"
    var id: Int64
    var text: String
}

private struct Second: Codable, Equatable, StorableModel {
    static let collectionName = "item2"
    var id: Int64
    var text: String
}

/// Every file and folder under `folder`, relative to it.
private func contents(of folder: String) -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: folder)
    var names: [String] = []
    while let name = enumerator?.nextObject() as? String { names.append(name) }
    return names.sorted()
}

/// Expects `body` to throw `StorageError(.corrupt)` naming the swapped folder `path`.
private func expectRefusal(_ path: String, _ what: String, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("\(what) went through the swapped folder")
    } catch let error as StorageError {
        #expect(error.code == .corrupt, "\(what): \(error)")
        #expect(error.path == path, "\(what): \(error)")
    } catch {
        Issue.record("\(what): \(error)")
    }
}

/// A store in `directory` with a record in each collection, whose folder of `Second` was then
/// moved aside (or removed) and replaced by a symbolic link to an empty folder outside it.
private func storeWithSwappedFolder(
    in directory: URL,
    keepingTheOriginal: Bool
) throws -> (store: ObjectStore, path: String, folder: String, outside: String) {
    let path = directory.appendingPathComponent("S").path
    let outside = directory.appendingPathComponent("outside").path
    try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: false)
    let store = try ObjectStore(backend: .fileArchive(directory: path))
    try store.save(First(id: 1, text: "one"))
    try store.save(Second(id: 1, text: "one"))
    let folder = path + "/c-item2"
    if keepingTheOriginal {
        try FileManager.default.moveItem(atPath: folder, toPath: folder + ".moved")
    } else {
        try FileManager.default.removeItem(atPath: folder)
    }
    try FileManager.default.createSymbolicLink(atPath: folder, withDestinationPath: outside)
    return (store, path, folder, outside)
}

/// A collection folder swapped for a symbolic link while the store is open (`mv S/c-item2
/// S/c-item2.moved && ln -s outside S/c-item2`): every use of that collection is refused with
/// `.corrupt` naming the folder, nothing is created through the link, and the other collection
/// keeps working, before and after a reopen.
@Test func aCollectionFolderSwappedForASymbolicLinkIsRefusedAndNeverFollowed() throws {
    try TemporaryDirectory.with("archive-swap") { directory in
        let (store, path, folder, outside) = try storeWithSwappedFolder(in: directory, keepingTheOriginal: true)

        expectRefusal(folder, "a save") { try store.save(Second(id: 2, text: "two")) }
        expectRefusal(folder, "a batch") { try store.save(contentsOf: (3...40).map { Second(id: $0, text: "b") }) }
        expectRefusal(folder, "a transaction over both collections") {
            try store.transaction { transaction in
                try transaction.save(First(id: 9, text: "nine"))
                try transaction.save(Second(id: 9, text: "nine"))
            }
        }
        expectRefusal(folder, "a fetch") { _ = try store.fetch(Second.self, id: 1) }
        expectRefusal(folder, "a fetchAll") { _ = try store.fetchAll(Second.self) }
        expectRefusal(folder, "a count") { _ = try store.count(Second.self) }
        expectRefusal(folder, "a delete") { try store.delete(Second.self, id: 1) }
        #expect(contents(of: outside).isEmpty, "created through the link: \(contents(of: outside))")

        // The other collection is untouched by the refusals and still works.
        #expect(try store.fetchAll(First.self) == [First(id: 1, text: "one")])
        try store.save(First(id: 2, text: "two"))
        #expect(try store.count(First.self) == 2)

        let reopened = try ObjectStore(backend: .fileArchive(directory: path))
        #expect(try reopened.fetchAll(First.self, orderBy: [.ascending("id")]).map(\.id) == [1, 2])
        expectRefusal(folder, "a fetch after a reopen") { _ = try reopened.fetchAll(Second.self) }
        expectRefusal(folder, "a save after a reopen") { try reopened.save(Second(id: 5, text: "five")) }
        #expect(contents(of: outside).isEmpty, "created through the link: \(contents(of: outside))")
        #expect(!contents(of: path).contains { $0.hasPrefix("c-item1/.tmp-") || $0 == "journal" })
    }
}

/// A collection folder replaced by a symbolic link after the store's last load is refused by
/// the commit's first system call on it: no temporary file, no journal, no folder fsync
/// through it, and no record of the same transaction written elsewhere.
@Test func aCommitOpensEveryFolderItTouchesBeforeWritingAnything() throws {
    try TemporaryDirectory.with("archive-swap") { directory in
        let (store, path, folder, outside) = try storeWithSwappedFolder(in: directory, keepingTheOriginal: false)
        let before = contents(of: path + "/c-item1")
        expectRefusal(folder, "a transaction over both collections") {
            try store.transaction { transaction in
                try transaction.save(First(id: 2, text: "two"))
                try transaction.save(Second(id: 2, text: "two"))
            }
        }
        #expect(contents(of: path + "/c-item1") == before)
        #expect(!FileManager.default.fileExists(atPath: path + "/journal"))
        #expect(contents(of: outside).isEmpty)
        #expect(try store.fetchAll(First.self) == [First(id: 1, text: "one")])
    }
}
