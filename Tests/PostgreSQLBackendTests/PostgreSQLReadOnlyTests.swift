import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

@testable import PostgreSQLBackend

/// Stores opened read-only on the tests' server: no DDL, no listener, no row written.
@Suite(.dedicatedThreads) struct PostgreSQLReadOnlyTests {
    struct Item: Codable, Equatable {
        var id: Int64
        var name: String
    }

    /// A setting of the read-only tests.
    final class Prefs: Settings, @unchecked Sendable {
        @Setting var mode = "light"
    }

    /// The relations of `schema` (name and kind), each with what it holds: a table's row count and
    /// a digest of its rows, a sequence's position.
    static func relations(of schema: String, on raw: RawConnection) throws -> [String] {
        let quoted = "\"" + schema.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        let literal = "'" + schema.replacingOccurrences(of: "'", with: "''") + "'"
        return try raw.execute(
            "SELECT c.relname || ' ' || c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname = \(literal) AND c.relkind IN ('r', 'S') ORDER BY 1"
        ).map { entry in
            let parts = entry.split(separator: " ")
            let table = quoted + ".\"" + parts[0] + "\""
            let digest = "coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '')"
            let sql =
                parts[1] == "S"
                ? "SELECT last_value || ' ' || is_called FROM \(table)"
                : "SELECT count(*) || ' ' || \(digest) FROM \(table) t"
            return entry + ": " + (try raw.execute(sql).first ?? "")
        }
    }

    /// How many schemas are named `schema` exactly.
    static func schemaCount(_ schema: String, on raw: RawConnection) throws -> String? {
        let literal = "'" + schema.replacingOccurrences(of: "'", with: "''") + "'"
        return try raw.execute("SELECT count(*) FROM pg_namespace WHERE nspname = " + literal).first
    }

    /// A misspelt schema (`Bad-Name`, which PostgreSQL tells from `bad-name`), opened read-only,
    /// is `.cannotOpen` naming it, and no schema, table or sequence is made.
    @Test func aMissingSchemaIsNotCreated() throws {
        let raw = try RawConnection(try PostgreSQLTestServer.url())
        let schema = "Bad-Name-" + UUID().uuidString.prefix(8)
        for _ in 0..<2 {
            let error = expectStorageError(.cannotOpen) {
                _ = try PostgreSQLStorageBackend(
                    url: try PostgreSQLTestServer.url(),
                    configuration: .init(schema: schema, readOnly: true)
                )
            }
            #expect(error?.message.contains("there is no schema '\(schema)'") == true, "\(String(describing: error))")
        }
        #expect(try Self.schemaCount(schema, on: raw) == "0")
    }

    /// A schema that exists but holds no store is `.cannotOpen` too, and stays empty.
    @Test func aSchemaWithoutAStoreIsRefused() throws {
        let raw = try RawConnection(try PostgreSQLTestServer.url())
        let schema = "test_empty_" + UUID().uuidString.prefix(8).lowercased()
        try raw.execute("CREATE SCHEMA \"\(schema)\"")
        defer { _ = try? raw.execute("DROP SCHEMA \"\(schema)\" CASCADE") }
        let error = expectStorageError(.cannotOpen) {
            _ = try PostgreSQLStorageBackend(
                url: try PostgreSQLTestServer.url(),
                configuration: .init(schema: schema, readOnly: true)
            )
        }
        #expect(error?.message.contains("holds no store") == true, "\(String(describing: error))")
        #expect(try Self.relations(of: schema, on: raw).isEmpty)
    }

