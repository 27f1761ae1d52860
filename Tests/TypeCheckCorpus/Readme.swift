// The README's compiled Swift snippets (Quick start, CSV files, Opening each engine), each where
// a user would paste it: the declarations at file scope, the quick start's statements in an
// `async` function (its comment says: in async code), the CSV and engine snippets in synchronous
// functions. The code is the README's but for swift-format's line breaks, a line comment for a
// block comment, and the closing `print` lines, so that no value is unused. Change this file
// with the README. (The DocC articles' snippets are type-checked from
// Tests/DocumentationTests/ArticleSnippets.swift, which scripts/docs-snippets.py generates.)
import FileArchiveBackend
import Foundation
import LMDBBackend
import SQLiteBackend
import Storage

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

func quickStart() async throws {
    let store = try ObjectStore(backend: .sqlite(path: "app.sqlite"))

    let person = Person(id: 42, name: "Ada", age: 36, email: nil, tags: ["math"], address: Address(city: "London"))
    let people = [
        Person(id: 7, name: "Alan", age: 41, email: "alan@example.org", tags: [], address: nil),
        Person(id: 8, name: "Grace", age: 85, email: nil, tags: ["navy"], address: nil),
    ]

    // In async code (a server's handlers), every call is awaited: work that may block runs on the
    // store's own threads, never on Swift's cooperative pool (one-query reads that need not wait,
    // on LMDB, SQLite files and the archive, run on the calling task: docs/ARCHITECTURE.md).
    try await store.save(person)  // insert or replace by primary key
    try await store.save(contentsOf: people)  // one transaction
    let one = try await store.fetch(Person.self, id: 42)
    let page = try await store.fetchAll(
        Person.self,
        where: Column("age") >= 30 && Column("name").like("A%"),
        orderBy: [.ascending("name")],
        limit: 20,
        offset: 1
    )
    let n = try await store.count(Person.self, where: Column("email") == nil)
    for try await p in store.stream(Person.self, where: Column("age") > 60) { print(p.name) }  // in batches
    try await store.delete(Person.self, id: 42)
    try await store.deleteAll(Person.self, where: Column("age") < 18)
    try await store.transaction { tx in  // all or nothing; the closure is synchronous
        try tx.save(person)
        try tx.delete(Person.self, id: 7)
    }
    let (total, newest) = try await store.read { tx in  // one snapshot, never waits for the writer
        (try tx.count(Person.self), try tx.fetchAll(Person.self, orderBy: [.descending("id")], limit: 5))
    }

    // JSON from a server, straight into the same collection, and back as dictionaries
    let data = Data(#"[{"id": 9, "name": "Edsger", "age": 72, "email": null, "tags": [], "address": null}]"#.utf8)
    try await store.insert(jsonArray: data, into: Person.collectionName)
    let rows: [[String: StorageValue]] = try await store.fetchDictionaries(from: "people", where: Column("age") > 40)

    // Errors match by code
    do { try await store.save(person) } catch StorageError.Code.constraintViolation {
        // nothing was written
    }

    // Synchronous code calls the same names without `await`; they block the calling thread.
    func saveNow(_ person: Person) throws { try store.save(person) }
    try saveNow(person)

    // Collections, and closing
    let names = try await store.collectionNames()  // ["people"]; the internal `_settings` is left out
    let schema: CollectionSchema? = try await store.schema(of: "people")
    try await store.drop(collection: "people")  // records, indexes and schema, in one transaction
    try await store.close()  // waits for calls in flight, frees files; later calls throw .closed

    print(one as Any, page, n, total, newest, rows, names, schema as Any)
}

func csvFiles() throws {
    let store = try ObjectStore(backend: .sqlite(path: "airports.sqlite"))
    let file = URL(fileURLWithPath: "Tests/Fixtures/airports.csv")
    let stored = try store.insert(csv: file, into: "airports", primaryKey: "iata")  // 3376
    try store.insert(csv: file, into: "airports", primaryKey: "iata")  // replaces, still 3376
    let texas = try store.fetchDictionaries(from: "airports", where: Column("state") == "TX")  // 209 rows
    let north = try store.fetchDictionaries(
        from: "airports",
        where: Column("latitude") > 60.0,
        orderBy: [.descending("latitude")],
        limit: 3
    )

    print(stored, texas, north)
}

func openingEachEngine() throws {
    let tabular = try ObjectStore(backend: .sqlite(path: "app.sqlite"))
    let durable = try ObjectStore(backend: .sqlite(path: "durable.sqlite", configuration: .init(synchronous: .full)))
    let scratch = try ObjectStore(backend: .sqliteInMemory())
    let fast = try ObjectStore(backend: .lmdb(path: "app.lmdb", configuration: .init(initialMapSize: 1 << 30)))
    let documents = try ObjectStore(
        backend: .fileArchive(directory: "Store", configuration: .init(lockTimeout: .seconds(2)))
    )

    print(tabular, durable, scratch, fast, documents)
}
