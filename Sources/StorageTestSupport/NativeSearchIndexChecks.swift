import Foundation
package import Storage
import Testing

/// Checks an engine that keeps full-text indexes in its own form (SQLite's FTS5 tables, LMDB's
/// blocks of postings) against the store's own index, as the in-memory engine keeps it.
package enum NativeSearchIndexChecks {
    /// Queries of every form (words, phrases, prefixes, OR, NOT, accents, a stop word).
    package static let queries = [
        "love", "star wars", "\"star wars\"", "lov*", "moon OR blue", "star -trek", "CAFÉ OR Amelie", "the",
        "fiction scien*", "\"the king\" OR lord -rings",
    ]

    /// Whether the engine keeps an index of a collection, and how many records the store's own
    /// postings hold (nil: the collection does not exist).
    package typealias Layout = (engine: Bool, postings: Int?)

    /// The layout of `collection`'s index.
    package static func layout(_ backend: any StorageBackend, _ collection: String) throws -> Layout {
        try backend.read { transaction in
            let engine = try (transaction as? any FullTextSearchingReadTransaction)?.hasFullTextIndex(of: collection)
            let postings =
                try transaction.schema(of: "_search_postings") == nil
                ? nil : try transaction.count(in: "_search_postings", where: nil)
            return (engine ?? false, postings)
        }
    }

    /// Expects `store` to answer each of `queries` in `collection` as `reference` does: the same
    /// records in the same order, and the same first three with a limit.
    package static func expectSameAnswers(
        _ store: ObjectStore,
        _ reference: ObjectStore,
        _ queries: [String],
        in collection: String = "films"
    ) throws {
        for query in queries {
            let found = try store.search(in: collection, matching: query).map { $0["id"] }
            let wanted = try reference.search(in: collection, matching: query).map { $0["id"] }
            #expect(found == wanted, "\(query)")
            let top = try store.search(in: collection, matching: query, limit: 3).map { $0["id"] }
            #expect(top == Array(wanted.prefix(3)), "\(query) limit 3")
        }
    }

    /// A store whose index of the films is in the store's own postings (as every store's was
    /// before its engine kept indexes natively): searches read the postings, and the first write
    /// moves the index into the engine and empties them. `open` opens the same store each time.
    package static func expectSharedPostingsReadThenMovedAtTheFirstWrite(
        open: () throws -> any StorageBackend
    ) throws {
        let memory = InMemoryStorageBackend()
        let reference = ObjectStore(backend: memory)
        try reference.save(contentsOf: SearchFilm.all)
        do {
            let backend = try open()
            let store = ObjectStore(backend: backend)
            try store.save(contentsOf: SearchFilm.all)
            // The shared collections, as the in-memory engine holds them, and no native index.
            try memory.read { source in
                try backend.write { destination in
                    try (destination as? any FullTextIndexingWriteTransaction)?.dropFullTextIndex(of: "films")
                    for name in ["_search_indexes", "_search_documents", "_search_postings"] {
                        let schema = try #require(try source.schema(of: name))
                        _ = try destination.prepareCollection(schema)
                        let columns = schema.columns.map(\.name)
                        let writer = try destination.makeWriter(for: name, columns: columns)
                        try source.scan(ScanRequest(collection: name, columns: columns)) { row in
                            _ = try writer.put((0..<columns.count).map { row.value(at: $0) })
                            return true
                        }
                    }
                }
            }
            try store.close()
        }
        let backend = try open()
        let store = ObjectStore(backend: backend)
        defer { try? store.close() }
        #expect(try !layout(backend, "films").engine)
        #expect(try layout(backend, "films").postings ?? 0 > 0)
        try expectSameAnswers(store, reference, queries)
        for target in [store, reference] {
            try target.save(SearchFilm(id: 1000, title: "Zebra Love", year: 2020, genre: nil))
        }
        let moved = try layout(backend, "films")
        #expect(moved.engine)
        #expect(moved.postings == 0)
        #expect(try backend.read { try $0.count(in: "_search_documents", where: nil) } == 0)
        try expectSameAnswers(store, reference, queries + ["zebra"])
    }
}
