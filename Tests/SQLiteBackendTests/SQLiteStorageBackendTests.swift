import CSQLite
import Foundation
import Storage
import Testing

@testable import SQLiteBackend

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct SQLiteStorageBackendTests {
    private func mode(of path: String) throws -> mode_t {
        var status = stat()
        try #require(stat(path, &status) == 0)
        return status.st_mode & 0o777
    }

    @Test func filesAreOwnerOnlyAndJournalIsWAL() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        try withBackend { backend, path in
            try backend.write { tx in
                _ = try tx.prepareCollection(peopleSchema)
                try tx.put([[1, "a"]], into: "people", columns: ["id", "name"])
            }
            #expect(try mode(of: path) == 0o600)
            #expect(try mode(of: path + "-wal") == 0o600)

            var database: OpaquePointer?
            try #require(sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY, nil) == SQLITE_OK)
            defer { sqlite3_close_v2(database) }
            var statement: OpaquePointer?
            try #require(sqlite3_prepare_v2(database, "PRAGMA journal_mode", -1, &statement, nil) == SQLITE_OK)
            defer { sqlite3_finalize(statement) }
            try #require(sqlite3_step(statement) == SQLITE_ROW)
            #expect(String(cString: sqlite3_column_text(statement, 0)) == "wal")
        }
    }

    @Test func symbolicLinkIsRefused() throws {
        try withTemporaryDirectory { directory in
            let target = directory + "/target.sqlite"
            let link = directory + "/link.sqlite"
            _ = try SQLiteStorageBackend(path: target)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
            let error = #expect(throws: StorageError.self) { _ = try SQLiteStorageBackend(path: link) }
            #expect(error?.code == .cannotOpen)
            #expect(error?.path == link)
        }
    }

    @Test func nonDatabaseFileIsReported() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/junk.sqlite"
            try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
            let error = #expect(throws: StorageError.self) { _ = try SQLiteStorageBackend(path: path) }
            #expect(error?.code == .corrupt)
        }
    }

    @Test func factoryWorksWhereABackendIsExpected() throws {
        func open(_ backend: some StorageBackend) -> any StorageBackend { backend }
        try withTemporaryDirectory { directory in
            let backend = open(
                try .sqlite(path: directory + "/factory.sqlite", configuration: .init(synchronous: .full))
            )
            #expect(try backend.read { try $0.count(in: "people", where: nil) } == 0)
        }
    }

    @Test func readerSeesCommittedSnapshotWhileWriterIsOpen() throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(peopleSchema)
                try tx.put([[1, "committed"]], into: "people", columns: ["id", "name"])
            }
            let writerInside = DispatchSemaphore(value: 0)
            let releaseWriter = DispatchSemaphore(value: 0)
            let writerDone = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = try? backend.write { tx in
                    try tx.put([[2, "uncommitted"]], into: "people", columns: ["id", "name"])
                    writerInside.signal()
                    releaseWriter.wait()
                }
                writerDone.signal()
            }
            writerInside.wait()
            // Does not block on the open writer, and does not see its uncommitted record.
            let seen = try backend.read { try $0.column("name", of: "people") }
            #expect(seen == ["committed"])
            releaseWriter.signal()
            writerDone.wait()
            #expect(try backend.read { try $0.count(in: "people", where: nil) } == 2)
        }
    }

    /// A read transaction is an implicit one held open by its first statement, not BEGIN ...
    /// COMMIT: every statement of the closure must still read the snapshot it began with, even
    /// when writes commit (on the writer connection) between them.
    @Test func readKeepsOneSnapshotAcrossStatementsWhileWritesCommit() throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(peopleSchema)
                try tx.put([[1, "before"]], into: "people", columns: ["id", "name"])
            }
            try backend.read { tx in
                #expect(try tx.count(in: "people", where: nil) == 1)
                _ = try backend.write { writer in
                    try writer.put([[1, "after"], [2, "new"]], into: "people", columns: ["id", "name"])
                }
                #expect(try tx.count(in: "people", where: nil) == 1)
                #expect(try tx.column("name", of: "people") == ["before"])
                var name: StorageValue?
                _ = try tx.get("people", key: 1, columns: ["name"]) { name = $0.value(at: 0) }
                #expect(name == "before")
            }
            #expect(try backend.read { try $0.column("name", of: "people") } == ["after", "new"])
        }
    }

    @Test func concurrentReadersAndWriters() throws {
        try withBackend { backend, _ in
            try backend.write { tx in _ = try tx.prepareCollection(peopleSchema) }
            DispatchQueue.concurrentPerform(iterations: 16) { iteration in
                do {
                    if iteration % 2 == 0 {
                        try backend.write { tx in
                            let writer = try tx.makeWriter(for: "people", columns: ["id", "name"])
                            for offset in 0..<20 {
                                try writer.put([.integer(Int64(iteration * 100 + offset)), "n"])
                            }
                        }
                    } else {
                        let count = try backend.read { tx in try tx.count(in: "people", where: nil) }
                        #expect(count % 20 == 0)
                    }
                } catch {
                    Issue.record(error)
                }
            }
            #expect(try backend.read { try $0.count(in: "people", where: nil) } == 160)
        }
    }
}

@Test func aValueOverSQLitesLengthLimitIsRefusedWithLimitExceededNamingTheColumnAndNothingIsWritten() throws {
    try withBackend { backend, _ in
        let store = ObjectStore(backend: backend)
        struct Note: Codable, Equatable {
            var id: Int64
            var body: String
        }
        try store.save(Note(id: 1, body: "short"))
        // The engine's own limit, lowered on the writer connection so the test needs no gigabyte.
        try backend.write { transaction in
            let connection = (transaction as! SQLiteWriteTransaction).connection
            _ = sqlite3_limit(connection.handle, SQLITE_LIMIT_LENGTH, 1_000)
        }
        do {
            try store.save(contentsOf: [
                Note(id: 2, body: "fits"), Note(id: 3, body: String(repeating: "x", count: 1_001)),
            ])
            Issue.record("a value over SQLITE_LIMIT_LENGTH was written")
        } catch let error as StorageError {
            #expect(error.code == .limitExceeded, "\(error)")
            #expect(error.column == "body" && error.collection == "Note" && error.key == .integer(3), "\(error)")
            #expect(error.message.contains("1001 bytes") && error.message.contains("1000"), "\(error)")
        }
        #expect(try store.fetchAll(Note.self) == [Note(id: 1, body: "short")])
    }
}