    /// A store opened read-only reads what is there, refuses writes, registers no change listener
    /// when observed, and leaves every table and sequence of its schema row for row as it was.
    @Test func readsAndLeavesTheSchemaAsItWas() async throws {
        let directory = try TemporaryDirectory("postgres-read-only")
        defer { directory.remove() }
        let path = DiskBackend.postgresql.storePath(in: directory.url)
        let schema = PostgreSQLTestServer.schema(for: path)
        let raw = try RawConnection(try PostgreSQLTestServer.url())
        let before = try Self.fill(path, schema: schema, raw: raw)

        let store = try DiskBackend.postgresql.openStore(path: path, readOnly: true)
        let backend = try #require(store.backend as? PostgreSQLStorageBackend)
        #expect(backend.isReadOnly)
        // Observed (a change stream, settings reads): a store that writes would start its listener.
        let changes = store.changes(of: Item.self)
        try Self.readAndRefuse(store)
        #expect(store.isObservingCommitsElsewhere)
        #expect(backend.startedListenerCount == 0)
        try await store.close()
        _ = changes
        #expect(try Self.relations(of: schema, on: raw) == before)
    }

    /// Saves the items and a setting read-write, and returns the schema's relations then.
    static func fill(_ path: String, schema: String, raw: RawConnection) throws -> [String] {
        let writable = try DiskBackend.postgresql.openStore(path: path, readOnly: false)
        try writable.save(contentsOf: [Item(id: 1, name: "one"), Item(id: 2, name: "two")])
        let prefs = try Prefs(store: writable)
        try prefs.$mode.set("dark")
        // Closed first: its change listener, if it started one, writes no more.
        try writable.close()
        let relations = try relations(of: schema, on: raw)
        #expect(relations.contains { $0.hasPrefix("item r: 2 ") }, "\(relations)")
        return relations
    }

    /// The reads and refused writes of `readsAndLeavesTheSchemaAsItWas`, synchronously.
    static func readAndRefuse(_ store: ObjectStore) throws {
        #expect(try store.fetchAll(Item.self, orderBy: [.ascending("id")]).map(\.name) == ["one", "two"])
        #expect(try store.read { try $0.fetch(Item.self, id: 2) } == Item(id: 2, name: "two"))
        let prefs = try Prefs(store: store)
        #expect(try prefs.$mode.get() == "dark")
        #expect(try prefs.$mode.get() == "dark")
        expectStorageError(.readOnly) { try store.save(Item(id: 3, name: "three")) }
        expectStorageError(.readOnly) { try prefs.$mode.set("light") }
        expectStorageError(.readOnly) { try store.drop(collection: "Item") }
        expectStorageError(.readOnly) { try store.insert(jsonArray: Data(#"[{"id": 5}]"#.utf8), into: "New") }
    }

    /// A read-only store hears of no other process's commit (it starts no listener), so its
    /// settings are never served from a cache: a value another store changes is read at once.
    @Test func settingsChangedElsewhereAreReadAtOnce() throws {
        try withStore("read-only-settings") { writable, path in
            let written = try Prefs(store: writable)
            try written.$mode.set("dark")
            let reader = try DiskBackend.postgresql.openStore(path: path, readOnly: true)
            defer { try? reader.close() }
            let read = try Prefs(store: reader)
            #expect(try read.$mode.get() == "dark")
            #expect(try read.$mode.get() == "dark")
            try written.$mode.set("blue")
            #expect(try read.$mode.get() == "blue")
            try written.$mode.reset()
            #expect(read.mode == "light")  // the default: the key is gone on the server
        }
    }

    /// The connections of a store opened read-only run every transaction read-only, so the
    /// server itself refuses a write sent on one (SQLSTATE 25006), as `.readOnly`.
    @Test func theServerRefusesWritesOnItsConnections() throws {
        let configuration = PostgreSQLStorageBackend.Configuration(schema: "public", readOnly: true)
        let pool = try PostgreSQLConnectionPool(url: try PostgreSQLTestServer.url(), configuration: configuration)
        let connection = try pool.connect()
        let table = "\"public\".\"read_only_" + UUID().uuidString.prefix(8).lowercased() + "\""
        let error = expectStorageError(.readOnly) { try connection.execute("CREATE TABLE \(table) (x int)") }
        #expect(error?.postgreSQL?.sqlState == "25006")
    }
}
