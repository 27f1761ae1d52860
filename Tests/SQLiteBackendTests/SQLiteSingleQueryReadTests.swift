import Foundation
import Storage
import Testing

@testable import SQLiteBackend

/// `readSingleQuery`: a key look-up runs its one statement unpinned, on the schema version the
/// connection last saw, and falls back to a pinned read whenever the statement cannot prove
/// that version. Another store on the same file stands in for another process: its schema
/// changes reach this backend only through the database.
@Suite struct SQLiteSingleQueryReadTests {
    struct Narrow: Codable, Equatable, StorableModel {
        static let collectionName = "people"
        var id: Int64
        var name: String
    }

    struct Wide: Codable, Equatable, StorableModel {
        static let collectionName = "people"
        var id: Int64
        var name: String
        var age: Int
    }

    /// Whether the backend's next single-query read of `people` record `id` runs unpinned.
    private func runsUnpinned(_ backend: SQLiteStorageBackend) throws -> Bool {
        try backend.readSingleQuery { transaction in
            (transaction as? SQLiteReadTransaction)?.isUnpinned ?? false
        }
    }

    /// Two stores on one file, `reader` having looked `Narrow` 1 up until its look-ups run
    /// unpinned.
    private func withWarmReader(
        _ body: (_ reader: ObjectStore, _ backend: SQLiteStorageBackend, _ writer: ObjectStore) throws -> Void
    ) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/single.sqlite"
            let backend = try SQLiteStorageBackend(path: path)
            let reader = ObjectStore(backend: backend)
            let writer = ObjectStore(backend: try SQLiteStorageBackend(path: path))
            try writer.save(Narrow(id: 1, name: "a"))
            for _ in 0..<3 { #expect(try reader.fetch(Narrow.self, id: 1) == Narrow(id: 1, name: "a")) }
            #expect(try runsUnpinned(backend))
            try body(reader, backend, writer)
        }
    }

    @Test func aLookUpRunsUnpinnedOnceTheConnectionKnowsTheSchema() throws {
        try withWarmReader { reader, _, writer in
            // Data committed elsewhere is read: each unpinned statement is its own snapshot.
            try writer.save(Narrow(id: 1, name: "b"))
            try writer.save(Narrow(id: 2, name: "c"))
            #expect(try reader.fetch(Narrow.self, id: 1) == Narrow(id: 1, name: "b"))
            #expect(try reader.fetch(Narrow.self, id: 2) == Narrow(id: 2, name: "c"))
            #expect(try reader.fetch(Narrow.self, id: 3) == nil)
        }
    }

    @Test func aColumnAddedElsewhereIsDecodedByTheNextLookUp() throws {
        try withWarmReader { reader, backend, writer in
            // The reader's connection still assumes the old schema (no `age`): its statement is
            // compiled again by SQLite, which sends the look-up to a pinned read.
            try writer.save(Wide(id: 1, name: "a", age: 42))
            #expect(try reader.fetch(Wide.self, id: 1) == Wide(id: 1, name: "a", age: 42))
            #expect(try reader.fetch(Narrow.self, id: 1) == Narrow(id: 1, name: "a"))
            // And once it knows the new schema, unpinned again.
            #expect(try reader.fetch(Wide.self, id: 1) == Wide(id: 1, name: "a", age: 42))
            #expect(try runsUnpinned(backend))
            try writer.save(Wide(id: 1, name: "z", age: 43))
            #expect(try reader.fetch(Wide.self, id: 1) == Wide(id: 1, name: "z", age: 43))
        }
    }

    @Test func aCollectionDroppedAndMadeAgainElsewhereIsReadFromTheNewTable() throws {
        try withWarmReader { reader, _, writer in
            #expect(try writer.drop(collection: "people"))
            #expect(try reader.fetch(Narrow.self, id: 1) == nil)
            try writer.save(Wide(id: 1, name: "n", age: 7))
            #expect(try reader.fetch(Wide.self, id: 1) == Wide(id: 1, name: "n", age: 7))
        }
    }

    @Test func aLookUpPlanCheckedAtOneSchemaVersionIsCheckedAgainAfterAChangeElsewhere() throws {
        struct Maybe: Codable, Equatable, StorableModel {
            static let collectionName = "people"
            var id: Int64
            var name: String
            var age: Int?
        }
        try withWarmReader { reader, backend, writer in
            // Looked up until the plan for `Maybe` is kept, checked at this schema version (no
            // `age` column: the plan selects `id` and `name`).
            for _ in 0..<3 { #expect(try reader.fetch(Maybe.self, id: 1) == Maybe(id: 1, name: "a", age: nil)) }
            #expect(try runsUnpinned(backend))
            // `age` added elsewhere: a plan still taken for checked would not select it.
            try writer.save(Wide(id: 1, name: "b", age: 42))
            #expect(try reader.fetch(Maybe.self, id: 1) == Maybe(id: 1, name: "b", age: 42))
            #expect(try reader.fetch(Maybe.self, id: 1) == Maybe(id: 1, name: "b", age: 42))
            // Rebuilt elsewhere without `age`, then with it again.
            #expect(try writer.drop(collection: "people"))
            try writer.save(Narrow(id: 1, name: "c"))
            #expect(try reader.fetch(Maybe.self, id: 1) == Maybe(id: 1, name: "c", age: nil))
            #expect(try writer.drop(collection: "people"))
            try writer.save(Wide(id: 1, name: "d", age: 7))
            #expect(try reader.fetch(Maybe.self, id: 1) == Maybe(id: 1, name: "d", age: 7))
        }
    }

    @Test func aCollectionMadeElsewhereAfterALookUpFoundNoneIsFound() throws {
        try withWarmReader { reader, _, writer in
            struct Other: Codable, Equatable, StorableModel {
                static let collectionName = "other"
                var id: Int64
                var value: String
            }
            // The connection remembers "no such collection" at its schema version; unpinned, that
            // answer is not trusted.
            #expect(try reader.fetch(Other.self, id: 1) == nil)
            #expect(try reader.fetch(Other.self, id: 1) == nil)
            try writer.save(Other(id: 1, value: "v"))
            #expect(try reader.fetch(Other.self, id: 1) == Other(id: 1, value: "v"))
        }
    }

    @Test func aScanRunsPinnedAndSeesTheNewSchema() throws {
        try withWarmReader { reader, backend, writer in
            try writer.save(Wide(id: 2, name: "b", age: 5))
            #expect(try reader.fetchAll(Wide.self, where: Column("id") == 2) == [Wide(id: 2, name: "b", age: 5)])
            #expect(try reader.count(Wide.self) == 2)
            // The closure ran twice: unpinned, refused before reading, then pinned.
            var runs: [Bool] = []
            let names = try backend.readSingleQuery { transaction in
                runs.append((transaction as? SQLiteReadTransaction)?.isUnpinned ?? false)
                return try transaction.collectionNames()
            }
            #expect(names == ["people"])
            #expect(runs == [true, false])
        }
    }
}

