import Foundation
import Storage
import Testing

/// Full-text search, checked against a reference written here: its own tokenizer (Foundation's
/// folding and `CharacterSet.alphanumerics`), its own matcher and its own BM25, so that every
/// engine must give exactly the reference's matches and order.
enum SearchReference {
    /// One atom of a reference query.
    enum Atom {
        case word(String)
        case prefix(String)
        case phrase([String])
    }

    /// Clauses that must all hold: atoms joined by OR, or one excluded atom.
    struct Query {
        var text: String
        var clauses: [(atoms: [Atom], excluded: Bool)]
    }

    static func words(_ text: String?) -> [String] {
        guard let text else { return [] }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .components(separatedBy: CharacterSet.alphanumerics.inverted).filter { !$0.isEmpty }
    }

    static func fields(_ film: SearchFilm) -> [[String]] { [words(film.title), words(film.genre)] }

    /// How many times `atom` occurs in `fields`.
    static func hits(_ atom: Atom, _ fields: [[String]]) -> Int {
        var count = 0
        for field in fields {
            switch atom {
            case .word(let word): count += field.filter { $0 == word }.count
            case .prefix(let prefix): count += field.filter { $0.hasPrefix(prefix) }.count
            case .phrase(let words):
                guard field.count >= words.count else { continue }
                for start in 0...(field.count - words.count) where Array(field[start..<start + words.count]) == words {
                    count += 1
                }
            }
        }
        return count
    }

    static func matches(_ query: Query, _ film: SearchFilm) -> Bool { matches(query, fields: fields(film)) }

    static func matches(_ query: Query, fields: [[String]]) -> Bool {
        for clause in query.clauses {
            let any = clause.atoms.contains { hits($0, fields) > 0 }
            if any == clause.excluded { return false }
        }
        return true
    }

    /// The ids of the matching films, best first, as FTS5's bm25() with k1 1.2 and b 0.75 ranks them.
    static func ranked(_ query: Query, _ films: [SearchFilm]) -> [Int64] {
        ranked(query, documents: films.map { ($0.id, fields($0)) })
    }

    /// The ids of the matching documents (an id and the words of each field), best first.
    static func ranked(_ query: Query, documents all: [(id: Int64, fields: [[String]])]) -> [Int64] {
        let count = Double(all.count)
        let average = Double(all.reduce(0) { $0 + $1.fields.joined().count }) / count
        let atoms = query.clauses.filter { !$0.excluded }.flatMap(\.atoms)
        let idfs = atoms.map { atom -> Double in
            let containing = Double(all.filter { hits(atom, $0.fields) > 0 }.count)
            let idf = log((count - containing + 0.5) / (containing + 0.5))
            return idf <= 0 ? 1e-6 : idf
        }
        var scored: [(Int64, Double)] = []
        for (id, fields) in all where matches(query, fields: fields) {
            let length = Double(fields.joined().count)
            var score = 0.0
            for (atom, idf) in zip(atoms, idfs) {
                let frequency = Double(hits(atom, fields))
                if frequency == 0 { continue }
                // As ext/fts5/fts5_aux.c writes it.
                score += idf * ((frequency * (1.2 + 1.0)) / (frequency + 1.2 * (1 - 0.75 + 0.75 * length / average)))
            }
            scored.append((id, score))
        }
        scored.sort { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
        return scored.map(\.0)
    }

    /// Eight query forms: a word, two words, a phrase, a prefix, OR, an exclusion, folded
    /// diacritics and case, and a mix across both fields.
    static let queries: [Query] = [
        Query(text: "love", clauses: [([.word("love")], false)]),
        Query(text: "star wars", clauses: [([.word("star")], false), ([.word("wars")], false)]),
        Query(text: "\"star wars\"", clauses: [([.phrase(["star", "wars"])], false)]),
        Query(text: "lov*", clauses: [([.prefix("lov")], false)]),
        Query(text: "moon OR blue", clauses: [([.word("moon"), .word("blue")], false)]),
        Query(text: "star -trek", clauses: [([.word("star")], false), ([.word("trek")], true)]),
        Query(
            text: "CAFÉ OR Amelie OR comedie",
            clauses: [([.word("cafe"), .word("amelie"), .word("comedie")], false)]
        ),
        Query(
            text: "\"the king\" OR lord -\"the rings\" -ring",
            clauses: [
                ([.phrase(["the", "king"]), .word("lord")], false), ([.phrase(["the", "rings"])], true),
                ([.word("ring")], true),
            ]
        ),
        Query(text: "the", clauses: [([.word("the")], false)]),
        Query(text: "fiction", clauses: [([.word("fiction")], false)]),
        Query(
            text: "star wars OR trek",
            clauses: [([.word("star")], false), ([.word("wars"), .word("trek")], false)]
        ),
        Query(text: "da*", clauses: [([.prefix("da")], false)]),
        Query(text: "fiction scien*", clauses: [([.word("fiction")], false), ([.prefix("scien")], false)]),
    ]
}

extension ConformanceSuite {
    /// The integer `id` of an untyped row.
    static func rowID(_ row: [String: StorageValue]) -> Int64? {
        guard case .integer(let id)? = row["id"] else { return nil }
        return id
    }

