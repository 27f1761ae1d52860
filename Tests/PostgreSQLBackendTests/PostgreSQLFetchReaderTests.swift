import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

@testable import PostgreSQLBackend

/// A read streamed through a cursor receives each large batch (`PostgreSQLCursorStream
/// .backgroundBatch` rows or more) on a thread of its own while the batch before is decoded
/// (`PostgreSQLFetchReader`): the rows are the same and in order, a read ended early or lost with
/// its connection leaves nothing in flight, and small reads start no thread.
@Suite(.dedicatedThreads) struct PostgreSQLFetchReaderTests {
    struct Row: Codable, Equatable, StorableModel {
        static let collectionName = "rows"
        var id: Int64
        var text: String
    }

    static func rows(_ count: Int) -> [Row] {
        (1...count).map { Row(id: Int64($0), text: String(repeating: "r", count: $0 % 23) + "\($0)") }
    }

    /// A backend on the tests' server in the schema of `path`, its sessions named `name`.
    static func backend(_ path: String, applicationName name: String? = nil) throws -> PostgreSQLStorageBackend {
        var configuration = PostgreSQLStorageBackend.Configuration(poolSize: 2)
        configuration.schema = PostgreSQLTestServer.schema(for: path)
        var url = try PostgreSQLTestServer.url()
        if let name { url = PostgreSQLLostConnectionTests.url(url, applicationName: name) }
        return try PostgreSQLStorageBackend(url: url, configuration: configuration)
    }

    /// The ids of `collection` read through a cursor, as far as `body` lets the read go, and how
    /// many `FETCH` answers its connection had read aside by the end.
    static func scanIDs(
        _ backend: PostgreSQLStorageBackend,
        _ collection: String = Row.collectionName,
        _ body: (Int64) throws -> Bool = { _ in true }
    ) throws -> (ids: [Int64], readAside: Int) {
        try backend.readSingleQuery { transaction in
            let connection = try #require(transaction as? PostgreSQLReadTransaction).connection
            let before = connection.fetchesReadAside
            var ids: [Int64] = []
            try transaction.scan(ScanRequest(collection: collection, columns: ["id", "text"])) { row in
                guard case .integer(let id) = row.value(at: 0) else {
                    Issue.record("no id in \(row.value(at: 0))")
                    return false
                }
                ids.append(id)
                return try body(id)
            }
            return (ids, connection.fetchesReadAside - before)
        }
    }

    @Test func largeBatchesAreReadAsideAndTheRowsStayInOrder() throws {
        try withStore("fetch-aside") { _, path in
            let backend = try Self.backend(path)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            let stored = Self.rows(Sanitizers.count(40_000, underThreadSanitizer: 20_000))
            try store.save(contentsOf: stored)
            // 32, 256, 2,048, 16,384, then the rest: every batch from the third on is read aside.
            let whole = try Self.scanIDs(backend)
            #expect(whole.ids == stored.map(\.id))
            #expect(whole.readAside >= 2, "\(whole.readAside)")
            #expect(try store.fetchAll(Row.self) == stored)
            // 288 rows fill the first two batches: the third FETCH, asked for then, is read aside,
            // and a read of fewer starts no thread.
            _ = try store.deleteAll(Row.self, where: Column("id") > 200)
            let small = try Self.scanIDs(backend)
            #expect(small.ids == Array(1...200))
            #expect(small.readAside == 0)
        }
    }

    /// A read ended while a batch is read aside: the reader is waited for, the cursor closes
    /// with the read, and the connection serves the next reads.
    @Test func aReadEndedWhileABatchIsReadAsideLeavesTheConnectionReady() throws {
        try withStore("fetch-aside-stop") { _, path in
            let backend = try Self.backend(path)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            let stored = Self.rows(Sanitizers.count(30_000, underThreadSanitizer: 20_000))
            try store.save(contentsOf: stored)
            for stop: Int64 in [300, 2_400, 19_000] {
                let ended = try Self.scanIDs(backend) { $0 < stop }
                #expect(ended.ids == Array(1...stop))
                #expect(ended.readAside >= 1, "stop \(stop)")
                #expect(try store.count(Row.self) == stored.count)
                #expect(try store.fetch(Row.self, id: 19_999) == stored[19_998])
            }
        }
    }

    /// The session is ended by the server while the read goes on: the read fails with
    /// `.connectionLost` where its rows stop (every row before is in order), and the store reads
    /// again on a new connection.
    @Test func aSessionEndedDuringTheReadFailsItAsLost() throws {
        try withStore("fetch-aside-lost") { _, path in
            let name = PostgreSQLLostConnectionTests.applicationName("fetch_aside")
            let backend = try Self.backend(path, applicationName: name)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            let stored = Self.rows(Sanitizers.count(60_000, underThreadSanitizer: 20_000))
            try store.save(contentsOf: stored)
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            var seen: [Int64] = []
            let error = try #require(throws: StorageError.self) {
                _ = try Self.scanIDs(backend) { id in
                    seen.append(id)
                    if id == 300 {
                        _ = try raw.execute(
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(name)'"
                        )
                    }
                    return true
                }
            }
            #expect(error.code == .connectionLost, "\(error)")
            #expect(seen.count >= 300 && seen.count < stored.count, "\(seen.count)")
            #expect(seen == Array(1...Int64(seen.count)))
            #expect(try store.fetchAll(Row.self) == stored)
        }
    }
}
