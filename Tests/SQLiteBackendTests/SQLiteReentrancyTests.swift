import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// A transaction started inside another on the same thread is refused, never a deadlock.
@Suite struct SQLiteReentrancyTests {
    struct Item: Codable, Equatable { var id: Int64 }

    @Test func aWriteInsideAWriteOnTheSameThreadIsRefused() throws {
        try TemporaryDirectory.with("sqlite-reentrancy") { directory in
            let backend = try SQLiteStorageBackend(path: directory.appendingPathComponent("r.sqlite").path)
            let error = try #require(throws: StorageError.self) {
                try backend.write { _ in try backend.write { _ in } }
            }
            #expect(error.code == .misuse)
            // The writer is free again afterwards.
            try backend.write { _ in }
        }
    }

    @Test func writingWhileStreamingAnInMemoryStoreIsRefused() throws {
        let store = try ObjectStore(backend: .sqliteInMemory())
        try store.save(contentsOf: [Item(id: 1), Item(id: 2)])
        let error = try #require(throws: StorageError.self) {
            try store.forEach(Item.self) { item in try store.save(Item(id: item.id + 10)) }
        }
        #expect(error.code == .misuse)
        #expect(try store.count(Item.self) == 2)
    }

    @Test func writingWhileStreamingAFileStoreWorks() throws {
        try TemporaryDirectory.with("sqlite-reentrancy") { directory in
            let store = try ObjectStore(backend: .sqlite(path: directory.appendingPathComponent("f.sqlite").path))
            try store.save(contentsOf: [Item(id: 1), Item(id: 2)])
            try store.forEach(Item.self) { item in try store.save(Item(id: item.id + 10)) }
            #expect(try store.count(Item.self) == 4)
        }
    }
}

/// A relative path names one file for the life of the store, whatever the working directory does.
@Suite struct SQLiteRelativePathTests {
    struct Item: Codable, Equatable { var id: Int64 }

    @Test func readersFindTheFileAfterTheWorkingDirectoryChanges() throws {
        try TemporaryDirectory.with("sqlite-relative") { directory in
            let previous = FileManager.default.currentDirectoryPath
            defer { _ = FileManager.default.changeCurrentDirectoryPath(previous) }
            let first = directory.appendingPathComponent("first")
            let second = directory.appendingPathComponent("second")
            try FileManager.default.createDirectory(at: first, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: second, withIntermediateDirectories: true)
            #expect(FileManager.default.changeCurrentDirectoryPath(first.path))
            let store = try ObjectStore(backend: .sqlite(path: "relative.sqlite"))
            try store.save(Item(id: 1))
            #expect(FileManager.default.changeCurrentDirectoryPath(second.path))
            #expect(try store.fetch(Item.self, id: 1) == Item(id: 1))
            #expect(!FileManager.default.fileExists(atPath: second.appendingPathComponent("relative.sqlite").path))
        }
    }
}
