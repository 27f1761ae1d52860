import Foundation
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// The checks of an engine's own full-text index, shared with the other engine that keeps one.
private typealias Checks = NativeSearchIndexChecks

/// A note keyed by text, for the FTS5 index's key map.
private struct SearchNote: Codable, Equatable, StorableModel {
    static let collectionName = "notes"
    static let indexes: [IndexDefinition] = [.fullText(["body"])]
    var id: String
    var body: String
}

/// SQLite keeps full-text indexes in FTS5 tables (`FullTextIndexingWriteTransaction`): the
/// store's own postings stay empty, and the answers are the in-memory engine's (the store's own
/// index), order and all.
@Suite(.dedicatedThreads) struct SQLiteSearchEngineTests {
    @Test func sqliteKeepsTheIndexInFTS5AndTheSharedPostingsStayEmpty() throws {
        try TemporaryDirectory.with("sqlite-search-engine") { directory in
            let backend = try SQLiteStorageBackend(path: directory.appendingPathComponent("s.sqlite").path)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            let reference = ObjectStore(backend: InMemoryStorageBackend())
            for target in [store, reference] { try target.save(contentsOf: SearchFilm.all) }
            let layout = try Checks.layout(backend, "films")
            #expect(layout.engine)
            #expect(layout.postings == nil || layout.postings == 0)
            #expect(try store.fullTextIndex(of: "films") == .fullText(["title", "genre"]))
            #expect(try !store.collectionNames().contains { $0.hasPrefix("_search_fts") })
            try Checks.expectSameAnswers(store, reference, Checks.queries)
            // where: joins the records; limit: after it.
            for target in [store, reference] {
                try target.save(SearchFilm(id: 1, title: "Star Wars again", year: 1900, genre: nil))
                _ = try target.deleteAll(SearchFilm.self, where: Column("year") > 2010)
            }
            let filtered = try store.search(SearchFilm.self, matching: "star", where: Column("year") >= 1977, limit: 4)
            let wanted = try reference.search(
                SearchFilm.self,
                matching: "star",
                where: Column("year") >= 1977,
                limit: 4
            )
            #expect(!filtered.isEmpty)
            #expect(filtered == wanted)
            try Checks.expectSameAnswers(store, reference, Checks.queries)
            #expect(try Checks.layout(backend, "films").postings ?? 0 == 0)
            // A drop takes the FTS5 table with it.
            try store.drop(collection: "films")
            #expect(try !Checks.layout(backend, "films").engine)
        }
    }

    @Test func textKeysMapToRowidsAndTiesFollowTheKeys() throws {
        try TemporaryDirectory.with("sqlite-search-text-keys") { directory in
            let backend = try SQLiteStorageBackend(path: directory.appendingPathComponent("s.sqlite").path)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            let reference = ObjectStore(backend: InMemoryStorageBackend())
            let notes =
                ["b", "a", "é", "A", "c10", "c9", "zz"].map { SearchNote(id: $0, body: "same words here") }
                + [SearchNote(id: "long", body: "words words and more words")]
            func both(_ body: (ObjectStore) throws -> Void) throws {
                for target in [store, reference] { try body(target) }
            }
            func expectAlike() throws {
                for query in ["words", "same", "here OR more", "wor*", "-same words", "\"more words\""] {
                    let found = try store.search(SearchNote.self, matching: query)
                    #expect(found == (try reference.search(SearchNote.self, matching: query)), "\(query)")
                }
            }
            try both { try $0.save(contentsOf: notes) }
            #expect(try Checks.layout(backend, "notes").engine)
            let tied = try store.search(SearchNote.self, matching: "same").map(\.id)
            #expect(tied == ["A", "a", "b", "c10", "c9", "zz", "é"])
            try expectAlike()
            try both { try $0.save(SearchNote(id: "a", body: "other text")) }
            try both { _ = try $0.delete(SearchNote.self, id: "b") }
            try both { _ = try $0.deleteAll(SearchNote.self, where: Column("id") >= "z") }
            try both { _ = try $0.insert(dictionaries: [["id": "new", "body": "same words again"]], into: "notes") }
            try expectAlike()
            #expect(try store.search(SearchNote.self, matching: "same").map(\.id) == ["A", "c10", "c9", "new"])
            #expect(try Checks.layout(backend, "notes").postings ?? 0 == 0)
        }
    }

