import CLMDB
import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import LMDBBackend

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A record of the read-only tests.
private struct Entry: Codable, Equatable {
    var id: Int64
    var value: String
}

/// The file's bytes and modification time (nanoseconds).
private func snapshot(_ path: String) throws -> (Data, Int64) {
    var status = stat()
    try #require(lstat(path, &status) == 0)
    let bytes = try #require(FileManager.default.contents(atPath: path))
    return (bytes, Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec))
}

@Suite("LMDB opened read-only", .serialized)
struct LMDBReadOnlyTests {
    /// A store opened read-only maps the file `MDB_RDONLY` and never writes it: the data file is
    /// byte for byte and time for time what it was, and the map does not grow.
    @Test func theStoreFileIsNeverWritten() throws {
        try TemporaryDirectory.with("lmdb-read-only") { directory in
            let path = directory.appendingPathComponent("entries.lmdb").path
            let writable = ObjectStore(backend: try .lmdb(path: path))
            try writable.save(contentsOf: (1...100).map { Entry(id: $0, value: String(repeating: "x", count: 100)) })
            try writable.close()
            let before = try snapshot(path)

            let backend = try LMDBStorageBackend(
                path: path,
                configuration: .init(initialMapSize: 1 << 16, readOnly: true)
            )
            #expect(backend.isReadOnly && backend.configuration.readOnly)
            let store = ObjectStore(backend: backend)
            #expect(try store.count(Entry.self) == 100)
            #expect(try store.fetch(Entry.self, id: 50)?.value.count == 100)
            expectStorageError(.readOnly) { try store.save(Entry(id: 101, value: "")) }
            expectStorageError(.readOnly) { try backend.write { _ in } }
            // LMDB's own refusal of a write transaction in an `MDB_RDONLY` environment.
            expectStorageError(.readOnly) { _ = try backend.environment.begin(readOnly: false) }
            try store.close()
            let after = try snapshot(path)
            #expect(after.0 == before.0)
            #expect(after.1 == before.1)
        }
    }

    /// A read-only store on a file the process has open read-write shares its environment, sees
    /// its commits and still refuses to write; a file open read-only cannot also be opened
    /// read-write (one environment a file per process) until the read-only store is closed.
    @Test func sharesTheEnvironmentOfTheProcess() throws {
        try TemporaryDirectory.with("lmdb-read-only-shared") { directory in
            let path = directory.appendingPathComponent("entries.lmdb").path
            let writable = ObjectStore(backend: try .lmdb(path: path))
            try writable.save(Entry(id: 1, value: "one"))
            let reader = ObjectStore(backend: try .lmdb(path: path, configuration: .init(readOnly: true)))
            try writable.save(Entry(id: 2, value: "two"))
            #expect(try reader.fetchAll(Entry.self).map(\.id) == [1, 2])
            expectStorageError(.readOnly) { try reader.delete(Entry.self, id: 1) }
            try writable.close()
            try reader.close()

            let alone = ObjectStore(backend: try .lmdb(path: path, configuration: .init(readOnly: true)))
            let refused = expectStorageError(.cannotOpen) { _ = try LMDBStorageBackend(path: path) }
            #expect(refused?.message.contains("open read-only in this process") == true)
            #expect(try alone.count(Entry.self) == 2)
            try alone.close()
            let again = ObjectStore(backend: try .lmdb(path: path))
            try again.save(Entry(id: 3, value: "three"))
            try again.close()
        }
    }

    /// An LMDB file without the store's catalog (made by another program) is refused read-only
    /// (it would be created read-write), and left as it was.
    @Test func aFileWithoutTheCatalogIsRefused() throws {
        try TemporaryDirectory.with("lmdb-read-only-foreign") { directory in
            let path = directory.appendingPathComponent("foreign.lmdb").path
            var env: OpaquePointer?
            try #require(mdb_env_create(&env) == 0)
            try #require(mdb_env_open(env, path, UInt32(MDB_NOSUBDIR), 0o600) == 0)
            var txn: OpaquePointer?
            try #require(mdb_txn_begin(env, nil, 0, &txn) == 0)
            var dbi: MDB_dbi = 0
            try #require(mdb_dbi_open(txn, nil, 0, &dbi) == 0)
            var key = MDB_val(mv_size: 1, mv_data: strdup("k"))
            var data = MDB_val(mv_size: 1, mv_data: strdup("v"))
            defer {
                free(key.mv_data)
                free(data.mv_data)
            }
            try #require(mdb_put(txn, dbi, &key, &data, 0) == 0)
            try #require(mdb_txn_commit(txn) == 0)
            mdb_env_close(env)
            let before = try snapshot(path)
            let error = expectStorageError(.cannotOpen) {
                _ = try LMDBStorageBackend(path: path, configuration: .init(readOnly: true))
            }
            #expect(error?.message.contains("no catalog") == true)
            #expect(try snapshot(path).0 == before.0)
        }
    }
}
