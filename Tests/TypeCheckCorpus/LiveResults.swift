// Live results as a user writes them (issue 34): `observe` with and without a predicate, an
// ordering, a limit, a trailing loop body doing arithmetic, the untyped form, inside a task
// and an async function, and handed to a function taking any `AsyncSequence` of arrays.
import Foundation
import Storage

struct Sale: Codable, Sendable, Equatable {
    var id: Int64
    var city: String
    var amount: Double
    var price: Double
}

func showSales(_ store: ObjectStore) async throws {
    for try await sales in store.observe(Sale.self, where: Column("amount") >= 10, orderBy: [.ascending("id")]) {
        let total = sales.reduce(0) { $0 + $1.amount * $1.price }
        print(sales.count, total)
    }
    for try await all in store.observe(Sale.self) {
        if all.count > 100 { break }
    }
    let recent = store.observe(
        Sale.self,
        where: Column("city") == "Oslo" && Column("price") < 2.5,
        orderBy: [.descending("amount")],
        limit: 20
    )
    for try await page in recent { print(page.first?.city ?? "none") }
    for try await rows in store.observe(in: "movies", where: Column("Major Genre") == "Drama") {
        print(rows.first?["Title"] ?? .null)
    }
}

func firstResults<S: AsyncSequence>(_ sequence: S) async throws -> S.Element? where S.Element: Collection {
    var iterator = sequence.makeAsyncIterator()
    return try await iterator.next()
}

func watchInTask(_ store: ObjectStore) -> Task<Int, any Error> {
    Task {
        let first = try await firstResults(store.observe(Sale.self, where: Column("amount") > 1))
        return first?.count ?? 0
    }
}

/// A screen on the main actor, and an actor, each keeping the latest results in its own state.
@MainActor final class SalesScreen {
    var shown: [Sale] = []

    func watch(_ store: ObjectStore) async throws {
        for try await sales in store.observe(Sale.self, where: Column("amount") >= 10, orderBy: [.ascending("id")]) {
            shown = sales
        }
    }
}

actor SalesCounter {
    var count = 0

    func watch(_ store: ObjectStore) async throws {
        for try await rows in store.observe(in: "sales") { count = rows.count }
    }
}
