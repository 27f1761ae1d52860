import Foundation
import Storage
import Testing

/// A sale, for update-where: a real, an integer, a Bool, an optional, an enum and a unique code.
struct UpdatedSale: Codable, Equatable, StorableModel {
    enum Channel: String, Codable { case shop, web }

    static let collectionName = "sales"
    static let indexes: [IndexDefinition] = [.init(["code"], unique: true)]

    var id: Int64
    var city: String
    var price: Double
    var amount: Int
    var paid: Bool
    var note: String?
    var channel: Channel
    var code: String

    /// Sale `id` of a fixed set: cities in turn, prices and amounts from the id.
    static func make(_ id: Int64) -> UpdatedSale {
        UpdatedSale(
            id: id,
            city: ["Oslo", "Lyon", "Kyiv"][Int(id % 3)],
            price: Double(id) / 4,
            amount: Int(id * 10),
            paid: id % 2 == 0,
            note: id % 5 == 0 ? nil : "n\(id)",
            channel: id % 2 == 0 ? .web : .shop,
            code: "c\(id)"
        )
    }

    static let all = (1...20).map { make(Int64($0)) }
}

extension ConformanceSuite {
    /// A store holding `UpdatedSale.all`.
    static func salesStore(_ fixture: BackendFixture, _ directory: URL) throws -> ObjectStore {
        let store = try fixture.openStore(in: directory)
        try store.save(contentsOf: UpdatedSale.all)
        return store
    }

    /// Every sale, by id.
    static func sales(_ store: ObjectStore) throws -> [UpdatedSale] {
        try store.fetchAll(UpdatedSale.self, orderBy: [.ascending("id")])
    }

