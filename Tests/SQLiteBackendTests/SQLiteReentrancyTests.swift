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
