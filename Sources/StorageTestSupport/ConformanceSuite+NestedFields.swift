import Foundation
import Storage
import Testing

/// A value of any JSON kind, so one field holds numbers in some records and text in others.
enum NestedFlex: Codable, Equatable {
    case integer(Int)
    case real(Double)
    case text(String)
    case flag(Bool)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            self = .flag(flag)
        } else if let integer = try? container.decode(Int.self) {
            self = .integer(integer)
        } else if let real = try? container.decode(Double.self) {
            self = .real(real)
        } else {
            self = .text(try container.decode(String.self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .integer(let value): try container.encode(value)
        case .real(let value): try container.encode(value)
        case .text(let value): try container.encode(value)
        case .flag(let value): try container.encode(value)
        }
    }
}

struct NestedGeo: Codable, Equatable {
    var lat: Double
    var label: String?
}

struct NestedAddress: Codable, Equatable {
    var city: String?
    var zip: Int?
    var verified: Bool?
    var geo: NestedGeo?
    var tags: [String]?
    /// Keys that are hard to put in a JSON path; a `nil` value is written as JSON `null`.
    var extra: [String: String?]?
    var flex: NestedFlex?
}

/// A model with a nested `Codable` value, stored as JSON text in the column `address`.
struct Resident: Codable, Equatable, StorableModel {
    static let collectionName = "residents"
    var id: Int64
    var age: Int
    var address: NestedAddress?
    var note: String?

    static let longKey = String(repeating: "k", count: 1_000)

