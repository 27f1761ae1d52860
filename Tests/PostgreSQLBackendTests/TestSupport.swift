import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Runs `body` with a store in a schema of its own on the tests' server, and a fresh folder.
func withStore<R>(
    _ label: String,
    configuration: PostgreSQLStorageBackend.Configuration? = nil,
    _ body: (ObjectStore, String) throws -> R
) throws -> R {
    try TemporaryDirectory.with("postgres-\(label)") { directory in
        let path = DiskBackend.postgresql.storePath(in: directory)
        return try body(try PostgreSQLTestServer.openStore(path: path, configuration: configuration), path)
    }
}

/// Expects `body` to throw a `StorageError` with `code`, and returns it.
@discardableResult
func expectStorageError(
    _ code: StorageError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> StorageError? {
    do {
        try body()
        Issue.record("expected StorageError.\(code), but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as StorageError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected StorageError.\(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
