package import Storage

/// What a backend's own `GROUP BY` answers, for the SQL backends' tests: that the aggregates they
/// are meant to compute in SQL do not fall back to the one-pass computation unnoticed.
package enum AggregatePushDown {
    /// Sales in two cities and a null one, as dictionaries, with an integer, a real and a text
    /// column.
    package static var sales: [[String: Any]] {
        [
            ["id": 1, "city": "Oslo", "amount": 20, "price": 0.5],
            ["id": 2, "city": "Oslo", "amount": 30, "price": 1.5],
            ["id": 3, "city": "Bergen", "amount": 5, "price": 2.5],
            ["id": 4, "amount": Int64.max, "price": 4.0],
            ["id": 5, "amount": 1, "price": 4.0],
        ]
    }

    /// The request the SQL engines compute themselves: counts, integer sums and averages,
    /// extremes, per city.
    package static let grouped = AggregateRequest(
        collection: "sales",
        aggregates: [
            .count, .countDistinct("amount"), .sum("amount"), .average("amount"), .minimum("price"),
            .maximum("city"),
        ],
        predicate: .compare("amount", .less, .integer(1_000)),
        groupBy: ["city"]
    )

    /// Its answer.
    package static let groupedAnswer: [[StorageValue]] = [
        [.null, 1, 1, 1, 1.0, 4.0, .null],
        ["Bergen", 1, 1, 5, 5.0, 2.5, "Bergen"],
        ["Oslo", 2, 2, 50, 25.0, 0.5, "Oslo"],
    ]

    /// What the engine answers for `request`, straight from its read transaction: `nil` when it
    /// leaves the request to the one-pass computation.
    package static func answer(_ backend: any StorageBackend, _ request: AggregateRequest) throws -> [[StorageValue]]? {
        try backend.read { transaction in
            guard let engine = transaction as? any AggregatingReadTransaction else { return nil }
            return try engine.aggregate(request)
        }
    }
}
