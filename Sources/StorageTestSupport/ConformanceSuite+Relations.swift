import Foundation
import Storage
import Testing

/// An author, referenced by books.
struct RelAuthor: Codable, Equatable, Sendable, StorableModel {
    static let collectionName = "authors"
    var id: Int64
    var name: String
    var country: String
}

/// A book, deleted with its author (`.cascade`).
struct RelBook: Codable, Equatable, Sendable, StorableModel {
    static let collectionName = "books"
    static let references: [Reference] = [Reference("authorID", to: RelAuthor.self, onDelete: .cascade)]
    var id: Int64
    var title: String
    var authorID: Int64?
}

/// A chapter of a book, deleted with it: the second level of a cascade.
struct RelChapter: Codable, Equatable, Sendable, StorableModel {
    static let collectionName = "chapters"
    static let references: [Reference] = [Reference("bookID", to: RelBook.self, onDelete: .cascade)]
    var id: Int64
    var bookID: Int64
}

/// A loan of a book, which keeps the book from being deleted (`.restrict`, the default).
struct RelLoan: Codable, Equatable, Sendable, StorableModel {
    static let collectionName = "loans"
    static let references: [Reference] = [Reference("bookID", to: RelBook.self)]
    var id: Int64
    var bookID: Int64
}

/// A review of a book, kept when the book goes, with no book (`.setNull`).
struct RelReview: Codable, Equatable, Sendable, StorableModel {
    static let collectionName = "reviews"
    static let references: [Reference] = [Reference("bookID", to: RelBook.self, onDelete: .setNull)]
    var id: Int64
    var bookID: Int64?
    var stars: Int
}

/// A node of a ring: each references the next, with `.cascade`, so a delete goes round the cycle.
struct RelNode: Codable, Equatable, Sendable, StorableModel {
    static let collectionName = "nodes"
    static let references: [Reference] = [Reference("nextID", toCollection: "nodes", onDelete: .cascade)]
    var id: Int64
    var nextID: Int64?
}

extension ConformanceSuite {
    static let relationAuthors = [
        RelAuthor(id: 1, name: "Hugo", country: "FR"),
        RelAuthor(id: 2, name: "Tolstoy", country: "RU"),
        RelAuthor(id: 3, name: "Zola", country: "FR"),
    ]
    static let relationBooks = [
        RelBook(id: 10, title: "Les Misérables", authorID: 1),
        RelBook(id: 11, title: "War and Peace", authorID: 2),
        RelBook(id: 12, title: "Notre-Dame", authorID: 1),
        RelBook(id: 13, title: "Anonymous", authorID: nil),
        RelBook(id: 14, title: "Germinal", authorID: 3),
    ]

    /// A store holding the authors and the books, and a chapter for each book.
    static func libraryStore(_ fixture: BackendFixture, _ directory: URL) throws -> ObjectStore {
        let store = try fixture.openStore(in: directory)
        try store.save(contentsOf: relationAuthors)
        try store.save(contentsOf: relationBooks)
        try store.save(contentsOf: relationBooks.map { RelChapter(id: $0.id * 10, bookID: $0.id) })
        return store
    }

    static func bookIDs(_ store: ObjectStore) throws -> [Int64] {
        try store.fetchAll(RelBook.self, orderBy: [.ascending("id")]).map(\.id)
    }

    static func chapterBooks(_ store: ObjectStore) throws -> [Int64] {
        try store.fetchAll(RelChapter.self, orderBy: [.ascending("id")]).map(\.bookID)
    }

