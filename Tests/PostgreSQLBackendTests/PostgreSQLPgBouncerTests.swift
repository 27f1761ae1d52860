import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Through PgBouncer in transaction pooling (`scripts/pgbouncer.sh`, started by the tests as the
/// server is), which gives each transaction whichever server connection is free: with
/// `transactionPooling` the store prepares no statement by name and keeps no session state, and
/// observes other processes over `listenURL`. The whole conformance suite runs so too with
/// `STORAGE_POSTGRES_POOLER=pgbouncer` (see docs/POSTGRESQL.md).
@Suite struct PostgreSQLPgBouncerTests {
    struct Item: Codable, Equatable, StorableModel {
        var id: Int64
        var text: String
        var rank: Int
    }

    /// Two stores through the pooler on one schema, from several threads at once: saves, single
    /// and bulk, transactions, look-ups, filtered and streamed reads, counts. Named statements
    /// would collide here at once (`prepared statement "s0" already exists`, or does not exist,
    /// on a server connection another client prepared on).
    @Test func storesThroughATransactionPoolerShareItsServerConnections() throws {
        guard let pooled = try PostgreSQLTestServer.pgbouncerURL() else { return }  // a server of one's own
        try TemporaryDirectory.with("postgres-pgbouncer") { directory in
            let path = DiskBackend.postgresql.storePath(in: directory)
            let configuration = PostgreSQLStorageBackend.Configuration(
                schema: PostgreSQLTestServer.schema(for: path),
                transactionPooling: true,
                listenURL: try PostgreSQLTestServer.url()
            )
            let first = try ObjectStore(backend: .postgreSQL(url: pooled, configuration: configuration))
            let second = try ObjectStore(backend: .postgreSQL(url: pooled, configuration: configuration))
            let failures = Locked<[String]>([])
            let group = DispatchGroup()
            for thread in 0..<8 {
                group.enter()
                let store = thread.isMultiple(of: 2) ? first : second
                Thread {
                    defer { group.leave() }
                    do {
                        for round in 0..<25 {
                            let id = Int64(thread * 1000 + round)
                            try store.save(Item(id: id, text: "item \(id)", rank: round))
                            try store.transaction { transaction in
                                try transaction.save(Item(id: id + 500, text: "pair", rank: -1))
                                try transaction.save(Item(id: id, text: "item \(id)", rank: round + 1))
                            }
                            guard try store.fetch(Item.self, id: id)?.rank == round + 1 else {
                                throw StorageError(.engine, "item \(id) not read back")
                            }
                            _ = try store.fetchAll(Item.self, where: Column("rank") > round)
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }.start()
            }
            group.wait()
            #expect(failures.withLock { $0 } == [])
            #expect(try first.count(Item.self) == 8 * 25 * 2)
            #expect(try second.count(Item.self, where: Column("text") == "pair") == 8 * 25)
            try second.save(contentsOf: (0..<3000).map { Item(id: 100_000 + Int64($0), text: "bulk", rank: $0) })
            let bulk = try first.fetchAll(Item.self, where: Column("text") == "bulk", orderBy: [.ascending("id")])
            #expect(bulk.map(\.rank) == Array(0..<3000))
        }
    }

    /// A store behind the pooler hears another store's commits over its `listenURL`.
    @Test func aStoreThroughThePoolerObservesOverItsListenURL() async throws {
        guard let pooled = try PostgreSQLTestServer.pgbouncerURL() else { return }
        let directory = try TemporaryDirectory("postgres-pgbouncer-listen")
        defer { directory.remove() }
        let path = DiskBackend.postgresql.storePath(in: directory.url)
        let configuration = PostgreSQLStorageBackend.Configuration(
            schema: PostgreSQLTestServer.schema(for: path),
            transactionPooling: true,
            listenURL: try PostgreSQLTestServer.url()
        )
        let writer = try ObjectStore(backend: .postgreSQL(url: pooled, configuration: configuration))
        let observer = try ObjectStore(backend: .postgreSQL(url: pooled, configuration: configuration))
        let changes = observer.changes(of: Item.self)
        try await writer.save(Item(id: 7, text: "seen", rank: 1))
        for await change in changes {
            #expect(change.upserted == [.integer(7)])
            break
        }
    }

    /// A statement timeout is a session setting, which a transaction pooler does not keep.
    @Test func aStatementTimeoutWithTransactionPoolingIsMisuse() throws {
        let error = #expect(throws: StorageError.self) {
            _ = try PostgreSQLStorageBackend(
                url: try PostgreSQLTestServer.url(),
                configuration: .init(statementTimeout: .seconds(1), transactionPooling: true)
            )
        }
        #expect(error?.code == .misuse)
        #expect(error?.message.contains("statementTimeout") == true)
    }
}
