import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import LMDBBackend

/// The checks of an engine's own full-text index, shared with the other engine that keeps one.
private typealias Checks = NativeSearchIndexChecks

/// A note keyed by text, for the native index's key map and the blocks of a frequent word.
private struct LMDBSearchNote: Codable, Equatable, StorableModel {
    static let collectionName = "notes"
    static let indexes: [IndexDefinition] = [.fullText(["body"])]
    var id: String
    var body: String
}

/// LMDB keeps full-text indexes natively (`LMDBFullText`, a database of blocks of postings per
/// collection): the store's own postings stay empty, and the answers are the in-memory engine's
/// (the store's own index), order and all.
@Suite(.dedicatedThreads) struct LMDBSearchEngineTests {
    /// The block keys' first document numbers of `word` in `collection`'s native index.
    static func blocks(_ backend: LMDBStorageBackend, _ collection: String, _ word: String) throws -> [Int] {
        try backend.read { transaction in
            let lmdb = try #require(transaction as? LMDBReadTransaction)
            guard let dbi = lmdb.fullTextHandle(collection) else { return [] }
            var firsts: [Int] = []
            try lmdb.forEachBlock(dbi, prefix: LMDBFullText.blockPrefix(Array(word.utf8)), collection: collection) {
                key,
                _ in
                firsts.append(LMDBFullText.readBigEndian(key, at: key.count - 8))
            }
            return firsts
        }
    }

    @Test func lmdbKeepsTheIndexNativelyAndTheSharedPostingsStayEmpty() throws {
        try withStorePath { _, path in
            let backend = try LMDBStorageBackend(path: path)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            let reference = ObjectStore(backend: InMemoryStorageBackend())
            for target in [store, reference] { try target.save(contentsOf: SearchFilm.all) }
            let layout = try Checks.layout(backend, "films")
            #expect(layout.engine)
            #expect(layout.postings == nil || layout.postings == 0)
            #expect(try !Self.blocks(backend, "films", "star").isEmpty)
            try Checks.expectSameAnswers(store, reference, Checks.queries)
            // Overwrites and deletes rewrite the blocks.
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
            try store.drop(collection: "films")
            #expect(try !Checks.layout(backend, "films").engine)
            #expect(try Self.blocks(backend, "films", "star").isEmpty)
        }
    }

    @Test func aFrequentWordSplitsIntoBlocksThatOverwritesAndDeletesRewrite() throws {
        try withStorePath { _, path in
            let backend = try LMDBStorageBackend(path: path)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            let reference = ObjectStore(backend: InMemoryStorageBackend())
            let notes = (0..<1500).map { LMDBSearchNote(id: "n\($0)", body: "common word\($0 % 7) common \($0)") }
            for target in [store, reference] {
                try target.save(contentsOf: Array(notes[..<700]))
                try target.save(contentsOf: Array(notes[700...]))
            }
            let before = try Self.blocks(backend, "notes", "common")
            #expect(before.count > 2)
            #expect(before == before.sorted())
            let queries = ["common", "word3", "common word5", "\"word2 common\"", "word*", "common -word1", "n3"]
            try Checks.expectSameAnswers(store, reference, queries, in: "notes")
            for target in [store, reference] {
                try target.save(contentsOf: (0..<40).map { LMDBSearchNote(id: "n\($0 * 30)", body: "rare word\($0)") })
                _ = try target.deleteAll(LMDBSearchNote.self, where: Column("id") < "n2")
            }
            try Checks.expectSameAnswers(store, reference, queries + ["rare", "rare word3"], in: "notes")
        }
    }

    /// Documents of hundreds of distinct words (past the short list a title's words are found
    /// in): each word's hits and the documents' lengths are those of the reference, so the
    /// matches and the BM25 order are too.
    @Test func longDocumentsAreIndexedAsTheReferenceIndexesThem() throws {
        try withStorePath { _, path in
            let backend = try LMDBStorageBackend(path: path)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            let reference = ObjectStore(backend: InMemoryStorageBackend())
            let notes = (0..<20).map { number in
                LMDBSearchNote(
                    id: "long\(number)",
                    body: (0..<(300 + number * 40)).map { "w\(($0 * (number + 3)) % 500)" }.joined(separator: " ")
                )
            }
            for target in [store, reference] { try target.save(contentsOf: notes) }
            #expect(try !Self.blocks(backend, "notes", "w7").isEmpty)
            let queries = ["w7", "w1 w499", "\"w3 w6\"", "w49*", "w0 OR w250", "w2 -w5"]
            try Checks.expectSameAnswers(store, reference, queries, in: "notes")
        }
    }

    @Test func aRollbackLeavesTheIndexAsItWas() throws {
        try withStorePath { _, path in
            let backend = try LMDBStorageBackend(path: path)
            let store = ObjectStore(backend: backend)
            defer { try? store.close() }
            try store.save(contentsOf: SearchFilm.all)
            let stars = try Self.blocks(backend, "films", "star")
            #expect(!stars.isEmpty)
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try store.transaction { session in
                    try session.save(SearchFilm(id: 5000, title: "Zebra crossing", year: 2000, genre: nil))
                    #expect(try session.search(SearchFilm.self, matching: "zebra").map(\.id) == [5000])
                    throw Abort()
                }
            }
            #expect(try store.search(SearchFilm.self, matching: "zebra").isEmpty)
            #expect(try Self.blocks(backend, "films", "zebra").isEmpty)
            #expect(try Self.blocks(backend, "films", "star") == stars)
        }
    }

    @Test func anIndexInTheSharedPostingsIsReadThenMovedAtTheFirstWrite() throws {
        try withStorePath { _, path in
            try Checks.expectSharedPostingsReadThenMovedAtTheFirstWrite { try LMDBStorageBackend(path: path) }
        }
    }
}
