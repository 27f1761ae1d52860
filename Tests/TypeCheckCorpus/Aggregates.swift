// Aggregates as a user writes them (issue 34): the issue's own call with every aggregate, a named
// one, a predicate and a group; the untyped form; reading results out of the rows; the same calls
// in async code and inside transaction and read handles.
import Foundation
import Storage

struct Sale: Codable, Sendable {
    var id: Int64
    var city: String
    var customer: String
    var amount: Int
    var price: Double
}

func aggregates(_ store: ObjectStore) throws {
    let rows: [[String: StorageValue]] = try store.aggregate(
        Sale.self,
        [
            .count, .count("price"), .countDistinct("customer"), .sum("amount"), .average("price"),
            .minimum("price"), .maximum("price"), Aggregate.sum("amount").named("total"),
        ],
        where: Column("amount") > 10,
        groupBy: [Column("city")]
    )
    let untyped = try store.aggregate(in: "movies", [.count], where: nil, groupBy: [Column("Major Genre")])
    let everything = try store.aggregate(Sale.self, [.count, .sum("amount")])
    let cheap = try store.aggregate(
        in: "sales",
        [.average("price")],
        where: Column("price") < 2.5 && Column("city") != "Oslo"
    )
    for row in rows where row["total"] == .integer(100) || row["count"] == 2 {
        print(row["city"] ?? .null, row["avg(price)"] ?? .null)
    }
    if case .real(let mean)? = cheap.first?["avg(price)"] { print(mean * 2 + 1) }
    print(untyped.count + everything.count)
    try store.transaction { tx in
        let before = try tx.aggregate(Sale.self, [.sum("amount")], where: Column("city") == "Oslo")
        try tx.save(Sale(id: 1, city: "Oslo", customer: "ann", amount: 3, price: 1.5))
        print(before, try tx.aggregate(in: "sales", [.maximum("amount")], groupBy: [Column("customer")]))
    }
    let snapshot = try store.read { tx in try tx.aggregate(Sale.self, [.minimum("price"), .maximum("price")]) }
    print(snapshot)
}

func aggregatesAsync(_ store: ObjectStore) async throws {
    let rows = try await store.aggregate(Sale.self, [.count, .average("price")], groupBy: [Column("city")])
    let genres = try await store.aggregate(in: "movies", [.countDistinct("Director")], where: nil, groupBy: [])
    let bigSpenders = try await store.aggregate(
        Sale.self,
        [Aggregate.sum("amount").named("spent")],
        where: Column("amount") >= 100,
        groupBy: [Column("customer"), Column("city")]
    )
    print(rows.count, genres.first?["count(distinct Director)"] ?? .null, bigSpenders.map { $0["spent"] })
}