    /// A store holding the search films.
    static func filmStore(_ fixture: BackendFixture, _ directory: URL) throws -> ObjectStore {
        let store = try fixture.openStore(in: directory)
        try store.save(contentsOf: SearchFilm.all)
        return store
    }

    /// Expects every reference query to give the reference's ranking over `films`, whole and in
    /// its first 25.
    static func expectReferenceRanking(
        _ store: ObjectStore,
        _ films: [SearchFilm],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for query in SearchReference.queries {
            let wanted = SearchReference.ranked(query, films)
            let found = try store.search(SearchFilm.self, matching: query.text).map(\.id)
            #expect(found == wanted, "query \(query.text)", sourceLocation: sourceLocation)
            let top = try store.search(SearchFilm.self, matching: query.text, limit: 25).map(\.id)
            #expect(top == Array(wanted.prefix(25)), "top 25 of \(query.text)", sourceLocation: sourceLocation)
        }
    }

    /// The full-text search checks.
    public static let searchChecks: [ConformanceCheck] = [
        check("search: eight query forms match what a reference tokenizer and matcher find in film titles") {
            fixture,
            directory in
            let store = try filmStore(fixture, directory)
            for query in SearchReference.queries {
                let wanted = Set(SearchFilm.all.filter { SearchReference.matches(query, $0) }.map(\.id))
                #expect(!wanted.isEmpty, "the reference finds something for \(query.text)")
                let found = try store.search(SearchFilm.self, matching: query.text)
                #expect(Set(found.map(\.id)) == wanted, "query \(query.text)")
                #expect(found.count == wanted.count, "no record twice: \(query.text)")
                let rows = try store.search(in: "films", matching: query.text)
                #expect(rows.compactMap { rowID($0) } == found.map(\.id), "untyped: \(query.text)")
            }
            // Some of the sets, written out.
            let cafe = try store.search(SearchFilm.self, matching: "cafe").map(\.title)
            #expect(Set(cafe) == ["Café Society", "Cafe Flesh", "Café au Lait"])
            #expect(try store.search(SearchFilm.self, matching: "\"wars star\"").isEmpty)
            #expect(try store.search(SearchFilm.self, matching: "star* wars*").count > 5)
        },
        check("search: every engine ranks by the reference BM25 (k1 1.2, b 0.75), ties by primary key; top 25 alike") {
            fixture,
            directory in
            let store = try filmStore(fixture, directory)
            try expectReferenceRanking(store, SearchFilm.all)
            // where: and limit: filter before the limit.
            let query = SearchReference.queries[1]
            let wanted = SearchReference.ranked(query, SearchFilm.all.filter { $0.year >= 1977 })
            let found = try store.search(
                SearchFilm.self,
                matching: "star wars",
                where: Column("year") >= 1977,
                limit: 3
            )
            #expect(found.map(\.id) == Array(wanted.prefix(3)))
            #expect(try store.search(SearchFilm.self, matching: "star", limit: 0).isEmpty)
        },
        check("search: the index follows overwrites, deletes, delete-where, update-where, untyped writes and drops") {
            fixture,
            directory in
            let store = try filmStore(fixture, directory)
            var films = SearchFilm.all
            // Overwrite.
            films[0].title = "Nothing Here Tonight"
            try store.save(films[0])
            #expect(try store.search(SearchFilm.self, matching: "hope").isEmpty)
            #expect(try store.search(SearchFilm.self, matching: "tonight").map(\.id) == [1])
            // Delete, delete-where.
            try store.delete(SearchFilm.self, id: 2)
            films.removeAll { $0.id == 2 }
            #expect(try store.search(SearchFilm.self, matching: "empire").isEmpty)
            #expect(try store.deleteAll(SearchFilm.self, where: Column("year") < 1950) > 0)
            films.removeAll { $0.year < 1950 }
            // Update-where of an indexed field.
            #expect(try store.update(SearchFilm.self, set: ["title": "Quiet Evening"], where: Column("id") == 3) == 1)
            films[films.firstIndex { $0.id == 3 }!].title = "Quiet Evening"
            #expect(try store.search(SearchFilm.self, matching: "jedi").isEmpty)
            #expect(try store.search(SearchFilm.self, matching: "quiet evening").map(\.id) == [3])
            // An untyped write of the collection.
            #expect(
                try store.insert(
                    dictionaries: [["id": 900, "title": "Zebra Love Crossing", "year": 2024, "genre": "Drama"]],
                    into: "films"
                ) == 1
            )
            films.append(SearchFilm(id: 900, title: "Zebra Love Crossing", year: 2024, genre: "Drama"))
            #expect(try store.search(in: "films", matching: "zebra").compactMap { rowID($0) } == [900])
            try expectReferenceRanking(store, films)
            // Another store over the same backend, which never saw the type, keeps the index too.
            let other = ObjectStore(backend: store.backend)
            #expect(try other.deleteAll(from: "films", where: Column("id") == 900) == 1)
            films.removeAll { $0.id == 900 }
            #expect(try store.search(SearchFilm.self, matching: "zebra").isEmpty)
            try expectReferenceRanking(store, films)
            // A drop takes the index with it; the next save builds it from the new records alone.
            #expect(try store.drop(collection: "films"))
            #expect(try store.search(SearchFilm.self, matching: "star").isEmpty)
            try store.save(contentsOf: SearchFilm.all.prefix(10))
            try expectReferenceRanking(store, Array(SearchFilm.all.prefix(10)))
        },
        check("search: a rolled-back transaction leaves the index as it was; a transaction searches its own writes") {
            fixture,
            directory in
            let store = try filmStore(fixture, directory)
            struct Abort: Error {}
            #expect(throws: Abort.self) {
                try store.transaction { tx in
                    try tx.save(SearchFilm(id: 1, title: "Zebra Zebra", year: 2000, genre: nil))
                    try tx.delete(SearchFilm.self, id: 5)
                    _ = try tx.deleteAll(SearchFilm.self, where: Column("year") > 2000)
                    let own = try tx.search(SearchFilm.self, matching: "zebra")
                    #expect(own.map(\.id) == [1])
                    #expect(try tx.search(SearchFilm.self, matching: "hope").isEmpty)
                    throw Abort()
                }
            }
            #expect(try store.search(SearchFilm.self, matching: "zebra").isEmpty)
            try expectReferenceRanking(store, SearchFilm.all)
            let read = try store.read { tx in try tx.search(SearchFilm.self, matching: "hope").map(\.id) }
            #expect(read == [1])
        },
        check("search: copy(to:) carries the index both ways with the same answers") { fixture, directory in
            let store = try filmStore(fixture, directory)
            let memory = try BackendFixture.inMemory.openStore(in: directory.appendingPathComponent("copy"))
            try store.copy(to: memory)
            try expectReferenceRanking(memory, SearchFilm.all)
            // And into this engine, from another.
            let source = try BackendFixture.inMemory.openStore(in: directory.appendingPathComponent("source"))
            try source.save(contentsOf: SearchFilm.all.prefix(60))
            try store.drop(collection: "films")
            try source.copy(to: store, mode: .replace)
            try expectReferenceRanking(store, Array(SearchFilm.all.prefix(60)))
            try store.save(SearchFilm(id: 1000, title: "Zebra", year: 2020, genre: nil))
            #expect(try store.search(SearchFilm.self, matching: "zebra").map(\.id) == [1000])
        },
        check("search: a copy of some collections, a merge or a replace leaves the destination's index right") {
            fixture,
            directory in
            let store = try filmStore(fixture, directory)
            try store.save(contentsOf: Member.all)
            // A merge of one collection over this engine's indexed films, from another engine:
            // two films retitled, one new.
            let source = try BackendFixture.inMemory.openStore(in: directory.appendingPathComponent("source"))
            var films = SearchFilm.all
            var changed = [
                films[0], films[1], SearchFilm(id: 5000, title: "Zebra Moon Rising", year: 2001, genre: nil),
            ]
            changed[0].title = "Zebra Crossing"
            changed[1].title = "Quiet Zebra Evening"
            try source.save(contentsOf: changed)
            try source.copy(to: store, collections: ["films"], mode: .merge, verifying: false)
            films[0] = changed[0]
            films[1] = changed[1]
            films.append(changed[2])
            #expect(try store.search(SearchFilm.self, matching: "hope").isEmpty)
            #expect(try store.search(SearchFilm.self, matching: "empire").isEmpty)
            #expect(Set(try store.search(SearchFilm.self, matching: "zebra").map(\.id)) == [1, 2, 5000])
            try expectReferenceRanking(store, films)
            // One collection into an empty store of another engine: indexed there too, and
            // verified with the store's other collections left out.
            let copy = try BackendFixture.inMemory.openStore(in: directory.appendingPathComponent("copy"))
            let report = try store.copy(to: copy, collections: ["films"])
            #expect(report.collections.map(\.name) == ["films"])
            try expectReferenceRanking(copy, films)
            // A whole copy verifies, whichever form each engine keeps its index in.
            let whole = try BackendFixture.inMemory.openStore(in: directory.appendingPathComponent("whole"))
            try store.copy(to: whole)
            try store.verify(against: whole)
            try expectReferenceRanking(whole, films)
            // A replace from a source without the index takes the destination's index away.
            let plain = try BackendFixture.inMemory.openStore(in: directory.appendingPathComponent("plain"))
            #expect(
                try plain.insert(dictionaries: [["id": 1, "title": "Zebra", "year": 1, "genre": "x"]], into: "films")
                    == 1
            )
            try plain.copy(to: store, collections: ["films"], mode: .replace)
            expectError(.invalidQuery) { _ = try store.search(in: "films", matching: "zebra") }
            // And a replace from an indexed source brings the source's index alone.
            try source.copy(to: store, collections: ["films"], mode: .replace)
            try expectReferenceRanking(store, changed)
        },
        check("search: a type declaring the index over records stored without one indexes them all at its first save") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            let rows: [[String: Any]] = SearchFilm.all.dropFirst().map { film in
                ["id": film.id, "title": film.title, "year": film.year, "genre": film.genre ?? NSNull()]
            }
            #expect(try store.insert(dictionaries: rows, into: "films") == rows.count)
            expectError(.invalidQuery) { _ = try store.search(in: "films", matching: "star") }
            try store.save(SearchFilm.all[0])
            try expectReferenceRanking(store, SearchFilm.all)
            // The CSV path keeps it too.
            let csv = Data("id,title,year,genre\n5000,Zebra Moon,2001,Drama\n".utf8)
            #expect(try store.insert(csv: csv, into: "films") == 1)
            #expect(try store.search(in: "films", matching: "zebra moon").compactMap { rowID($0) } == [5000])
        },
        check("search: a type that does not declare the index keeps it, in this store and a new one") {
            fixture,
            directory in
            // Another type on the same collection (or an older version of the app) that never
            // declares the index: its saves, overwrites and deletes still keep it.
            let store = try filmStore(fixture, directory)
            var films = SearchFilm.all
            let fresh = ObjectStore(backend: store.backend)
            for writer in [store, fresh] {
                let id = Int64(writer === store ? 7000 : 7001)
                try writer.save(PlainSearchFilm(id: id, title: "Zebra Crossing \(id)", year: 2030, genre: "Drama"))
                films.append(SearchFilm(id: id, title: "Zebra Crossing \(id)", year: 2030, genre: "Drama"))
            }
            #expect(try store.search(SearchFilm.self, matching: "zebra").map(\.id) == [7000, 7001])
            try fresh.save(PlainSearchFilm(id: 1, title: "Quiet Evening", year: 1977, genre: nil))
            films[0] = SearchFilm(id: 1, title: "Quiet Evening", year: 1977, genre: nil)
            #expect(try store.search(SearchFilm.self, matching: "hope").isEmpty)
            #expect(try fresh.delete(PlainSearchFilm.self, id: 7000))
            films.removeAll { $0.id == 7000 }
            try expectReferenceRanking(store, films)
        },
        check("search: a store that wrote without any index keeps one declared later, through any type") {
            fixture,
            directory in
            // The backends may remember that the store keeps no full-text index (LMDB by
            // snapshot, PostgreSQL in its cache, checked at commit): an index declared since,
            // through another store of the same backend, is kept by the next plain saves.
            let store = try fixture.openStore(in: directory)
            for id in Int64(1)...3 {
                try store.save(PlainSearchFilm(id: id, title: "Quiet \(id)", year: 1970, genre: nil))
            }
            let other = ObjectStore(backend: store.backend)
            try other.save(SearchFilm(id: 4, title: "Quiet Zebra", year: 1971, genre: nil))
            try store.save(PlainSearchFilm(id: 5, title: "Zebra Crossing", year: 1972, genre: nil))
            try store.transaction { transaction in
                try transaction.save(PlainSearchFilm(id: 6, title: "Zebra Stripes", year: 1973, genre: nil))
                try transaction.save(PlainSearchFilm(id: 1, title: "Zebra Quiet", year: 1970, genre: nil))
            }
            #expect(try store.search(SearchFilm.self, matching: "zebra").map(\.id).sorted() == [1, 4, 5, 6])
            #expect(try other.search(SearchFilm.self, matching: "quiet").map(\.id).sorted() == [1, 2, 3, 4])
        },
        check("search: malformed queries are .invalidQuery naming the position, on every engine") {
            fixture,
            directory in
            let store = try filmStore(fixture, directory)
            let cases: [(String, Int)] = [
                ("", 1), ("   ", 1), ("\"star wars", 1), ("star OR", 6), ("OR star", 1), ("star OR OR wars", 9),
                ("-", 1), ("-star", 1), ("star -", 6), ("spider-man", 7), ("a*b", 2), ("*", 1), ("(star)", 1),
                ("star \"\"", 6), ("star -wars OR trek", 12), ("\"star\"wars", 7), ("star:wars", 5),
            ]
            for (query, position) in cases {
                let error = expectError(.invalidQuery) { _ = try store.search(SearchFilm.self, matching: query) }
                #expect(
                    error?.message.hasSuffix("at position \(position)") == true,
                    "\(query): \(error?.message ?? "")"
                )
                expectError(.invalidQuery) { _ = try store.search(in: "films", matching: query) }
                expectError(.invalidQuery) { _ = try store.search(in: "never_stored", matching: query) }
            }
            // A collection without a full-text index, a predicate on a missing column, a negative limit.
            try store.save(contentsOf: Member.all)
            expectError(.invalidQuery) { _ = try store.search(Member.self, matching: "ann") }
            expectError(.unknownColumn) {
                _ = try store.search(SearchFilm.self, matching: "star", where: Column("nope") == 1)
            }
            expectError(.misuse) { _ = try store.search(SearchFilm.self, matching: "star", limit: -1) }
            expectError(.invalidIdentifier) { _ = try store.search(in: "bad name!", matching: "star") }
            #expect(try store.search(in: "never_stored", matching: "star").isEmpty)
        },
    ]

    /// The asynchronous full-text search checks.
    public static let searchAsyncChecks: [ConformanceCheck] = [
        asyncCheck("search: the async calls answer as the sync ones") { fixture, directory in
            let store = try filmStore(fixture, directory)
            let sync: [SearchFilm] = try {
                try store.search(SearchFilm.self, matching: "star", where: Column("year") > 1970, limit: 7)
            }()
            let async = try await store.search(
                SearchFilm.self,
                matching: "star",
                where: Column("year") > 1970,
                limit: 7
            )
            #expect(async == sync)
            let rows = try await store.search(in: "films", matching: "lov*")
            #expect(
                rows.count == SearchFilm.all.filter { SearchReference.matches(SearchReference.queries[3], $0) }.count
            )
        }
    ]
}
