import CSQLite
import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import SQLiteBackend

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A record of the read-only tests.
private struct Note: Codable, Equatable {
    var id: Int64
    var text: String
}

/// The file's bytes and modification time (nanoseconds), or `nil` when there is no such file.
private func snapshot(_ path: String) -> (Data, Int64)? {
    var status = stat()
    guard lstat(path, &status) == 0, let bytes = FileManager.default.contents(atPath: path) else { return nil }
    return (bytes, Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec))
}

/// The names in `directory`, sorted.
private func listing(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
}

/// Waits up to ten seconds for `condition`, checking every 10 ms.
private func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
    for _ in 0..<1_000 {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}

@Suite("SQLite opened read-only", .serialized)
struct SQLiteReadOnlyTests {
    /// A `sqlite3` shell in another process keeps the database open and writes to it; a store
    /// opened read-only here reads what it committed, while it is open and after each commit,
    /// through the `-wal` and `-shm` files the two share, and refuses its own writes.
    @Test func readsWhileAnotherProcessHasTheDatabaseOpenForWriting() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/notes.sqlite"
            let writable = ObjectStore(backend: try .sqlite(path: path))
            try writable.save(Note(id: 1, text: "one"))
            try writable.close()
            #expect(try listing(directory) == ["notes.sqlite"])

            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            shell.arguments = [path]
            let input = Pipe()
            shell.standardInput = input
            shell.standardOutput = FileHandle.nullDevice
            try shell.run()
            defer {
                // End of input ends the shell; waited for at most ten seconds, never without bound.
                try? input.fileHandleForWriting.close()
                for _ in 0..<1_000 where shell.isRunning { usleep(10_000) }
                if shell.isRunning { kill(shell.processIdentifier, SIGKILL) }
            }
            func send(_ sql: String) { input.fileHandleForWriting.write(Data((sql + "\n").utf8)) }
            send("INSERT INTO \"Note\" (\"id\", \"text\") VALUES (2, 'two');")

            let store = ObjectStore(
                backend: try .sqlite(path: path, configuration: .init(readOnly: true))
            )
            defer { try? store.close() }
            #expect(try eventually { try store.count(Note.self) == 2 })
            #expect(try listing(directory) == ["notes.sqlite", "notes.sqlite-shm", "notes.sqlite-wal"])
            send("INSERT INTO \"Note\" (\"id\", \"text\") VALUES (3, 'three');")
            #expect(try eventually { try store.fetch(Note.self, id: 3) == Note(id: 3, text: "three") })
            #expect(try store.fetchAll(Note.self).map(\.id) == [1, 2, 3])
            expectStorageError(.readOnly) { try store.save(Note(id: 4, text: "four")) }
            expectStorageError(.readOnly) { try store.delete(Note.self, id: 1) }
            send("INSERT INTO \"Note\" (\"id\", \"text\") VALUES (5, 'five');")
            #expect(try eventually { try store.count(Note.self) == 4 })
        }
    }

    /// With no other connection open, SQLite's read-only connection makes the `-wal` and `-shm`
    /// files it reads through and, being read-only, leaves them (the `-wal` empty) when it closes,
    /// as `Configuration.readOnly` says; the database file itself is not written, nor touched.
    @Test func theDatabaseFileIsNeverWritten() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/notes.sqlite"
            let writable = ObjectStore(backend: try .sqlite(path: path))
            try writable.save(contentsOf: [Note(id: 1, text: "one"), Note(id: 2, text: "two")])
            try writable.close()
            let before = try #require(snapshot(path))

            let backend = try SQLiteStorageBackend(path: path, configuration: .init(readOnly: true))
            #expect(backend.isReadOnly)
            let store = ObjectStore(backend: backend)
            #expect(try store.fetchAll(Note.self).count == 2)
            expectStorageError(.readOnly) { try store.drop(collection: "Note") }
            expectStorageError(.readOnly) { try backend.write { _ in } }
            try store.close()

            let after = try #require(snapshot(path))
            #expect(after.0 == before.0)
            #expect(after.1 == before.1)
            #expect(try listing(directory) == ["notes.sqlite", "notes.sqlite-shm", "notes.sqlite-wal"])
            #expect(snapshot(path + "-wal")?.0.isEmpty == true)
            // A read-write open uses them, and its close removes them.
            try ObjectStore(backend: try .sqlite(path: path)).close()
            #expect(try listing(directory) == ["notes.sqlite"])
        }
    }

    /// SQLite's own refusal of a write on a read-only connection is `.readOnly`; its failures to
    /// open read-only (a file that is not a database, a path that is a symbolic link) are not.
    @Test func theEnginesRefusalIsReadOnly() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/notes.sqlite"
            try ObjectStore(backend: try .sqlite(path: path)).save(Note(id: 1, text: "one"))
            let connection = try SQLiteConnection(
                path: path,
                flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                busyTimeout: .seconds(1)
            )
            let refused = expectStorageError(.readOnly) { try connection.execute("DELETE FROM \"Note\"") }
            #expect((refused?.underlying as? SQLiteResultCode)?.extendedCode == SQLITE_READONLY)

            let text = directory + "/text.sqlite"
            try Data("not a database, just text, long enough to fill a header".utf8).write(
                to: URL(fileURLWithPath: text)
            )
            let textBefore = try #require(snapshot(text))
            expectStorageError(.corrupt) {
                _ = try SQLiteStorageBackend(path: text, configuration: .init(readOnly: true))
            }
            #expect(snapshot(text)?.0 == textBefore.0)

            let link = directory + "/link.sqlite"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
            let error = expectStorageError(.cannotOpen) {
                _ = try SQLiteStorageBackend(path: link, configuration: .init(readOnly: true))
            }
            #expect(error?.message.contains("symbolic link") == true)
        }
    }
}
