import CSQLite
import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import SQLiteBackend

/// How every connection is set up, checked on a real connection.
@Suite struct SQLiteConnectionTests {
    func connection(in directory: URL) throws -> SQLiteConnection {
        try SQLiteConnection(
            path: directory.appendingPathComponent("connection.sqlite").path,
            flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
            busyTimeout: .seconds(1)
        )
    }

    @Test func doubleQuotedStringLiteralsAreTurnedOff() throws {
        try TemporaryDirectory.with("sqlite-connection") { directory in
            let connection = try connection(in: directory)
            try connection.execute(#"CREATE TABLE t ("a" INTEGER)"#)
            // With SQLite's legacy behaviour a misquoted identifier silently becomes a string.
            #expect(throws: StorageError.self) {
                _ = try connection.integer(#"SELECT count(*) FROM t WHERE "missing" = 1"#)
            }
            #expect(try connection.integer(#"SELECT count(*) FROM t WHERE "a" = 1"#) == 0)
        }
    }

    @Test func defensiveModeRefusesWritableSchema() throws {
        try TemporaryDirectory.with("sqlite-connection") { directory in
            let connection = try connection(in: directory)
            try connection.execute(#"CREATE TABLE t ("a" INTEGER)"#)
            try connection.execute("PRAGMA writable_schema = ON")
            #expect(throws: StorageError.self) { try connection.execute("DELETE FROM sqlite_master") }
        }
    }
}