    static let all: [Resident] = [
        Resident(
            id: 1,
            age: 40,
            address: NestedAddress(
                city: "Oslo",
                zip: 150,
                verified: true,
                geo: NestedGeo(lat: 59.9, label: "n"),
                tags: ["a", "b"],
                extra: ["a.b": "dot", "$": "dollar"],
                flex: .integer(5)
            ),
            note: "{not json"
        ),
        Resident(
            id: 2,
            age: 25,
            address: NestedAddress(
                city: "Bergen",
                zip: 5003,
                verified: false,
                geo: NestedGeo(lat: 60.4),
                extra: ["[0]": "bracket", "it's": "apostrophe"],
                flex: .text("five")
            ),
            note: "Oslo"
        ),
        Resident(id: 3, age: 33, address: NestedAddress(city: "oslo", flex: .real(4.5)), note: #"{"x": 1}"#),
        Resident(id: 4, age: 50, address: nil, note: nil),
        Resident(
            id: 5,
            age: 61,
            address: NestedAddress(zip: 0, verified: true, extra: ["k": nil], flex: .flag(true)),
            note: nil
        ),
        Resident(
            id: 6,
            age: 19,
            address: NestedAddress(city: "Ålesund", zip: 6002, geo: NestedGeo(lat: -1.5), flex: .text("")),
            note: nil
        ),
        Resident(
            id: 7,
            age: 45,
            address: NestedAddress(city: "Oslo", zip: 151, verified: false, extra: [longKey: "long"], flex: .real(5)),
            note: nil
        ),
        Resident(
            id: 8,
            age: 70,
            address: NestedAddress(
                city: "Trondheim",
                zip: 7010,
                geo: NestedGeo(lat: 63.4, label: "x"),
                flex: .integer(-3)
            ),
            note: nil
        ),
    ]
}

/// `Resident` with an index on a nested field, in its own collection.
struct IndexedResident: Codable, Equatable, StorableModel {
    static let collectionName = "indexed_residents"
    static let indexes: [IndexDefinition] = [IndexDefinition(nested: "address", "city"), IndexDefinition(["age"])]
    var id: Int64
    var age: Int
    var address: NestedAddress?
}

/// A nested index no engine may accept: a path into an integer column.
struct BadlyIndexedResident: Codable, StorableModel {
    static let collectionName = "badly_indexed"
    static let indexes: [IndexDefinition] = [IndexDefinition(nested: "age", "x")]
    var id: Int64
    var age: Int
}

/// A nested index marked unique, which no engine may accept either.
struct UniquelyIndexedResident: Codable, StorableModel {
    static let collectionName = "uniquely_indexed"
    static var indexes: [IndexDefinition] {
        var index = IndexDefinition(nested: "address", "city")
        index.isUnique = true
        return [index]
    }
    var id: Int64
    var address: NestedAddress?
}

extension ConformanceSuite {
    /// Fields inside nested `Codable` values (JSON text): `Column("address", "city")` in filters
    /// and orderings, with the same answers on every engine.
    public static let nestedFieldChecks: [ConformanceCheck] = [
        check("nested fields: comparisons, null and missing, IN, LIKE, negation and plain columns") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Resident.all)
            func expect(
                _ predicate: StoragePredicate,
                _ expected: [Int64],
                sourceLocation: SourceLocation = #_sourceLocation
            ) throws {
                let found = try store.fetchAll(Resident.self, where: predicate).map(\.id)
                #expect(found == expected, "\(predicate)", sourceLocation: sourceLocation)
                let count = try store.count(Resident.self, where: predicate)
                #expect(count == expected.count, "count of \(predicate)", sourceLocation: sourceLocation)
            }
            let city = Column("address", "city")
            let zip = Column("address", "zip")
            // The contract's spelling.
            try expect(Column("address", "city") == "Oslo", [1, 7])
            try expect(city != "Oslo", [2, 3, 6, 8])
            try expect(!(city == "Oslo"), [2, 3, 6, 8])
            // Missing (3 has no zip), JSON null and a null column all read as null.
            try expect(city == nil, [4, 5])
            try expect(city != nil, [1, 2, 3, 6, 7, 8])
            try expect(zip == nil, [3, 4])
            try expect(zip > 1000, [2, 6, 8])
            try expect(zip >= 150 && zip < 5003, [1, 7])
            try expect(zip <= 0, [5])
            try expect(zip > 150.5, [2, 6, 7, 8])
            try expect(zip == 151.0, [7])
            // Numbers sort before text, as elsewhere.
            try expect(zip < "a", [1, 2, 5, 6, 7, 8])
            try expect(city > 5, [1, 2, 3, 6, 7, 8])
            try expect(city.in(["Oslo", "Bergen"]), [1, 2, 7])
            try expect(!city.in(["Oslo", "Bergen"]), [3, 6, 8])
            try expect(zip.in([150, 7010]), [1, 8])
            // LIKE folds ASCII case only.
            try expect(city.like("o%"), [1, 3, 7])
            try expect(!city.like("%o%"), [2, 6])
            // Booleans are the integers 1 and 0.
            try expect(Column("address", "verified") == true, [1, 5])
            try expect(Column("address", "verified") == 0, [2, 7])
            // Two levels down.
            try expect(Column("address", "geo", "lat") > 60, [2, 8])
            try expect(Column("address", "geo", "label") == nil, [2, 3, 4, 5, 6, 7])
            try expect(Column("address", "geo", "lat", "deeper") == nil, [1, 2, 3, 4, 5, 6, 7, 8])
            // Arrays and objects read as their JSON text.
            try expect(Column("address", "tags") == #"["a","b"]"#, [1])
            try expect(Column("address", "geo").like(#"%"lat":6%"#), [2, 8])
            // A field holding numbers, text and a boolean: every class compares by SQLite's rules.
            let flex = Column("address", "flex")
            try expect(flex == 5, [1, 7])
            try expect(flex >= 4.5, [1, 2, 3, 6, 7])
            try expect(flex < 2, [5, 8])
            try expect(flex == "", [6])
            // With plain columns, in both orders and under OR.
            try expect(Column("age") > 30 && city == "Oslo", [1, 7])
            try expect(city == "Bergen" || Column("age") >= 61, [2, 5, 8])
            try expect(!(Column("age") < 30 || zip == nil), [1, 5, 7, 8])
            // A text column that is not JSON reads every field as null.
            try expect(Column("note", "x") == nil, [1, 2, 3, 4, 5, 6, 7, 8].filter { $0 != 3 })
            try expect(Column("note", "x") == 1, [3])
            #expect(try store.deleteAll(Resident.self, where: city == "Oslo" && zip > 150) == 1)
            #expect(try store.fetchAll(Resident.self, where: city == "Oslo").map(\.id) == [1])
        },
        check("nested fields: ordering (nulls first, numbers before text), limits and untyped reads") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Resident.all)
            func expect(
                _ ordering: [Ordering],
                _ expected: [Int64],
                sourceLocation: SourceLocation = #_sourceLocation
            )
                throws
            {
                let found = try store.fetchAll(Resident.self, orderBy: ordering).map(\.id)
                #expect(found == expected, "\(ordering)", sourceLocation: sourceLocation)
            }
            let city = Column("address", "city")
            // Nulls first, text byte-wise (B < O < T < o < Å), ties by key.
            try expect([Ordering.ascending(Column("address", "city"))], [4, 5, 2, 1, 7, 8, 3, 6])
            try expect([.descending(city)], [6, 3, 8, 1, 7, 2, 4, 5])
            try expect([.ascending(Column("address", "zip"))], [3, 4, 5, 1, 7, 2, 6, 8])
            try expect([.descending(Column("address", "geo", "lat"))], [8, 2, 1, 6, 3, 4, 5, 7])
            // Numbers and booleans by value (-3 < true < 4.5 < 5 = 5.0), then text ("" < "five").
            try expect([.ascending(Column("address", "flex"))], [4, 8, 5, 3, 1, 7, 6, 2])
            try expect([.ascending(Column("address", "verified")), .descending("age")], [8, 4, 3, 6, 7, 2, 5, 1])
            // The string form still compiles and sorts on the column.
            try expect([.ascending("age"), .ascending(city)], [6, 2, 3, 1, 7, 4, 5, 8])
            let page = try store.fetchAll(Resident.self, orderBy: [.ascending(city)], limit: 3, offset: 2)
            #expect(page.map(\.id) == [2, 1, 7])
            let filtered = try store.fetchAll(
                Resident.self,
                where: Column("address", "zip") != nil,
                orderBy: [.descending(Column("address", "zip"))],
                limit: 2
            )
            #expect(filtered.map(\.id) == [8, 6])
            var streamed: [Int64] = []
            try store.forEach(Resident.self, where: city != nil, orderBy: [.ascending(city)]) { streamed.append($0.id) }
            #expect(streamed == [2, 1, 7, 8, 3, 6])
            let rows = try store.fetchDictionaries(
                from: Resident.collectionName,
                where: Column("address", "city") == "Oslo",
                orderBy: [.descending(Column("address", "zip"))]
            )
            #expect(rows.map { $0["id"] } == [.integer(7), .integer(1)])
        },
        check("nested fields: grouping (missing and null in the null group, named with dots, byte order)") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Resident.all)
            let city = Column("address", "city")
            let byCity = try store.aggregate(Resident.self, [.count, .sum("age"), .maximum("id")], groupBy: [city])
            #expect(
                byCity == [
                    ["address.city": .null, "count": 2, "sum(age)": 111, "max(id)": 5],
                    ["address.city": "Bergen", "count": 1, "sum(age)": 25, "max(id)": 2],
                    ["address.city": "Oslo", "count": 2, "sum(age)": 85, "max(id)": 7],
                    ["address.city": "Trondheim", "count": 1, "sum(age)": 70, "max(id)": 8],
                    ["address.city": "oslo", "count": 1, "sum(age)": 33, "max(id)": 3],
                    ["address.city": "\u{C5}lesund", "count": 1, "sum(age)": 19, "max(id)": 6],
                ]
            )
            // The same through the untyped call, with a condition on a nested field and a column.
            let older = try store.aggregate(
                in: Resident.collectionName,
                [.count],
                where: Column("age") > 30 && Column("address", "zip") != 150,
                groupBy: [city]
            )
            #expect(
                older == [
                    ["address.city": .null, "count": 1], ["address.city": "Oslo", "count": 1],
                    ["address.city": "Trondheim", "count": 1],
                ]
            )
            // Booleans are 1 and 0; two group columns, a field and a plain column.
            let verified = try store.aggregate(Resident.self, [.count], groupBy: [Column("address", "verified")])
            #expect(
                verified == [
                    ["address.verified": .null, "count": 4], ["address.verified": 0, "count": 2],
                    ["address.verified": 1, "count": 2],
                ]
            )
            let pairs = try store.aggregate(
                Resident.self,
                [.count],
                where: Column("age") < 50,
                groupBy: [Column("address", "verified"), Column("address", "geo", "label")]
            )
            #expect(
                pairs == [
                    ["address.verified": .null, "address.geo.label": .null, "count": 2],
                    ["address.verified": 0, "address.geo.label": .null, "count": 2],
                    ["address.verified": 1, "address.geo.label": "n", "count": 1],
                ]
            )
            // A field of numbers, a boolean and text: numbers by value (5 and 5.0 are one group),
            // then text; objects group by their JSON text.
            let flex = try store.aggregate(
                Resident.self,
                [.count, .minimum("id")],
                groupBy: [Column("address", "flex")]
            )
            #expect(flex.map { $0["count"] } == [1, 1, 1, 1, 2, 1, 1])
            #expect(flex.map { $0["min(id)"] } == [4, 8, 5, 3, 1, 6, 2])
            #expect(flex.first?["address.flex"] == .null)
            #expect(flex.last?["address.flex"] == "five")
            let geo = try store.aggregate(Resident.self, [.count], groupBy: [Column("address", "geo")])
            #expect(geo.map { $0["count"] } == [4, 1, 1, 1, 1])
            #expect(
                geo.dropFirst().allSatisfy { row in
                    guard case .text(let json)? = row["address.geo"] else { return false }
                    return json.hasPrefix(#"{""#)
                }
            )
            // Text that is not JSON reads as null; one JSON note is its own group.
            let notes = try store.aggregate(Resident.self, [.count], groupBy: [Column("note", "x")])
            #expect(notes == [["note.x": .null, "count": 7], ["note.x": 1, "count": 1]])
            // No records: no groups.
            #expect(try store.aggregate(Resident.self, [.count], where: Column("age") > 100, groupBy: [city]) == [])
            // Refused alike everywhere: a path into an integer column, a key SQL cannot carry,
            // an unknown column, and a result named as the group is.
            let integer = expectError(.invalidQuery) {
                _ = try store.aggregate(Resident.self, [.count], groupBy: [Column("age", "x")])
            }
            #expect(integer?.column == "age")
            expectError(.invalidQuery) {
                _ = try store.aggregate(Resident.self, [.count], groupBy: [Column("address", "a\"b")])
            }
            expectError(.unknownColumn) {
                _ = try store.aggregate(Resident.self, [.count], groupBy: [Column("nowhere", "city")])
            }
            let clash = expectError(.invalidQuery) {
                _ = try store.aggregate(Resident.self, [Aggregate.count.named("address.city")], groupBy: [city])
            }
            #expect(clash?.column == "address.city")
        },
        check("nested fields: an index on one answers as without it, survives a reopen, and bad ones are refused") {
            fixture,
            directory in
            let indexed = Resident.all.map { IndexedResident(id: $0.id, age: $0.age, address: $0.address) }
            do {
                let store = try fixture.openStore(in: directory)
                try store.save(contentsOf: indexed)
                try store.close()
            }
            let store = try fixture.openStore(in: directory)
            try store.save(IndexedResident(id: 9, age: 30, address: NestedAddress(city: "Oslo")))
            let city = Column("address", "city")
            #expect(try store.fetchAll(IndexedResident.self, where: city == "Oslo").map(\.id) == [1, 7, 9])
            #expect(try store.fetchAll(IndexedResident.self, where: city > "P").map(\.id) == [3, 6, 8])
            #expect(try store.fetchAll(IndexedResident.self, where: city == nil).map(\.id) == [4, 5])
            #expect(
                try store.fetchAll(IndexedResident.self, orderBy: [.ascending(city)], limit: 4).map(\.id) == [
                    4, 5, 2, 1,
                ]
            )
            #expect(try store.count(IndexedResident.self, where: city.in(["Oslo", "Bergen"])) == 4)
            let groups = try store.aggregate(IndexedResident.self, [.count], where: city < "P", groupBy: [city])
            #expect(groups == [["address.city": "Bergen", "count": 1], ["address.city": "Oslo", "count": 3]])
            // A path the index does not cover still answers.
            #expect(
                try store.fetchAll(IndexedResident.self, where: Column("address", "zip") > 6_000).map(\.id) == [6, 8]
            )
            #expect(
                try store.fetchAll(IndexedResident.self, where: city == "Oslo" && Column("age") > 40).map(\.id) == [7]
            )
            expectError(.schemaMismatch) { try store.save(BadlyIndexedResident(id: 1, age: 1)) }
            expectError(.schemaMismatch) { try store.save(UniquelyIndexedResident(id: 1, address: nil)) }
            #expect(try store.count(BadlyIndexedResident.self) == 0)
        },
        check("nested fields: hostile keys are plain keys, and paths SQL cannot carry are refused") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Resident.all)
            func ids(_ predicate: StoragePredicate) throws -> [Int64] {
                try store.fetchAll(Resident.self, where: predicate).map(\.id)
            }
            #expect(try ids(Column("address", "extra", "a.b") == "dot") == [1])
            #expect(try ids(Column("address", "extra", "$") == "dollar") == [1])
            #expect(try ids(Column("address", "extra", "[0]") == "bracket") == [2])
            #expect(try ids(Column("address", "extra", "it's") == "apostrophe") == [2])
            #expect(try ids(Column("address", "extra", Resident.longKey) == "long") == [7])
            #expect(try ids(Column("address", "extra", "a") == "dot") == [])
            #expect(try ids(Column("address", "extra", "") != nil) == [])
            #expect(try ids(Column("address", "extra", "') OR 1=1 --") != nil) == [])
            #expect(try ids(Column("address", "extra", "k") == nil) == [1, 2, 3, 4, 5, 6, 7, 8])
            #expect(try ids(Column("address", "extra", "k") != nil) == [])
            #expect(
                try store.fetchAll(Resident.self, orderBy: [.descending(Column("address", "extra", "a.b"))]).first?.id
                    == 1
            )
            for key in ["a\"b", "a\\b", "nul\0", "tab\t", String(repeating: "x", count: Column.maximumKeyLength + 1)] {
                expectError(.invalidQuery) { _ = try ids(Column("address", "extra", key) == "x") }
                expectError(.invalidQuery) {
                    _ = try store.fetchAll(Resident.self, orderBy: [.ascending(Column("address", key))])
                }
            }
            let deep = [String](repeating: "a", count: Column.maximumPathDepth + 1)
            expectError(.invalidQuery) {
                _ = try ids(.nested(path: deep, .isNull("address")))
            }
            expectError(.invalidQuery) { _ = try ids(.nested(path: [], .isNull("address"))) }
            // Only text holds JSON: a path into an integer column is refused, everywhere.
            expectError(.invalidQuery) { _ = try ids(Column("age", "x") == 1) }
            expectError(.invalidQuery) { _ = try store.count(Resident.self, where: Column("age", "x") == nil) }
            expectError(.invalidQuery) {
                _ = try store.fetchAll(Resident.self, orderBy: [.ascending(Column("id", "x"))])
            }
            expectError(.unknownColumn) { _ = try ids(Column("nowhere", "city") == "Oslo") }
            expectError(.unknownColumn) {
                _ = try store.fetchAll(Resident.self, orderBy: [.ascending(Column("nowhere", "city"))])
            }
        },
    ]
}

extension ConformanceSuite {
    /// Streams ordered by nested fields: each batch resumes after the last record's field value
    /// (keyset paging), nulls and ties included.
    public static let nestedFieldAsyncChecks: [ConformanceCheck] = [
        asyncCheck("nested fields: a stream ordered by one pages by the field's value") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try await store.save(contentsOf: Resident.all)
            for batchSize in [1, 2, 3, 100] {
                var ascending: [Int64] = []
                let city = Column("address", "city")
                for try await resident in store.stream(Resident.self, orderBy: [.ascending(city)], batchSize: batchSize)
                {
                    ascending.append(resident.id)
                }
                #expect(ascending == [4, 5, 2, 1, 7, 8, 3, 6], "batches of \(batchSize)")
                var descending: [Int64] = []
                let stream = store.stream(
                    Resident.self,
                    where: Column("age") > 18,
                    orderBy: [.descending(Column("address", "geo", "lat")), .ascending(Column("address", "flex"))],
                    batchSize: batchSize
                )
                for try await resident in stream { descending.append(resident.id) }
                #expect(descending == [8, 2, 1, 6, 4, 5, 3, 7], "batches of \(batchSize)")
            }
        }
    ]
}
