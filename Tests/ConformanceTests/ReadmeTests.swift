// The README's snippets (Quick start, In async code, CSV files, Opening each engine), run, as close
// to verbatim as a test allows (paths in a temporary folder, the `forEach` collecting names). The
// README's own text is type-checked where it says to paste it by DocumentationTests'
// ReadmeSnippetTests; this file runs it and checks what it returns.
import FileArchiveBackend
import Foundation
import LMDBBackend
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

struct Address: Codable, Equatable { var city: String }

struct Person: Codable, Equatable {
    var id: Int64  // a property named `id` is the primary key by default
    var name: String
    var age: Int
    var email: String?  // optionals become nullable columns
    var tags: [String]  // nested Codable values are stored as JSON text
    var address: Address?
}

// Per-type options, all optional
extension Person: StorableModel {
    static let collectionName = "people"  // default: the type's name
    static let indexes: [IndexDefinition] = [.init(["age"]), .init(["email"], unique: true)]
}

@Suite(.dedicatedThreads) struct ReadmeTests {
    @Test func quickStart() throws {
        let directory = try TemporaryDirectory("readme")
        defer { directory.remove() }
        let store = try ObjectStore(backend: .sqlite(path: directory.url.appendingPathComponent("app.sqlite").path))

        let person = Person(id: 42, name: "Ada", age: 36, email: nil, tags: ["math"], address: Address(city: "London"))
        let people = [
            Person(id: 7, name: "Alan", age: 41, email: "alan@example.org", tags: [], address: nil),
            Person(id: 8, name: "Grace", age: 85, email: nil, tags: ["navy"], address: nil),
        ]

        try store.save(person)  // insert or replace by primary key
        try store.save(contentsOf: people)  // one transaction
        let one = try store.fetch(Person.self, id: 42)
        let page = try store.fetchAll(
            Person.self,
            where: Column("age") >= 30 && Column("name").like("A%"),
            orderBy: [.ascending("name")],
            limit: 20,
            offset: 1
        )
        let n = try store.count(Person.self, where: Column("email") == nil)
        var streamed: [String] = []
        try store.forEach(Person.self, where: Column("age") > 60) { p in streamed.append(p.name) }  // in batches
        try store.delete(Person.self, id: 42)
        try store.deleteAll(Person.self, where: Column("age") < 18)
        try store.transaction { tx in  // all or nothing
            try tx.save(person)
            try tx.delete(Person.self, id: 7)
        }
        let (total, newest) = try store.read { tx in  // one snapshot, never waits for the writer
            (try tx.count(Person.self), try tx.fetchAll(Person.self, orderBy: [.descending("id")], limit: 5))
        }

        // JSON from a server, straight into the same collection, and back as dictionaries
        let data = Data(#"[{"id": 9, "name": "Edsger", "age": 72, "email": null, "tags": [], "address": null}]"#.utf8)
        try store.insert(jsonArray: data, into: Person.collectionName)
        let rows: [[String: StorageValue]] = try store.fetchDictionaries(from: "people", where: Column("age") > 40)

        // Errors match by code
        do { try store.save(person) } catch StorageError.Code.constraintViolation {
            // nothing was written
        }

        #expect(one == person)
        #expect(page.map(\.name) == ["Alan"])
        #expect(n == 2)
        #expect(streamed == ["Grace"])
        #expect(total == 2)
        #expect(newest.map(\.id) == [42, 8])
        #expect(rows.count == 2)  // Grace and Edsger, in the one collection `people`
        #expect(try store.fetchAll(Person.self, orderBy: [.ascending("id")]).map(\.id) == [8, 9, 42])

        // Collections, and closing
        let names = try store.collectionNames()  // ["people"]; the internal `_settings` is left out
        let schema: CollectionSchema? = try store.schema(of: "people")
        try store.drop(collection: "people")  // records, indexes and schema, in one transaction
        try store.close()  // waits for calls in flight, frees files; later calls throw .closed

        #expect(names == ["people"])
        #expect(schema?.primaryKey == "id")
    }

    // "In async code": the README's three handlers.
    static func adults(in store: ObjectStore, page: Int) async throws -> [Person] {
        try await store.fetchAll(
            Person.self,
            where: Column("age") >= 18,
            orderBy: [.ascending("name")],
            limit: 20,
            offset: page * 20
        )
    }

    static func seniors(in store: ObjectStore) async throws -> [String] {
        var names: [String] = []
        for try await person in store.stream(Person.self, where: Column("age") > 60) { names.append(person.name) }
        return names
    }

    static func birthday(of id: Int64, in store: ObjectStore) async throws -> Int? {
        try await store.transaction { tx in
            guard var person = try tx.fetch(Person.self, id: id) else { return nil }
            person.age += 1
            try tx.save(person)
            return person.age
        }
    }

    @Test func theAsyncHandlers() async throws {
        let store = try ObjectStore(backend: .sqliteInMemory())
        try await store.save(contentsOf: [
            Person(id: 7, name: "Alan", age: 41, email: nil, tags: [], address: nil),
            Person(id: 8, name: "Grace", age: 85, email: nil, tags: [], address: nil),
            Person(id: 9, name: "Tim", age: 12, email: nil, tags: [], address: nil),
        ])
        #expect(try await Self.adults(in: store, page: 0).map(\.name) == ["Alan", "Grace"])
        #expect(try await Self.adults(in: store, page: 1).isEmpty)
        #expect(try await Self.seniors(in: store) == ["Grace"])
        #expect(try await Self.birthday(of: 7, in: store) == 42)
        #expect(try await Self.birthday(of: 1, in: store) == nil)
        #expect(try await store.fetch(Person.self, id: 7)?.age == 42)
        try await store.close()
    }

    @Test func csvEndToEnd() throws {
        try TemporaryDirectory.with { directory in
            let store = try ObjectStore(
                backend: .sqlite(path: directory.appendingPathComponent("airports.sqlite").path)
            )
            let file = FixtureDataTests.airportsFile
            let stored = try store.insert(csv: file, into: "airports", primaryKey: "iata")  // 3376
            try store.insert(csv: file, into: "airports", primaryKey: "iata")  // replaces, still 3376
            let texas = try store.fetchDictionaries(from: "airports", where: Column("state") == "TX")  // 209 rows
            let north = try store.fetchDictionaries(
                from: "airports",
                where: Column("latitude") > 60.0,
                orderBy: [.descending("latitude")],
                limit: 3
            )
            #expect(stored == 3376)
            #expect(try store.fetchDictionaries(from: "airports").count == 3376)
            #expect(texas.count == 209)
            #expect(north.count == 3)
        }
    }

    @Test func openingEachEngine() throws {
        try TemporaryDirectory.with { directory in
            func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
            let tabular = try ObjectStore(backend: .sqlite(path: path("app.sqlite")))
            let durable = try ObjectStore(
                backend: .sqlite(path: path("durable.sqlite"), configuration: .init(synchronous: .full))
            )
            let scratch = try ObjectStore(backend: .sqliteInMemory())
            let fast = try ObjectStore(
                backend: .lmdb(path: path("app.lmdb"), configuration: .init(initialMapSize: 1 << 30))
            )
            let documents = try ObjectStore(
                backend: .fileArchive(directory: path("Store"), configuration: .init(lockTimeout: .seconds(2)))
            )
            let ada = Person(id: 1, name: "Ada", age: 36, email: nil, tags: [], address: nil)
            for store in [tabular, durable, scratch, fast, documents] {
                try store.save(ada)
                #expect(try store.fetch(Person.self, id: 1) == ada)
                try store.close()
            }
        }
    }
}
