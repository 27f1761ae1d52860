import Foundation
import Storage
import Testing

/// A sale, for the aggregate checks: every column nullable, a blob among them.
struct AggregateSale: Codable, Equatable, Sendable, StorableModel {
    static let collectionName = "sales"
    var id: Int64
    var city: String?
    var customer: String?
    var amount: Int64?
    var price: Double?
    var receipt: Data?
}

extension ConformanceSuite {
    static let aggregateChecks: [ConformanceCheck] = [
        check("aggregates per group follow SQL's semantics, groups ascending with nulls first") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: aggregateSales)
            let rows = try store.aggregate(
                AggregateSale.self,
                [
                    .count, .count("price"), .countDistinct("customer"), .sum("amount"), .average("price"),
                    .minimum("price"), .maximum("price"), Aggregate.sum("amount").named("total"),
                ],
                where: Column("amount") > 10,
                groupBy: [Column("city")]
            )
            let expected: [[String: StorageValue]] = [
                [
                    "city": nil, "count": 1, "count(price)": 1, "count(distinct customer)": 1,
                    "sum(amount)": 40, "avg(price)": 4.0, "min(price)": 4.0, "max(price)": 4.0, "total": 40,
                ],
                [
                    "city": "Bergen", "count": 2, "count(price)": 1, "count(distinct customer)": 1,
                    "sum(amount)": 50, "avg(price)": 2.5, "min(price)": 2.5, "max(price)": 2.5, "total": 50,
                ],
                [
                    "city": "Oslo", "count": 3, "count(price)": 3, "count(distinct customer)": 2,
                    "sum(amount)": 90, "avg(price)": 1.75, "min(price)": 0.5, "max(price)": 3.0, "total": 90,
                ],
                [
                    "city": "oslo", "count": 1, "count(price)": 0, "count(distinct customer)": 0,
                    "sum(amount)": 11, "avg(price)": nil, "min(price)": nil, "max(price)": nil, "total": 11,
                ],
            ]
            #expect(rows == expected)
            // Without groups: one row over every record; min and max of text in byte order.
            let all = try store.aggregate(
                AggregateSale.self,
                [.count, .count("amount"), .minimum("city"), .maximum("city"), .sum("amount")]
            )
            let whole: [String: StorageValue] = [
                "count": 9, "count(amount)": 8, "min(city)": "Bergen", "max(city)": "oslo", "sum(amount)": 196,
            ]
            #expect(all == [whole])
            // Minima and maxima of blobs compare their bytes; two group columns nest.
            let receipts = try store.aggregate(
                in: "sales",
                [.minimum("receipt"), .maximum("receipt"), .count],
                groupBy: [Column("city"), Column("customer")]
            )
            #expect(receipts.map { [$0["city"]!, $0["customer"]!] } == aggregateGroupPairs)
            #expect(receipts.first { $0["city"] == "Oslo" && $0["customer"] == "ann" }?["count"] == 2)
            #expect(
                receipts.first { $0["city"] == "Oslo" && $0["customer"] == "ann" }?["min(receipt)"] == .blob(Data([1]))
            )
            #expect(
                receipts.first { $0["city"] == "Oslo" && $0["customer"] == "ann" }?["max(receipt)"]
                    == .blob(Data([1, 0]))
            )
        },
        check("aggregates over no records: one row without groups, none with") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let aggregates: [Aggregate] = [
                .count, .count("amount"), .countDistinct("city"), .sum("amount"), .average("price"),
                .minimum("city"), .maximum("price"),
            ]
            let none: [String: StorageValue] = [
                "count": 0, "count(amount)": 0, "count(distinct city)": 0, "sum(amount)": nil, "avg(price)": nil,
                "min(city)": nil, "max(price)": nil,
            ]
            // Never stored, then stored and matching nothing, then emptied.
            #expect(try store.aggregate(AggregateSale.self, aggregates) == [none])
            #expect(try store.aggregate(in: "nothing", aggregates, groupBy: [Column("city")]).isEmpty)
            try store.save(contentsOf: aggregateSales)
            #expect(try store.aggregate(AggregateSale.self, aggregates, where: Column("amount") > 1_000) == [none])
            #expect(
                try store.aggregate(
                    AggregateSale.self,
                    aggregates,
                    where: Column("amount") > 1_000,
                    groupBy: [Column("city")]
                )
                .isEmpty
            )
            // No aggregates: the groups alone, or the one row of nothing.
            #expect(try store.aggregate(AggregateSale.self, []) == [[:]])
            #expect(try store.aggregate(AggregateSale.self, [], where: Column("id") > 8) == [[:]])
            let cities = try store.aggregate(AggregateSale.self, [], groupBy: [Column("city")])
            #expect(cities == [["city": nil], ["city": "Bergen"], ["city": "Oslo"], ["city": "oslo"]])
            try store.deleteAll(AggregateSale.self)
            #expect(try store.aggregate(AggregateSale.self, aggregates) == [none])
            #expect(try store.aggregate(AggregateSale.self, aggregates, groupBy: [Column("city")]).isEmpty)
        },
        check("aggregates of a column that is all null: counts zero, the rest null, one null group") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(
                contentsOf: (1...4).map { AggregateSale(id: $0, city: nil, customer: nil, amount: nil, price: nil) }
            )
            let rows = try store.aggregate(
                AggregateSale.self,
                [
                    .count, .count("amount"), .countDistinct("amount"), .sum("amount"), .average("price"),
                    .sum("price"),
                    .minimum("amount"), .maximum("receipt"),
                ],
                groupBy: [Column("city")]
            )
            let expected: [String: StorageValue] = [
                "city": nil, "count": 4, "count(amount)": 0, "count(distinct amount)": 0, "sum(amount)": nil,
                "avg(price)": nil, "sum(price)": nil, "min(amount)": nil, "max(receipt)": nil,
            ]
            #expect(rows == [expected])
        },
        check("an integer sum beyond Int64 is valueOutOfRange on every engine; its average is exact") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: [
                AggregateSale(id: 1, city: "a", amount: .max), AggregateSale(id: 2, city: "a", amount: 1),
                AggregateSale(id: 3, city: "b", amount: .max), AggregateSale(id: 4, city: "b", amount: 1),
                AggregateSale(id: 5, city: "b", amount: -1), AggregateSale(id: 6, city: "c", amount: .min),
                AggregateSale(id: 7, city: "c", amount: -1),
            ])
            let error = expectError(.valueOutOfRange) {
                _ = try store.aggregate(AggregateSale.self, [.sum("amount")], groupBy: [Column("city")])
            }
            #expect(error?.column == "amount")
            #expect(error?.collection == "sales")
            expectError(.valueOutOfRange) {
                _ = try store.aggregate(AggregateSale.self, [.sum("amount")], where: Column("city") == "c")
            }
            // The exact sum decides, not a partial one: max + 1 - 1 fits.
            #expect(
                try store.aggregate(AggregateSale.self, [.sum("amount")], where: Column("city") == "b")
                    == [["sum(amount)": .integer(.max)]]
            )
            let averages = try store.aggregate(AggregateSale.self, [.average("amount")], groupBy: [Column("city")])
            #expect(
                averages.map { $0["avg(amount)"] } == [
                    .real(4_611_686_018_427_387_904), .real(3_074_457_345_618_258_602.3),
                    .real(-4_611_686_018_427_387_904.5),
                ]
            )
        },
        check("real sums and averages are the exact sum rounded once, whatever the engine's order") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            var sales = [
                AggregateSale(id: 1, city: "big", price: 1e16), AggregateSale(id: 2, city: "big", price: 1),
                AggregateSale(id: 3, city: "big", price: -1e16),
            ]
            sales += (10..<20).map { AggregateSale(id: $0, city: "tenths", price: 0.1) }
            try store.save(contentsOf: sales)
            let rows = try store.aggregate(
                AggregateSale.self,
                [.sum("price"), .average("price"), .count("price")],
                groupBy: [Column("city")]
            )
            // Added one by one, 1e16 + 1 is 1e16 and the ten tenths make 0.9999999999999999.
            let expected: [[String: StorageValue]] = [
                ["city": "big", "sum(price)": 1.0, "avg(price)": .real(1.0 / 3), "count(price)": 3],
                ["city": "tenths", "sum(price)": 1.0, "avg(price)": 0.1, "count(price)": 10],
            ]
            #expect(rows == expected)
        },
        check("aggregates refuse unknown and twin-spelt columns, text sums and two results of one name") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: aggregateSales)
            let unknown: [([Aggregate], [Column], StoragePredicate?, String)] = [
                ([Aggregate.sum("nope")], [Column](), StoragePredicate?.none, "nope"),
                ([.count], [Column("region")], nil, "region"),
                ([.count], [], Column("discount") > 1, "discount"),
                ([.minimum("City")], [], nil, "City"),
            ]
            for (aggregates, groups, predicate, column) in unknown {
                let error = expectError(.unknownColumn) {
                    _ = try store.aggregate(AggregateSale.self, aggregates, where: predicate, groupBy: groups)
                }
                #expect(error?.column == column)
                #expect(error?.collection == "sales")
            }
            // A column spelt in another Unicode normalization is another column, as elsewhere.
            try store.insert(dictionaries: [["id": 1, "caf\u{E9}": 2]], into: "twins")
            let twin = expectError(.unknownColumn) {
                _ = try store.aggregate(in: "twins", [.sum("cafe\u{301}")])
            }
            #expect(twin?.message.contains("caf") == true)
            #expect(try store.aggregate(in: "twins", [.sum("caf\u{E9}")]) == [["sum(caf\u{E9})": 2]])
            let text = expectError(.invalidQuery) { _ = try store.aggregate(AggregateSale.self, [.sum("city")]) }
            #expect(text?.column == "city")
            expectError(.invalidQuery) { _ = try store.aggregate(AggregateSale.self, [.average("receipt")]) }
            let twice = expectError(.invalidQuery) {
                _ = try store.aggregate(AggregateSale.self, [.count, Aggregate.sum("amount").named("count")])
            }
            #expect(twice?.column == "count")
            expectError(.invalidQuery) {
                _ = try store.aggregate(AggregateSale.self, [Aggregate.count.named("city")], groupBy: [Column("city")])
            }
            expectError(.invalidIdentifier) { _ = try store.aggregate(in: "no/such", [.count]) }
            // A path into a column that is not text holds no JSON: refused, never grouped by the
            // whole column.
            let nested = expectError(.invalidQuery) {
                _ = try store.aggregate(AggregateSale.self, [.count], groupBy: [Column("amount", "name")])
            }
            #expect(nested?.column == "amount")
        },
        check("aggregates inside transactions see their own writes, and read handles one snapshot") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: aggregateSales)
            try store.transaction { tx in
                try tx.save(AggregateSale(id: 100, city: "Oslo", customer: "zed", amount: 1_000, price: 1))
                let rows = try tx.aggregate(AggregateSale.self, [.sum("amount")], where: Column("city") == "Oslo")
                #expect(rows == [["sum(amount)": 1_095]])
                // The store's own call on the transaction's thread reads the transaction.
                #expect(try store.aggregate(in: "sales", [.count]) == [["count": 10]])
            }
            let counted = try store.read { tx in
                try tx.aggregate(in: "sales", [.count, .countDistinct("customer")], where: Column("city") == "Oslo")
            }
            #expect(counted == [["count": 5, "count(distinct customer)": 3]])
        },
        check("the engine's aggregates equal the one-pass computation's over random records") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            let reference = ObjectStore(backend: InMemoryStorageBackend())
            var random = SeededGenerator(seed: 34)
            let cities: [String?] = [nil, "Oslo", "oslo", "Bergen", "Å", "Z", ""]
            let sales = (1...400).map { id in
                AggregateSale(
                    id: Int64(id),
                    city: cities.randomElement(using: &random)!,
                    customer: Bool.random(using: &random) ? nil : "c\(Int.random(in: 0..<7, using: &random))",
                    amount: Int.random(in: 0..<5, using: &random) == 0
                        ? nil : Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &random),
                    price: Int.random(in: 0..<5, using: &random) == 0
                        ? nil : Double(Int.random(in: -100_000...100_000, using: &random)) / 7,
                    receipt: Bool.random(using: &random) ? nil : Data([UInt8.random(in: 0...3, using: &random)])
                )
            }
            try store.save(contentsOf: sales)
            try reference.save(contentsOf: sales)
            // What SQL computes on both SQL engines, then everything (a real sum and a minimum of
            // blobs make PostgreSQL, and the real sum SQLite, leave it to the one-pass computation).
            let pushedDown: [Aggregate] = [
                .count, .count("customer"), .countDistinct("customer"), .countDistinct("price"), .sum("amount"),
                .average("amount"), .minimum("city"), .maximum("customer"), .minimum("amount"), .maximum("price"),
            ]
            let everything = pushedDown + [.sum("price"), .average("price"), .minimum("receipt"), .maximum("receipt")]
            let predicates: [StoragePredicate?] = [
                nil, Column("amount") > 0, Column("city").like("o%") || Column("price") < 0,
            ]
            let groupings: [[String]] = [[], ["city"], ["customer", "city"], ["receipt"], ["price"]]
            for groups in groupings {
                for (predicate, aggregates) in predicates.flatMap({ p in [(p, pushedDown), (p, everything)] }) {
                    let columns = groups.map { Column($0) }
                    let engine = try store.aggregate(AggregateSale.self, aggregates, where: predicate, groupBy: columns)
                    let expected = try reference.aggregate(
                        AggregateSale.self,
                        aggregates,
                        where: predicate,
                        groupBy: columns
                    )
                    #expect(engine == expected, "grouped by \(groups), where \(String(describing: predicate))")
                }
            }
        },
    ]

    static let aggregateAsyncChecks: [ConformanceCheck] = [
        asyncCheck("the async aggregates answer as the blocking ones, inside read and write transactions too") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try await store.save(contentsOf: aggregateSales)
            let aggregates: [Aggregate] = [.count, .sum("amount"), .average("price"), .maximum("customer")]
            let typed = try await store.aggregate(AggregateSale.self, aggregates, groupBy: [Column("city")])
            // A closure that is not async calls the blocking overload.
            let blocking: () throws -> [[String: StorageValue]] = {
                try store.aggregate(AggregateSale.self, aggregates, groupBy: [Column("city")])
            }
            #expect(typed == (try blocking()))
            #expect(typed.count == 4)
            let untyped = try await store.aggregate(in: "sales", [.countDistinct("city")], where: Column("amount") < 30)
            #expect(untyped == [["count(distinct city)": 3]])
            let inside = try await store.transaction { tx in
                try tx.save(AggregateSale(id: 50, city: "Tromsø", amount: 7))
                return try tx.aggregate(in: "sales", [.count], where: Column("city") == "Tromsø")
            }
            #expect(inside == [["count": 1]])
            let read = try await store.read { tx in try tx.aggregate(AggregateSale.self, [.minimum("amount")]) }
            #expect(read == [["min(amount)": 5]])
        }
    ]

    /// Nine sales in four cities (one null), two customers in Oslo, amounts and prices with nulls.
    static let aggregateSales: [AggregateSale] = [
        AggregateSale(id: 1, city: "Oslo", customer: "ann", amount: 20, price: 0.5, receipt: Data([1])),
        AggregateSale(id: 2, city: "Oslo", customer: "ann", amount: 30, price: 1.75, receipt: Data([1, 0])),
        AggregateSale(id: 3, city: "Oslo", customer: "bob", amount: 40, price: 3.0),
        AggregateSale(id: 4, city: "Oslo", customer: "bob", amount: 5, price: 9.0),
        AggregateSale(id: 5, city: "Bergen", customer: "cid", amount: 25, price: 2.5, receipt: Data([2])),
        AggregateSale(id: 6, city: "Bergen", customer: nil, amount: 25, price: nil),
        AggregateSale(id: 7, city: "oslo", customer: nil, amount: 11, price: nil),
        AggregateSale(id: 8, city: nil, customer: "dee", amount: 42 - 2, price: 4.0),
        AggregateSale(id: 9, city: nil, customer: "eve", amount: nil, price: 8.0),
    ]

    /// The (city, customer) groups of `aggregateSales`, in order: nulls first, then byte order.
    static let aggregateGroupPairs: [[StorageValue]] = [
        [nil, "dee"], [nil, "eve"], ["Bergen", nil], ["Bergen", "cid"], ["Oslo", "ann"], ["Oslo", "bob"],
        ["oslo", nil],
    ]
}
