import Foundation
import Storage
import Testing

/// `RelAuthor` with one more property, in the same collection: what `transform` makes of it.
struct RelAuthorV2: Codable, Equatable, Sendable, StorableModel {
    static let collectionName = "authors"
    var id: Int64
    var name: String
    var country: String
    var born: Int?
}

extension ConformanceSuite {
    /// Two authors with two books each, a chapter and a loan of book 1.
    static func saveLibrary(_ store: ObjectStore) throws {
        try store.save(contentsOf: [
            RelAuthor(id: 1, name: "Ann", country: "FR"), RelAuthor(id: 2, name: "Bo", country: "SE"),
        ])
        try store.save(contentsOf: (1...4).map { RelBook(id: $0, title: "b\($0)", authorID: ($0 + 1) / 2) })
        try store.save(RelChapter(id: 1, bookID: 3))
    }

    /// Migrations and references: renames and transforms keep them, `addReference` adds one
    /// after checking the records; indexes on nested fields survive renames.
    public static let migrationReferenceChecks: [ConformanceCheck] = [
        check("renaming a referencing column or a collection keeps the references and their rules") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try saveLibrary(store)
            var migrator = Migrator()
            migrator.register("1-column") { m in try m.renameColumn("authorID", to: "writerID", in: "books") }
            migrator.register("2-target") { m in try m.renameCollection("authors", to: "writers") }
            migrator.register("3-source") { m in try m.renameCollection("books", to: "volumes") }
            #expect(try migrator.migrate(store) == ["1-column", "2-target", "3-source"])
            #expect(try store.references(of: "books") == [])
            #expect(
                try store.references(of: "volumes") == [
                    Reference("writerID", toCollection: "writers", onDelete: .cascade)
                ]
            )
            #expect(
                try store.references(of: "chapters") == [
                    Reference("bookID", toCollection: "volumes", onDelete: .cascade)
                ]
            )
            // The rules still apply, two levels deep, under the new names: author 2 takes books
            // 3 and 4 with it, and book 3 its chapter.
            try store.close()
            let reopened = try fixture.openStore(in: directory)
            #expect(try reopened.deleteAll(from: "writers", where: Column("id") == 2) == 1)
            #expect(
                try reopened.fetchDictionaries(from: "volumes").compactMap { $0["id"] } == [.integer(1), .integer(2)]
            )
            #expect(try reopened.count(in: "chapters") == 0)
            // A save naming no writer is refused in the renamed column.
            #expect(throws: StorageError.self) {
                try reopened.insert(dictionaries: [["id": 9, "title": "x", "writerID": 7]], into: "volumes")
            }
            #expect(try reopened.count(in: "volumes") == 2)
        },
        check("dropping a referencing column drops its reference") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try saveLibrary(store)
            var migrator = Migrator()
            migrator.register("1-drop") { m in try m.dropColumn("authorID", from: "books") }
            _ = try migrator.migrate(store)
            #expect(try store.references(of: "books") == [])
            #expect(try store.deleteAll(from: "authors", where: nil) == 2)
            #expect(try store.count(in: "books") == 4)
        },
        check("transforming a referenced collection deletes nothing that references it") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try saveLibrary(store)
            try store.save(RelLoan(id: 1, bookID: 1))
            var migrator = Migrator()
            migrator.register("1-authors") { m in
                try m.transform(RelAuthor.self, to: RelAuthorV2.self) {
                    RelAuthorV2(id: $0.id, name: $0.name, country: $0.country, born: 1900)
                }
            }
            // Books cascade and a loan restricts: a drop of the authors would delete every book,
            // and one of books would be refused. Neither happens.
            migrator.register("2-books") { m in
                try m.transform(RelBook.self, to: RelBook.self) {
                    RelBook(id: $0.id, title: $0.title + "!", authorID: $0.authorID)
                }
            }
            #expect(try migrator.migrate(store) == ["1-authors", "2-books"])
            #expect(
                try store.fetchAll(RelBook.self, orderBy: [.ascending("id")]).map(\.title) == [
                    "b1!", "b2!", "b3!", "b4!",
                ]
            )
            #expect(try store.count(RelChapter.self) == 1 && store.count(RelLoan.self) == 1)
            #expect(try store.fetchAll(RelAuthorV2.self).allSatisfy { $0.born == 1900 })
            #expect(try store.references(of: "books") == RelBook.references)
            #expect(try store.references(of: "loans") == RelLoan.references)
            // The rules hold after the transform: author 2's books go, with book 3's chapter.
            #expect(try store.delete(RelAuthorV2.self, id: 2))
            #expect(try store.count(RelBook.self) == 2 && store.count(RelChapter.self) == 0)
        },
        check("a transform whose records get new keys is refused while a collection references them") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: [MigratedNote(text: "a"), MigratedNote(text: "b")])
            try store.insert(dictionaries: [["id": 1, "noteKey": 2]], into: "pets")
            var migrator = Migrator()
            migrator.register("1-ref") { m in
                try m.addReference(Reference("noteKey", toCollection: "mig_notes"), to: "pets")
            }
            migrator.register("2-transform") { m in try m.transform(MigratedNote.self, to: MigratedNote.self) { $0 } }
            let error = #expect(throws: StorageError.self) { try migrator.migrate(store) }
            #expect(error?.code == .schemaMismatch && error?.collection == "mig_notes")
            #expect(try migrator.appliedMigrations(in: store) == ["1-ref"])
            #expect(try store.count(in: "mig_notes") == 2 && store.count(in: "pets") == 1)
            #expect(try store.references(of: "pets") == [Reference("noteKey", toCollection: "mig_notes")])
        },
        check("addReference checks the stored records, adds an index and then holds like a declared one") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.insert(dictionaries: [["id": 1, "name": "a"], ["id": 2, "name": "b"]], into: "owners")
            try store.insert(
                dictionaries: [["id": 1, "ownerID": 1], ["id": 2, "ownerID": 3], ["id": 3]],
                into: "pets"
            )
            var migrator = Migrator()
            migrator.register("1-ref") { m in
                try m.addReference(Reference("OwnerID", toCollection: "owners", onDelete: .restrict), to: "pets")
            }
            let error = #expect(throws: StorageError.self) { try migrator.migrate(store) }
            #expect(error?.code == .constraintViolation && error?.key == .integer(2) && error?.column == "ownerID")
            #expect(try store.references(of: "pets") == [] && migrator.appliedMigrations(in: store) == [])
            try store.update(in: "pets", set: ["ownerID": 2], where: Column("id") == 2)
            #expect(try migrator.migrate(store) == ["1-ref"])
            #expect(try store.references(of: "pets") == [Reference("ownerID", toCollection: "owners")])
            #expect(try store.schema(of: "pets")?.indexes == [IndexDefinition(["ownerID"])])
            let restricted = #expect(throws: StorageError.self) {
                try store.deleteAll(from: "owners", where: Column("id") == 2)
            }
            #expect(restricted?.code == .constraintViolation)
            #expect(try store.count(in: "owners") == 2)
            var changed = Migrator()
            changed.register("1-ref") { _ in }
            changed.register("2-same") { m in
                // The same reference again changes nothing; another rule replaces it.
                guard try !m.addReference(Reference("ownerID", toCollection: "owners"), to: "pets"),
                    try m.addReference(Reference("ownerID", toCollection: "owners", onDelete: .setNull), to: "pets")
                else { throw StorageError(.misuse, "addReference answered wrongly") }
            }
            #expect(try changed.migrate(store) == ["2-same"])
            #expect(try store.deleteAll(from: "owners", where: Column("id") == 2) == 1)
            #expect(try store.fetchDictionaries(from: "pets", where: Column("id") == 2).first?["ownerID"] == .null)
            let unknown = #expect(throws: StorageError.self) {
                var bad = Migrator()
                bad.register("1-ref") { _ in }
                bad.register("2-same") { _ in }
                bad.register("3-bad") { m in
                    try m.addReference(Reference("nothing", toCollection: "owners"), to: "pets")
                }
                try bad.migrate(store)
            }
            #expect(unknown?.code == .unknownColumn)
        },
        check("schema changes carry the full-text index: renames, a dropped field, a transform") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: SearchFilm.all)
            let titles = { (rows: [[String: StorageValue]]) in rows.compactMap { $0["id"] } }
            let wars = titles(try store.search(in: "films", matching: "star wars"))
            let dramas = titles(try store.search(in: "films", matching: "drama"))
            #expect(!wars.isEmpty && !dramas.isEmpty)
            var migrator = Migrator()
            migrator.register("1-column") { m in try m.renameColumn("title", to: "name", in: "films") }
            migrator.register("2-collection") { m in try m.renameCollection("films", to: "movies") }
            #expect(try migrator.migrate(store) == ["1-column", "2-collection"])
            // The same matches, in the same order, under the new names; the old name has none.
            #expect(titles(try store.search(in: "movies", matching: "star wars")) == wars)
            #expect(titles(try store.search(in: "movies", matching: "drama")) == dramas)
            #expect(try store.search(in: "films", matching: "star wars").isEmpty)
            // A save under the new names is indexed.
            try store.insert(dictionaries: [["id": 9_999, "name": "Zyzzyva Special", "year": 1978]], into: "movies")
            #expect(titles(try store.search(in: "movies", matching: "zyzzyva")) == [.integer(9_999)])
            // A dropped field leaves the index; the other stays searchable.
            var dropping = Migrator()
            dropping.register("1-column") { _ in }
            dropping.register("2-collection") { _ in }
            dropping.register("3-drop") { m in try m.dropColumn("genre", from: "movies") }
            _ = try dropping.migrate(store)
            #expect(try store.search(in: "movies", matching: "drama").isEmpty)
            #expect(titles(try store.search(in: "movies", matching: "zyzzyva")) == [.integer(9_999)])
            // A transform to a type that declares the index indexes the new records only.
            try store.save(contentsOf: SearchFilm.all.prefix(3))
            var transforming = Migrator()
            for name in ["1-column", "2-collection", "3-drop"] { transforming.register(name) { _ in } }
            transforming.register("4-transform") { m in
                try m.transform(SearchFilm.self, to: SearchFilm.self) { film in
                    var renamed = film
                    renamed.title = "Renamed \(film.id)"
                    return renamed
                }
            }
            _ = try transforming.migrate(store)
            #expect(try store.search(SearchFilm.self, matching: "star").isEmpty)
            #expect(try store.search(SearchFilm.self, matching: "renamed").map(\.id) == [1, 2, 3])
        },
        check("renames keep the indexes on nested fields the engine keeps") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(
                contentsOf: (1...20).map {
                    IndexedResident(
                        id: $0,
                        age: Int($0),
                        address: NestedAddress(city: "c\($0 % 3)", zip: Int($0))
                    )
                }
            )
            let before = try #require(try store.schema(of: "indexed_residents")).indexes
            var migrator = Migrator()
            migrator.register("1-age") { m in try m.renameColumn("age", to: "years", in: "indexed_residents") }
            migrator.register("2-move") { m in try m.renameCollection("indexed_residents", to: "moved_residents") }
            migrator.register("3-address") { m in try m.renameColumn("address", to: "home", in: "moved_residents") }
            _ = try migrator.migrate(store)
            let expected = before.map { index -> IndexDefinition in
                var renamed = index
                renamed.columns = index.columns.map { ["age": "years", "address": "home"][$0] ?? $0 }
                return renamed
            }
            #expect(Set(try #require(try store.schema(of: "moved_residents")).indexes) == Set(expected))
            #expect(try store.count(in: "moved_residents", where: Column("home", "city") == "c1") == 7)
        },
    ]
}
