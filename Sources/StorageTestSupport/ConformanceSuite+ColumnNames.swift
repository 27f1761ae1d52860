import Foundation
import Storage
import Testing

/// A film as a catalogue's JSON names its fields.
struct RatedFilm: Codable, Equatable, StorableModel {
    static let collectionName = "ratedFilms"
    static let indexes: [IndexDefinition] = [.init(["IMDB Rating"]), .init(["a,b"]), .init(["a", "b"])]
    var id: Int64
    var imdbRating: Double?
    var creativeType: String
    var ab: Int
    var a: Int
    var b: Int

    enum CodingKeys: String, CodingKey {
        case id
        case imdbRating = "IMDB Rating"
        case creativeType = "Creative Type"
        case ab = "a,b"
        case a
        case b
    }
}

extension ConformanceSuite {
    /// Column names real data has, or an attacker might send; every one is a valid column.
    static let acceptedColumnNames: [String] = [
        "IMDB Rating", "Creative Type", "Running Time min", "#", "a/b", "Année", "🎬 title", "a\"b", "a'b",
        "x\"; DROP TABLE members; --", "back\\slash", "100%", "%", "_", "..", "../../etc/passwd", "/abs",
        "sqlite_master", "_hidden", "a\nb", "tab\tname", "\u{202E}rtl\u{200F}", "\"\u{301}", "a:b", "a,b",
        String(repeating: "é", count: 127),
    ]

    static let columnNameChecks: [ConformanceCheck] = [
        check("any key is a column name: stored, queried and read back exactly") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            var row: [String: Any] = ["id": 1]
            for (index, name) in acceptedColumnNames.enumerated() { row[name] = index }
            try store.insert(dictionaries: [row, ["id": 2]], into: "named")
            let back = try store.fetchDictionaries(from: "named", orderBy: [.ascending("id")])
            #expect(back.count == 2)
            #expect(Set(back[0].keys) == Set(acceptedColumnNames + ["id"]))
            for (index, name) in acceptedColumnNames.enumerated() {
                #expect(back[0][name] == .integer(Int64(index)), "\(EscapedName(name))")
                #expect(try store.count(in: "named", where: Column(name) == index) == 1, "\(EscapedName(name))")
            }
            #expect(try store.count(in: "named", where: Column("IMDB Rating") == nil) == 1)

            // Beyond the limit, NUL, and two names equal but for ASCII case: refused, nothing written.
            for name in [String(repeating: "n", count: 256), String(repeating: "n", count: 10_000), "a\0b"] {
                let error = expectError(.invalidIdentifier) {
                    try store.insert(dictionaries: [["id": 3, name: 1]], into: "named")
                }
                #expect(error?.message.unicodeScalars.contains("\0") == false)
            }
            _ = expectError(.schemaMismatch) {
                try store.insert(dictionaries: [["id": 3, "Creative type": "x"]], into: "named")
            }
            let unknown = expectError(.unknownColumn) { _ = try store.count(in: "named", where: Column("x\ny") == 1) }
            #expect(unknown?.message.contains("x\\ny") == true)
            #expect(unknown?.message.contains("\n") == false)
            #expect(try store.count(in: "named") == 2)
        },
        check("a Codable type with CodingKeys round-trips names with spaces and commas, indexed") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            let films = [
                RatedFilm(id: 1, imdbRating: 8.5, creativeType: "Fiction", ab: 1, a: 2, b: 3),
                RatedFilm(id: 2, imdbRating: nil, creativeType: "Factual", ab: 4, a: 5, b: 6),
            ]
            try store.save(contentsOf: films)
            #expect(try store.fetchAll(RatedFilm.self, orderBy: [.ascending("id")]) == films)
            #expect(try store.count(RatedFilm.self, where: Column("IMDB Rating") >= 8) == 1)
            #expect(try store.count(RatedFilm.self, where: Column("a,b") == 4) == 1)
            #expect(try store.count(RatedFilm.self, where: Column("a") == 5 && Column("b") == 6) == 1)
            let dictionaries = try store.fetchDictionaries(from: "ratedFilms", orderBy: [.ascending("id")])
            #expect(dictionaries.first?["Creative Type"] == .text("Fiction"))
        },
    ]
}

/// A name as a test message shows it: escaped, so a failure never prints raw control characters.
private struct EscapedName: CustomStringConvertible {
    let name: String
    init(_ name: String) { self.name = name }
    var description: String { name.unicodeScalars.map { $0.escaped(asASCII: true) }.joined() }
}
