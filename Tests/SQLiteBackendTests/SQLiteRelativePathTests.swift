import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

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