    /// The relation checks: references, delete rules, eager loading, sub-queries.
    public static let relationChecks: [ConformanceCheck] = [
        check("a save whose reference names no record is refused, naming collection, column and key") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: relationAuthors)
            let error = expectError(.constraintViolation) { try store.save(RelBook(id: 1, title: "x", authorID: 99)) }
            #expect(error?.collection == "books")
            #expect(error?.column == "authorID")
            #expect(error?.key == .integer(1))
            #expect(error?.message.contains("99") == true)
            // A batch with one bad reference writes none of its records.
            expectError(.constraintViolation) {
                try store.save(contentsOf: [
                    RelBook(id: 2, title: "ok", authorID: 1), RelBook(id: 3, title: "bad", authorID: 42),
                ])
            }
            #expect(try store.count(RelBook.self) == 0)
            // A null reference is allowed; a good one is written.
            try store.save(RelBook(id: 4, title: "anonymous", authorID: nil))
            try store.save(RelBook(id: 5, title: "good", authorID: 2))
            #expect(try bookIDs(store) == [4, 5])
            // The referencing column has an index of its own.
            let schema = try #require(try store.schema(of: "books"))
            #expect(schema.indexes.contains { $0.columns == ["authorID"] })
        },
        check("untyped writes and updates by a store that never saw the model check the stored references") {
            fixture,
            directory in
            let store = try libraryStore(fixture, directory)
            let other = ObjectStore(backend: store.backend)
            let error = expectError(.constraintViolation) {
                try other.insert(
                    dictionaries: [["id": 20, "title": "t", "authorID": 1], ["id": 21, "authorID": 42]],
                    into: "books"
                )
            }
            #expect(error?.column == "authorID")
            #expect(error?.key == .integer(21))
            expectError(.constraintViolation) {
                _ = try other.insert(csv: Data("id,title,authorID\n22,t,7\n".utf8), into: "books")
            }
            expectError(.constraintViolation) {
                _ = try other.update(in: "books", set: ["authorID": 42], where: Column("id") == 10)
            }
            expectError(.constraintViolation) {
                _ = try store.update(RelBook.self, set: ["authorID": 42], where: nil)
            }
            #expect(try bookIDs(store) == [10, 11, 12, 13, 14])
            #expect(try store.fetch(RelBook.self, id: 10)?.authorID == 1)
            try other.insert(
                dictionaries: [["id": 20, "title": "t", "authorID": 2], ["id": 21, "title": "u"]],
                into: "books"
            )
            #expect(try other.update(in: "books", set: ["authorID": 3], where: Column("id") == 21) == 1)
            #expect(try store.fetch(RelBook.self, id: 21)?.authorID == 3)
        },
        check("a reference to a record saved earlier in the same transaction is accepted, one deleted is not") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.transaction { tx in
                try tx.save(RelAuthor(id: 7, name: "New", country: "FR"))
                try tx.save(RelBook(id: 70, title: "first", authorID: 7))
            }
            #expect(try bookIDs(store) == [70])
            expectError(.constraintViolation) {
                try store.transaction { tx in
                    try tx.save(RelAuthor(id: 8, name: "Gone", country: "FR"))
                    try tx.delete(RelAuthor.self, id: 8)
                    try tx.save(RelBook(id: 80, title: "orphan", authorID: 8))
                }
            }
            #expect(try bookIDs(store) == [70])
            #expect(try store.fetch(RelAuthor.self, id: 8) == nil)
        },
        check("cascade deletes the referencing records two levels deep, by key, where and untyped") {
            fixture,
            directory in
            let store = try libraryStore(fixture, directory)
            #expect(try store.delete(RelAuthor.self, id: 1))
            #expect(try bookIDs(store) == [11, 13, 14])
            #expect(try chapterBooks(store) == [11, 13, 14])
            #expect(try store.deleteAll(RelAuthor.self, where: Column("country") == "RU") == 1)
            #expect(try bookIDs(store) == [13, 14])
            #expect(try chapterBooks(store) == [13, 14])
            #expect(try store.deleteAll(from: "authors") == 1)
            #expect(try bookIDs(store) == [13])
            #expect(try chapterBooks(store) == [13])
            #expect(try store.delete(RelAuthor.self, id: 1) == false)
            #expect(try store.count(RelAuthor.self) == 0)
        },
        check("restrict refuses the delete with a constraint violation and deletes nothing") {
            fixture,
            directory in
            let store = try libraryStore(fixture, directory)
            try store.save(RelLoan(id: 1, bookID: 12))
            let error = expectError(.constraintViolation) { try store.delete(RelAuthor.self, id: 1) }
            #expect(error?.collection == "loans")
            #expect(error?.column == "bookID")
            #expect(error?.key == .integer(1))
            expectError(.constraintViolation) { try store.delete(RelBook.self, id: 12) }
            expectError(.constraintViolation) { try store.deleteAll(from: "books") }
            expectError(.constraintViolation) { _ = try store.drop(collection: "books") }
            #expect(try store.count(RelAuthor.self) == 3)
            #expect(try bookIDs(store) == [10, 11, 12, 13, 14])
            #expect(try store.count(RelChapter.self) == 5)
            // Once the loan is gone the delete goes through.
            try store.delete(RelLoan.self, id: 1)
            #expect(try store.delete(RelAuthor.self, id: 1))
            #expect(try bookIDs(store) == [11, 13, 14])
        },
        check("setNull empties the referencing column and keeps the record") { fixture, directory in
            let store = try libraryStore(fixture, directory)
            try store.save(contentsOf: [
                RelReview(id: 1, bookID: 10, stars: 5), RelReview(id: 2, bookID: 11, stars: 3),
                RelReview(id: 3, bookID: 12, stars: 4),
            ])
            try store.delete(RelAuthor.self, id: 1)  // books 10 and 12 go by cascade
            let reviews = try store.fetchAll(RelReview.self, orderBy: [.ascending("id")])
            #expect(
                reviews == [
                    RelReview(id: 1, bookID: nil, stars: 5), RelReview(id: 2, bookID: 11, stars: 3),
                    RelReview(id: 3, bookID: nil, stars: 4),
                ]
            )
        },
        check("a cascade round a cycle deletes the ring once and ends") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(RelNode(id: 1, nextID: nil))
            try store.save(RelNode(id: 2, nextID: 1))
            try store.save(RelNode(id: 3, nextID: 2))
            try store.save(RelNode(id: 1, nextID: 3))  // closes the ring
            try store.save(RelNode(id: 4, nextID: 4))  // a record may reference itself
            try store.save(RelNode(id: 5, nextID: nil))
            #expect(try store.delete(RelNode.self, id: 2))
            #expect(try store.fetchAll(RelNode.self).map(\.id) == [4, 5])
            #expect(try store.deleteAll(RelNode.self, where: Column("id") == 4) == 1)
            #expect(try store.fetchAll(RelNode.self).map(\.id) == [5])
        },
        check("drop applies the delete rules to every record of the collection") { fixture, directory in
            let store = try libraryStore(fixture, directory)
            #expect(try store.drop(collection: "authors"))
            #expect(try bookIDs(store) == [13])
            #expect(try chapterBooks(store) == [13])
            // The dropped referencing collection's rules go with it.
            #expect(try store.drop(collection: "chapters"))
            try store.delete(RelBook.self, id: 13)
            #expect(try store.count(RelBook.self) == 0)
        },
        check("an untyped delete by another store that never saw the models applies the stored rules") {
            fixture,
            directory in
            let store = try libraryStore(fixture, directory)
            let other = ObjectStore(backend: store.backend)
            #expect(try other.deleteAll(from: "authors", where: Column("id") == 3) == 1)
            #expect(try bookIDs(store) == [10, 11, 12, 13])
            #expect(try chapterBooks(store) == [10, 11, 12, 13])
            // A copy carries the rules to another store.
            let copy = try BackendFixture.inMemory.openStore(in: directory.appendingPathComponent("copy"))
            try store.copy(to: copy)
            #expect(try copy.deleteAll(from: "authors", where: Column("id") == 2) == 1)
            #expect(try copy.fetchAll(RelBook.self).map(\.id) == [10, 12, 13])
            #expect(try bookIDs(store) == [10, 11, 12, 13])
        },
        check("eager loading reads one query per level, with where and orderBy") { fixture, directory in
            let store = try libraryStore(fixture, directory)
            let counting = CountingStorageBackend(store.backend)
            let counted = ObjectStore(backend: counting)
            var before = counting.readCount
            let pairs = try counted.fetchAll(RelBook.self, including: RelAuthor.self, via: "authorID")
            #expect(counting.readCount - before == 2)
            #expect(pairs.map(\.0) == relationBooks.sorted { $0.id < $1.id })
            #expect(pairs.map { $0.1?.name } == ["Hugo", "Tolstoy", "Hugo", nil, "Zola"])
            before = counting.readCount
            let groups = try counted.fetchAll(
                RelAuthor.self,
                where: Column("country") == "FR",
                orderBy: [.descending("name")],
                includingAll: RelBook.self,
                via: "authorID"
            )
            #expect(counting.readCount - before == 2)
            #expect(groups.map(\.0.name) == ["Zola", "Hugo"])
            #expect(groups.map { $0.1.map(\.id) } == [[14], [10, 12]])
            let some = try counted.fetchAll(
                RelBook.self,
                where: Column("id") >= 12,
                orderBy: [.descending("title")],
                including: RelAuthor.self,
                via: "authorID"
            )
            #expect(some.map(\.0.id) == [12, 14, 13])
            #expect(some.map { $0.1?.id } == [1, 3, nil])
            expectError(.unknownColumn) {
                _ = try store.fetchAll(RelBook.self, including: RelAuthor.self, via: "writerID")
            }
            expectError(.unknownColumn) {
                _ = try store.fetchAll(RelAuthor.self, includingAll: RelBook.self, via: "writerID")
            }
            // In a transaction too.
            let inside = try store.read { tx in
                try tx.fetchAll(RelAuthor.self, includingAll: RelChapter.self, via: "bookID")
            }
            #expect(inside.count == 3)
        },
        check("a sub-query selects by the keys of another collection's matching records, anywhere") {
            fixture,
            directory in
            let store = try libraryStore(fixture, directory)
            let french = Column("authorID").in(RelAuthor.self, where: Column("country") == "FR")
            #expect(try store.fetchAll(RelBook.self, where: french).map(\.id) == [10, 12, 14])
            #expect(try store.count(RelBook.self, where: french && Column("id") > 10) == 2)
            #expect(try store.fetchAll(RelBook.self, where: !french).map(\.id) == [11])  // NOT IN skips null
            #expect(try store.count(in: "books", where: Column("authorID").in(RelAuthor.self, where: nil)) == 4)
            // A sub-query of a sub-query, and one over a collection that does not exist.
            let frenchChapters = Column("bookID").in(RelBook.self, where: french)
            #expect(try store.fetchAll(RelChapter.self, where: frenchChapters).map(\.id) == [100, 120, 140])
            #expect(try store.count(RelBook.self, where: Column("id").in(collection: "nothing", where: nil)) == 0)
            expectError(.unknownColumn) {
                _ = try store.fetchAll(
                    RelBook.self,
                    where: Column("authorID").in(RelAuthor.self, where: Column("nope") == 1)
                )
            }
            // Deletes and updates take one too.
            #expect(try store.update(RelBook.self, set: ["title": "fr"], where: french) == 3)
            #expect(try store.deleteAll(RelChapter.self, where: frenchChapters) == 3)
            #expect(try chapterBooks(store) == [11, 13])
        },
    ]

    /// The asynchronous relation checks: observers of a cascade, async eager loading.
    public static let relationAsyncChecks: [ConformanceCheck] = [
        asyncCheck("observers see every key a delete removed or emptied, in every collection") { fixture, directory in
            let store = try libraryStore(fixture, directory)
            try await store.save(RelReview(id: 1, bookID: 10, stars: 5))
            var authors = store.changes(of: RelAuthor.self).makeAsyncIterator()
            var books = store.changes(of: RelBook.self).makeAsyncIterator()
            var chapters = store.changes(of: RelChapter.self).makeAsyncIterator()
            var reviews = store.changes(of: RelReview.self).makeAsyncIterator()
            try await store.delete(RelAuthor.self, id: 1)
            #expect(await authors.next()?.deleted == [.integer(1)])
            #expect(Set(await books.next()?.deleted ?? []) == [.integer(10), .integer(12)])
            #expect(Set(await chapters.next()?.deleted ?? []) == [.integer(100), .integer(120)])
            #expect(await reviews.next()?.upserted == [.integer(1)])
            let pairs = try await store.fetchAll(RelBook.self, including: RelAuthor.self, via: "authorID")
            #expect(pairs.map(\.0.id) == [11, 13, 14])
            let groups = try await store.fetchAll(RelAuthor.self, includingAll: RelBook.self, via: "authorID")
            #expect(groups.map { $0.1.count } == [1, 1])
        }
    ]
}
