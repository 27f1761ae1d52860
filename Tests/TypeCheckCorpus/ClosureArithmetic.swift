// Arithmetic in closures beside `Column` expressions: predicates whose right-hand sides are
// computed, and the fetched values filtered, sorted, mapped and summed by closures with the
// standard library's operators, in the same expressions and the same functions.
import Foundation
import Storage

struct Sample: Codable, Equatable, Sendable {
    var id: Int64
    var name: String
    var age: Int
    var weight: Double
    var email: String?
    var joined: Date
    var active: Bool
}

func computedBounds(store: ObjectStore) throws {
    let minimumAge = 18
    let limit = 40
    let now = Date()
    let adults = try store.fetchAll(
        Sample.self,
        where: Column("age") >= minimumAge + 1 && Column("weight") < Double(limit) * 1.5 + 2
    )
    let recent = try store.count(
        Sample.self,
        where: Column("joined") > now.addingTimeInterval(-7 * 24 * 3_600) || Column("id") <= Int64(limit / 2)
    )
    let page = try store.fetchAll(
        Sample.self,
        where: Column("age") < minimumAge * 3 - 1 && Column("name") != "n\(limit % 7)",
        orderBy: [.ascending("age")],
        limit: limit / 4,
        offset: (limit - 1) * 2
    )
    print(adults.count, recent, page.count)
}

func closuresOverResults(store: ObjectStore) throws {
    let people = try store.fetchAll(Sample.self, where: Column("active") == true && Column("age") > 20)
    let total = people.map { $0.weight * 2 + 1 }.reduce(0, +)
    let mean = people.isEmpty ? 0 : Double(people.map(\.age).reduce(0, +)) / Double(people.count)
    let working = people.filter { $0.age >= 18 && $0.age < 65 || $0.email != nil }
    let sorted = people.sorted { $0.age == $1.age ? $0.name < $1.name : $0.age > $1.age }
    let heavy = people.contains { $0.weight > mean * 1.5 && $0.active }
    let labels = people.map { "\($0.name) (\($0.age / 10 * 10)s, \(Int($0.weight.rounded())) kg)" }
    let older = try store.fetchAll(Sample.self, where: Column("age") > Int(mean) + 10).filter { $0.weight / 2 > 30 }
    print(total, working.count, sorted.first?.name ?? "", heavy, labels, older.count)
}

func asyncComputedBounds(store: ObjectStore) async throws {
    let minimumAge = 18
    let limit = 40
    let adults = try await store.fetchAll(
        Sample.self,
        where: Column("age") >= minimumAge + 1 && Column("weight") < Double(limit) * 1.5 + 2
    )
    let average = adults.isEmpty ? 0 : adults.map(\.weight).reduce(0, +) / Double(adults.count)
    let removed = try await store.deleteAll(
        Sample.self,
        where: Column("weight") > average * 2 || Column("age") < minimumAge - 1 && Column("email") == nil
    )
    let names = try await store.read { tx in
        try tx.fetchAll(Sample.self, where: Column("age") > minimumAge * 2).map { $0.name.uppercased() }
    }
    let count = try await store.transaction { tx in
        try tx.save(
            Sample(
                id: Int64(limit) + 1,
                name: "x",
                age: limit - 3,
                weight: 70.5,
                email: nil,
                joined: Date(),
                active: true
            )
        )
        return try tx.count(Sample.self, where: Column("age") >= limit / 2) * 2
    }
    print(removed, names, count)
}