/// A write connection's copy of the schema is checked by SQLite only when a statement runs, and
/// `ALTER TABLE` is compiled against it: a migration reads the catalog through the writer first.
@Suite struct SQLiteMigrationAfterAChangeElsewhereTests {
    typealias Narrow = SQLiteSingleQueryReadTests.Narrow
    typealias Wide = SQLiteSingleQueryReadTests.Wide

    @Test func aColumnIsAddedAgainAfterAnotherStoreMadeTheTableWithoutIt() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/migrate.sqlite"
            let store = ObjectStore(backend: try SQLiteStorageBackend(path: path))
            let other = ObjectStore(backend: try SQLiteStorageBackend(path: path))
            // The store's writer compiles its statements against a table with `age`.
            try store.save(Wide(id: 1, name: "a", age: 1))
            #expect(try other.drop(collection: "people"))
            try other.save(Narrow(id: 2, name: "b"))
            #expect(try store.fetch(Narrow.self, id: 2) == Narrow(id: 2, name: "b"))
            // Adding `age` again: compiled against the writer's old copy, "duplicate column".
            try store.transaction { transaction in
                try transaction.save(Wide(id: 3, name: "c", age: 3))
                #expect(try transaction.fetch(Wide.self, id: 3) == Wide(id: 3, name: "c", age: 3))
            }
            #expect(try other.fetchAll(Narrow.self).map(\.id) == [2, 3])
            #expect(try other.fetch(Wide.self, id: 3) == Wide(id: 3, name: "c", age: 3))
        }
    }
}
