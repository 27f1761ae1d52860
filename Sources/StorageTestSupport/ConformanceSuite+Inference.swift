import Foundation
import Storage
import Testing

/// A film as the typed side of an app reads the untyped catalogue.
struct CatalogueFilm: Codable, Equatable {
    var id: Int64
    var title: String?
    var rating: String?

    enum CodingKeys: String, CodingKey {
        case id
        case title = "Title"
        case rating = "Rating"
    }
}

/// A typed reader of a column widened from integer to text.
struct CodeReading: Codable, StorableModel {
    static let collectionName = "codes"
    var id: Int64
    var code: Int
}

extension ConformanceSuite {
    static let inferenceChecks: [ConformanceCheck] = [
        check("column types come from the whole batch: any order gives the same schema and reads") {
            fixture,
            directory in
            let rows: [[String: Any]] = [
                ["id": 1, "Title": 1776, "Rating": 7],
                ["id": 2, "Title": "Alien", "Rating": 8.5, "Budget": 11],
                ["id": 3, "Title": "Up", "Rating": "N/A"],
                ["id": 4, "Title": NSNull(), "Rating": 0.1 + 0.2, "Budget": 2.5, "Awards": [1, 2]],
            ]
            let orders = [rows, rows.reversed(), [rows[2], rows[0], rows[3], rows[1]]]
            var results: [[[String: StorageValue]]] = []
            for (index, order) in orders.enumerated() {
                // Each order in a store of its own, under the one name the typed model reads.
                let folder = directory.appendingPathComponent("order\(index)", isDirectory: true)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let store = try fixture.openStore(in: folder)
                try store.insert(dictionaries: order, into: "CatalogueFilm")
                results.append(try store.fetchDictionaries(from: "CatalogueFilm", orderBy: [.ascending("id")]))
                let typed = try store.fetchAll(CatalogueFilm.self, orderBy: [.ascending("id")])
                #expect(typed.map(\.title) == ["1776", "Alien", "Up", nil])
                #expect(typed.map(\.rating) == ["7", "8.5", "N/A", "0.30000000000000004"])
            }
            #expect(results[1] == results[0])
            #expect(results[2] == results[0])
            #expect(results[0].map { $0["Title"] } == [.text("1776"), .text("Alien"), .text("Up"), .null])
            #expect(results[0].map { $0["Budget"] } == [.null, .real(11), .null, .real(2.5)])
            #expect(results[0].map { $0["Awards"] } == [.null, .null, .null, .text("[1,2]")])
        },
        check("a later batch widens integer to text, rebuilding the column; a mixed column names the record") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.insert(jsonArray: Data(#"[{"id": 1, "code": 10}, {"id": 2, "code": 20}]"#.utf8), into: "codes")
            try store.insert(jsonArray: Data(#"[{"id": 3, "code": "A7"}]"#.utf8), into: "codes")
            let codes = try store.fetchDictionaries(from: "codes", orderBy: [.ascending("id")]).map { $0["code"] }
            #expect(codes == [.text("10"), .text("20"), .text("A7")])
            #expect(try store.count(in: "codes", where: Column("code") == "20") == 1)

            // The integer property still reads the digits; the record that is not a number is named.
            let error = expectError(.typeMismatch) { _ = try store.fetchAll(CodeReading.self) }
            #expect(error?.column == "code")
            #expect(error?.key == .integer(3))
            #expect(error?.message.contains("record 3") == true)

            // A real column stays real (SQLite would shorten its digits as text, PostgreSQL's
            // column cannot hold both): text arriving there is refused, and nothing is written.
            try store.insert(jsonArray: Data(#"[{"id": 1, "n": 1.5}]"#.utf8), into: "mixed")
            let refused = expectError(.schemaMismatch) {
                try store.insert(jsonArray: Data(#"[{"id": 2, "n": 2}, {"id": 3, "n": "many"}]"#.utf8), into: "mixed")
            }
            #expect(refused?.column == "n")
            #expect(refused?.message.contains("real") == true)
            #expect(try store.count(in: "mixed") == 1)
            // Integers in a real column and numbers in a text column fit.
            try store.insert(jsonArray: Data(#"[{"id": 2, "n": 2}]"#.utf8), into: "mixed")
            try store.insert(jsonArray: Data(#"[{"id": 4, "code": 40}, {"id": 5, "code": 0.5}]"#.utf8), into: "codes")
            let more = try store.fetchDictionaries(from: "codes", where: Column("id") >= 4, orderBy: [.ascending("id")])
            #expect(more.map { $0["code"] } == [.text("40"), .text("0.5")])
            #expect(
                try store.fetchDictionaries(from: "mixed", orderBy: [.ascending("id")]).map { $0["n"] } == [
                    .real(1.5), .real(2),
                ]
            )

            // A blob beside other values in one column has no column type that holds both.
            let blob = expectError(.schemaMismatch) {
                try store.insert(dictionaries: [["id": 1, "b": Data([1])], ["id": 2, "b": "x"]], into: "blobs")
            }
            #expect(blob?.column == "b")
            #expect(try store.count(in: "blobs") == 0)
        },
    ]
}
