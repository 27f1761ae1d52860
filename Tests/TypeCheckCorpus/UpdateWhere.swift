// Update-where as a user writes it: dictionary literals of mixed literal values (text, real,
// integer, Bool, nil) beside `Column` predicates, typed and untyped, blocking and async, and
// inside a transaction; values from variables through `storageValue`.
import Foundation
import Storage

struct Sale: Codable {
    var id: Int64
    var city: String
    var price: Double
    var amount: Int
    var note: String?
}

func moveSales(_ store: ObjectStore, to city: String) throws -> Int {
    let n = try store.update(Sale.self, set: ["city": "moved", "price": 2.25], where: Column("id") < 10)
    let m = try store.update(in: "movies", set: ["Distributor": "x"], where: Column("Title") == "y")
    try store.update(Sale.self, set: ["note": nil, "amount": 3, "city": city.storageValue])
    try store.update(
        Sale.self,
        set: ["price": 1.5, "amount": 0, "note": "cleared", "city": .text(city)],
        where: Column("amount") > 10 && Column("price") <= 2.5 || Column("note") == nil
    )
    let inside = try store.transaction { tx in
        try tx.update(Sale.self, set: ["amount": 1], where: Column("city") == city)
            + tx.update(in: "movies", set: ["Rating": 7.5, "Seen": true])
    }
    return n + m + inside
}

func moveSalesAsync(_ store: ObjectStore, limit: Double) async throws -> Int {
    let n = try await store.update(Sale.self, set: ["city": "moved", "price": 2.25], where: Column("price") < limit)
    let m = try await store.update(in: "movies", set: ["Distributor": nil])
    return n + m
}