    /// Letters whose decomposition is an uppercase ASCII letter (`ℌ`, mathematical bold) fold to
    /// lowercase on every engine, as FTS5's `ascii` tokenizer folds them on SQLite: the same
    /// records match on both.
    @Test func lettersDecomposingToUppercaseASCIIMatchAlike() throws {
        try TemporaryDirectory.with("sqlite-search-uppercase") { directory in
            let store = try ObjectStore(backend: .sqlite(path: directory.appendingPathComponent("s.sqlite").path))
            defer { try? store.close() }
            let reference = ObjectStore(backend: InMemoryStorageBackend())
            let films = [
                SearchFilm(id: 1, title: "\u{1D407}\u{1D41E}\u{1D425}\u{1D425}\u{1D428} World", year: 2000, genre: nil),
                SearchFilm(id: 2, title: "hello there", year: 2000, genre: nil),
                SearchFilm(id: 3, title: "\u{210C} bar", year: 2000, genre: "h"),
            ]
            for target in [store, reference] { try target.save(contentsOf: films) }
            #expect(SearchTokenizer.tokens(in: films[0].title) == ["hello", "world"])
            #expect(SearchTokenizer.tokens(in: "\u{210C}") == ["h"])
            for query in ["hello", "HELLO", "\u{1D407}\u{1D41E}\u{1D425}\u{1D425}\u{1D428}", "h", "\u{210C}", "hel*"] {
                let found = try store.search(SearchFilm.self, matching: query).map(\.id)
                #expect(found == (try reference.search(SearchFilm.self, matching: query).map(\.id)), "\(query)")
                #expect(!found.isEmpty, "\(query)")
            }
        }
    }

    @Test func migrationsMoveTheFTS5Index() throws {
        try TemporaryDirectory.with("sqlite-search-migrations") { directory in
            let backend = try SQLiteStorageBackend(path: directory.appendingPathComponent("s.sqlite").path)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            try store.save(contentsOf: SearchFilm.all)
            var migrator = Migrator()
            migrator.register("rename genre") { try $0.renameColumn("genre", to: "kind", in: "films") }
            migrator.register("rename films") { try $0.renameCollection("films", to: "movies") }
            try migrator.migrate(store)
            #expect(try !Checks.layout(backend, "films").engine)
            #expect(try Checks.layout(backend, "movies").engine)
            #expect(try store.fullTextIndex(of: "movies") == .fullText(["title", "kind"]))
            let hits = try store.search(in: "movies", matching: "fiction").compactMap { $0["id"] }
            let wanted = SearchFilm.all.filter {
                SearchTokenizer.tokens(in: $0.title + " " + ($0.genre ?? "")).contains("fiction")
            }.map {
                StorageValue.integer($0.id)
            }
            #expect(Set(hits) == Set(wanted))
            #expect(try Checks.layout(backend, "movies").postings ?? 0 == 0)
        }
    }

    /// A store whose index is in the store's own postings (as every store was before SQLite kept
    /// FTS5 tables): searches read the postings, and the first write moves the index into FTS5
    /// and removes them.
    @Test func anIndexInTheSharedPostingsIsReadThenMovedIntoFTS5AtTheFirstWrite() throws {
        try TemporaryDirectory.with("sqlite-search-shared") { directory in
            let path = directory.appendingPathComponent("s.sqlite").path
            try Checks.expectSharedPostingsReadThenMovedAtTheFirstWrite { try SQLiteStorageBackend(path: path) }
        }
    }
}