    static let updateWhereChecks: [ConformanceCheck] = [
        check("update sets the named columns of the matching records only, keeps the rest, returns the count") {
            fixture,
            directory in
            let store = try salesStore(fixture, directory)
            let n = try store.update(UpdatedSale.self, set: ["city": "moved", "price": 2.25], where: Column("id") < 10)
            #expect(n == 9)
            var expected = UpdatedSale.all
            for index in expected.indices where expected[index].id < 10 {
                expected[index].city = "moved"
                expected[index].price = 2.25
            }
            #expect(try sales(store) == expected)
            // An integer goes into a real column as a real, into a text column as its digits;
            // `nil` empties an optional; Bool and enum values are stored as a save stores them.
            let m = try store.update(
                UpdatedSale.self,
                set: ["price": 3, "city": 42, "note": nil, "paid": true, "channel": "web"],
                where: Column("city") == "Kyiv" && Column("amount") >= 100
            )
            for index in expected.indices where expected[index].city == "Kyiv" && expected[index].amount >= 100 {
                expected[index].price = 3
                expected[index].city = "42"
                expected[index].note = nil
                expected[index].paid = true
                expected[index].channel = .web
            }
            #expect(m == expected.filter { $0.city == "42" }.count)
            #expect(m == 4)
            #expect(try sales(store) == expected)
            #expect(try store.count(UpdatedSale.self, where: Column("price") == 3.0 && Column("city") == "42") == 4)
            // No `where:`: every record, counted even when its values were already the new ones.
            #expect(try store.update(UpdatedSale.self, set: ["paid": false]) == 20)
            #expect(try store.update(UpdatedSale.self, set: ["paid": false]) == 20)
            #expect(try sales(store).allSatisfy { !$0.paid })
        },
        check("update refuses a value its column or the type cannot hold, as a save would, writing nothing") {
            fixture,
            directory in
            let store = try salesStore(fixture, directory)
            let refusals: [(StorageError.Code, String, [String: StorageValue])] = [
                (.schemaMismatch, "price", ["price": "cheap"]),
                (.schemaMismatch, "amount", ["amount": 2.5]),
                (.schemaMismatch, "city", ["city": .blob(Data([1, 2]))]),
                (.schemaMismatch, "code", ["city": "fine", "code": .blob(Data([0]))]),
                (.schemaMismatch, "city", ["city": nil]),
                (.schemaMismatch, "paid", ["paid": 5]),
                (.schemaMismatch, "channel", ["channel": "carrier pigeon"]),
                (.valueOutOfRange, "price", ["price": .real(.nan)]),
                (.valueOutOfRange, "price", ["price": .integer(9_007_199_254_740_993)]),
            ]
            for (code, column, assignments) in refusals {
                let error = expectError(code) {
                    try store.update(UpdatedSale.self, set: assignments, where: Column("id") <= 12)
                }
                #expect(error?.column == column, "\(assignments): \(String(describing: error))")
                #expect(error?.collection == "sales", "\(assignments): \(String(describing: error))")
            }
            // The untyped path has no type to ask: a null fits any column but the key, and the
            // stored columns' kinds are checked as before.
            #expect(try store.update(in: "sales", set: ["note": nil], where: Column("id") == 1) == 1)
            expectError(.schemaMismatch) { try store.update(in: "sales", set: ["amount": "ten"]) }
            var expected = UpdatedSale.all
            expected[0].note = nil
            #expect(try sales(store) == expected)
        },
        check("update refuses the primary key, unknown columns, twin spellings and an empty set, writing nothing") {
            fixture,
            directory in
            let store = try salesStore(fixture, directory)
            let key = expectError(.invalidKey) {
                try store.update(UpdatedSale.self, set: ["city": "x", "id": 100], where: Column("id") == 1)
            }
            #expect(key?.column == "id")
            expectError(.invalidKey) { try store.update(in: "sales", set: ["id": 100]) }
            let unknown = expectError(.unknownColumn) { try store.update(UpdatedSale.self, set: ["town": "x"]) }
            #expect(unknown?.column == "town")
            expectError(.unknownColumn) {
                try store.update(UpdatedSale.self, set: ["city": "x"], where: Column("town") == "Oslo")
            }
            // A column spelt another way than it is stored: refused naming both, as a save is;
            // in `where:` it is an unknown column, as in any query.
            let twin = expectError(.schemaMismatch) { try store.update(UpdatedSale.self, set: ["City": "x"]) }
            #expect(twin?.message.contains("'City'") == true && twin?.message.contains("'city'") == true)
            expectError(.schemaMismatch) { try store.update(in: "sales", set: ["ID": 7]) }
            expectError(.unknownColumn) {
                try store.update(UpdatedSale.self, set: ["city": "x"], where: Column("CITY") == "Oslo")
            }
            expectError(.misuse) { try store.update(UpdatedSale.self, set: [:]) }
            expectError(.misuse) { try store.update(in: "sales", set: [:], where: Column("id") == 1) }
            expectError(.invalidIdentifier) { try store.update(in: "sales", set: ["": 1]) }
            expectError(.invalidIdentifier) { try store.update(in: "no/such", set: ["city": "x"]) }
            #expect(try sales(store) == UpdatedSale.all)

            try store.save(ComposedName(id: 1, value: 1))
            expectBothSpellings(
                expectError(.schemaMismatch) { try store.update(in: "spelt", set: [decomposedCafe: 2]) }
            )
            #expect(try store.update(in: "spelt", set: [composedCafe: 2]) == 1)
            #expect(try store.fetch(ComposedName.self, id: 1) == ComposedName(id: 1, value: 2))
        },
        check("update of no matching record, or of a collection never stored, is 0 and writes nothing") {
            fixture,
            directory in
            let store = try salesStore(fixture, directory)
            #expect(try store.update(UpdatedSale.self, set: ["city": "x"], where: Column("id") > 1000) == 0)
            #expect(try store.update(in: "sales", set: ["city": "x"], where: Column("city") == "Atlantis") == 0)
            // Nothing matched, so no record could be checked against the type: nothing to refuse.
            #expect(try store.update(UpdatedSale.self, set: ["city": nil], where: Column("id") > 1000) == 0)
            #expect(try sales(store) == UpdatedSale.all)
            #expect(try store.update(ObservationChecks.Item.self, set: ["name": "x"]) == 0)
            #expect(try store.update(in: "nothing", set: ["a": 1], where: Column("b") == 2) == 0)
            #expect(try store.collectionNames() == ["sales"])
        },
        check("update inside transaction {} sees and is seen by its writes, and is rolled back with it") {
            fixture,
            directory in
            let store = try salesStore(fixture, directory)
            struct Abandon: Error {}
            #expect(throws: Abandon.self) {
                try store.transaction { tx in
                    try tx.save(UpdatedSale.make(21))
                    #expect(try tx.update(UpdatedSale.self, set: ["city": "gone"], where: Column("id") > 15) == 6)
                    #expect(try tx.update(in: "sales", set: ["amount": 0], where: Column("city") == "gone") == 6)
                    #expect(try tx.count(UpdatedSale.self, where: Column("amount") == 0) == 6)
                    throw Abandon()
                }
            }
            #expect(try sales(store) == UpdatedSale.all)
            let changed = try store.transaction { tx in
                let n = try tx.update(UpdatedSale.self, set: ["note": "batch"], where: Column("paid") == true)
                try tx.delete(UpdatedSale.self, id: 2)
                return n
            }
            #expect(changed == 10)
            let expected = UpdatedSale.all.filter { $0.id != 2 }.map { sale -> UpdatedSale in
                var sale = sale
                if sale.paid { sale.note = "batch" }
                return sale
            }
            #expect(try sales(store) == expected)
        },
        check("update that breaks a unique index is .constraintViolation and changes no record") {
            fixture,
            directory in
            let store = try salesStore(fixture, directory)
            expectError(.constraintViolation) {
                try store.update(UpdatedSale.self, set: ["code": "same", "city": "x"], where: Column("id") < 4)
            }
            expectError(.constraintViolation) {
                try store.update(UpdatedSale.self, set: ["code": "c7"], where: Column("id") == 3)
            }
            #expect(try sales(store) == UpdatedSale.all)
            #expect(try store.update(UpdatedSale.self, set: ["code": "only"], where: Column("id") == 3) == 1)
            #expect(try store.fetch(UpdatedSale.self, id: 3)?.code == "only")
        },
        check("update matches what a query matches, on every engine, also where SQL cannot take the predicate") {
            fixture,
            directory in
            let store = try salesStore(fixture, directory)
            // LIKE on a number column is left to the shared evaluator on PostgreSQL; a long IN
            // list is bound as one array; a negation and an OR are pushed down.
            let predicates: [StoragePredicate] = [
                Column("amount").like("1%"),
                Column("id").in((0..<100).map { Int64($0 * 3) }),
                !(Column("city") == "Oslo") || Column("note") == nil,
                Column("note").like("N1%") && Column("price") >= 2,
            ]
            for (index, predicate) in predicates.enumerated() {
                let marker = "p\(index)"
                let matching = try store.fetchAll(UpdatedSale.self, where: predicate).map(\.id)
                #expect(
                    try store.update(UpdatedSale.self, set: ["city": .text(marker)], where: predicate) == matching.count
                )
                #expect(try store.fetchAll(UpdatedSale.self, where: Column("city") == marker).map(\.id) == matching)
            }
        },
        check("untyped update(in:) of a collection of dictionaries sets, nulls and counts as the typed one") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.insert(
                dictionaries: [
                    ["Title": "y", "Distributor": "old", "Rating": 7.5, "Year": 1999],
                    ["Title": "z", "Distributor": "old", "Rating": 6, "Year": 2001],
                    ["Title": "y", "Distributor": NSNull(), "Rating": 5, "Year": 2005],
                ],
                into: "movies",
                primaryKey: "Year"
            )
            let m = try store.update(in: "movies", set: ["Distributor": "x"], where: Column("Title") == "y")
            #expect(m == 2)
            #expect(try store.update(in: "MOVIES", set: ["Rating": nil], where: Column("Year") == 2001) == 1)
            #expect(try store.update(in: "movies", set: ["Rating": 8]) == 3)
            expectError(.invalidKey) { try store.update(in: "movies", set: ["Year": 1]) }
            expectError(.schemaMismatch) { try store.update(in: "movies", set: ["Rating": "great"]) }
            #expect(
                try store.fetchDictionaries(from: "movies", orderBy: [.ascending("Year")]) == [
                    ["Title": "y", "Distributor": "x", "Rating": 8.0, "Year": 1999],
                    ["Title": "z", "Distributor": "old", "Rating": 8.0, "Year": 2001],
                    ["Title": "y", "Distributor": "x", "Rating": 8.0, "Year": 2005],
                ]
            )
        },
    ]

    static let updateWhereAsyncChecks: [ConformanceCheck] = [
        asyncCheck("observers are told of every key an update changed; nothing when none matched or it rolled back") {
            fixture,
            directory in
            let store = try salesStore(fixture, directory)
            var changes = store.changes(of: UpdatedSale.self).makeAsyncIterator()
            #expect(try await store.update(UpdatedSale.self, set: ["city": "x"], where: Column("id") > 100) == 0)
            struct Abandon: Error {}
            #expect(throws: Abandon.self) {
                try store.transaction { tx in
                    try tx.update(UpdatedSale.self, set: ["city": "never"])
                    throw Abandon()
                }
            }
            expectError(.schemaMismatch) { try store.update(UpdatedSale.self, set: ["price": "refused"]) }
            #expect(try await store.update(UpdatedSale.self, set: ["city": "moved"], where: Column("id") < 4) == 3)
            let first = await changes.next()
            #expect(first?.collection == "sales")
            #expect(Set(first?.upserted ?? []) == [.integer(1), .integer(2), .integer(3)])
            #expect(first?.deleted == [])
            // The untyped call, and one inside a transaction with a save: one change for both.
            #expect(try await store.update(in: "sales", set: ["amount": 1], where: Column("city") == "Lyon") == 6)
            let second = await changes.next()
            let lyon = UpdatedSale.all.filter { $0.city == "Lyon" && $0.id >= 4 }.map { StorageValue.integer($0.id) }
            #expect(Set(second?.upserted ?? []) == Set(lyon))
            try await store.transaction { tx in
                try tx.update(UpdatedSale.self, set: ["note": "t"], where: Column("id") == 20 || Column("id") == 19)
                try tx.save(UpdatedSale.make(21))
            }
            let third = await changes.next()
            #expect(Set(third?.upserted ?? []) == [.integer(19), .integer(20), .integer(21)])
            #expect(try await store.update(UpdatedSale.self, set: ["note": "all"]) == 21)
            #expect(await changes.next()?.upserted.count == 21)
            #expect(try await store.count(UpdatedSale.self, where: Column("note") == "all") == 21)
        },
        asyncCheck("the async update overloads refuse and change as the blocking ones do") {
            fixture,
            directory in
            let store = try salesStore(fixture, directory)
            #expect(try await store.update(UpdatedSale.self, set: ["amount": 5], where: Column("paid") == false) == 10)
            #expect(try await store.update(in: "sales", set: ["note": "async"], where: Column("amount") == 5) == 10)
            do {
                _ = try await store.update(UpdatedSale.self, set: ["id": 1])
                Issue.record("the key was not refused")
            } catch let error as StorageError {
                #expect(error.code == .invalidKey)
            }
            #expect(try await store.count(UpdatedSale.self, where: Column("note") == "async") == 10)
        },
    ]
}
