/// One result of `ObjectStore.aggregate(_:_:where:groupBy:)`: a count, sum, average, minimum or
/// maximum over the records of a group, with SQL's semantics on every engine.
///
/// ```swift
/// let rows = try store.aggregate(Sale.self, [.count, .sum("amount"), .average("price")],
///                                where: Column("amount") > 10, groupBy: [Column("city")])
/// // [["city": "Oslo", "count": 2, "sum(amount)": 31, "avg(price)": 2.5], ...]
/// ```
///
/// Each result is named in the rows it appears in: by default `count`, `count(price)`,
/// `count(distinct customer)`, `sum(amount)`, `avg(price)`, `min(price)`, `max(price)`; `named(_:)`
/// gives it another name.
///
/// - `count` counts records, `count(column)` the non-null values, `countDistinct` the distinct
///   non-null values (numbers as numbers: `1` and `1.0` are one value; text by its bytes).
/// - `sum` of no values is null. A sum of integers is an exact integer, and one that leaves
///   `Int64` throws ``StorageError/Code/valueOutOfRange``; a sum with any real is the real nearest
///   the exact sum (rounded once, so the same whatever order the engine adds the values in).
/// - `average` is a real: the exact sum of integers divided by their count, rounded once; with
///   any real, the rounded sum divided by the count. Null when there are no values.
/// - `minimum` and `maximum` compare as `orderBy` does (numbers, then text by its bytes, then blobs).
/// - Nulls are ignored by all but `count`.
public struct Aggregate: Sendable, Hashable {
    /// What an aggregate computes.
    public enum Function: String, Sendable, Hashable {
        /// The number of records (`count`) or of non-null values (`count(column)`).
        case count
        /// The number of distinct non-null values.
        case countDistinct
        /// The sum of the non-null values.
        case sum
        /// The mean of the non-null values, a real.
        case average
        /// The smallest non-null value.
        case minimum
        /// The largest non-null value.
        case maximum
    }

    /// What the aggregate computes.
    public let function: Function
    /// The column it reads; `nil` only for `count`, which counts records.
    public let column: String?
    /// The key of the result in each row.
    public let name: String

    private init(_ function: Function, _ column: String?, name: String) {
        self.function = function
        self.column = column
        self.name = name
    }

    /// The number of records: SQL's `count(*)`, named `count`.
    public static var count: Aggregate { Aggregate(.count, nil, name: "count") }

    /// The number of records whose `column` is not null, named `count(column)`.
    /// - Parameter column: the column counted.
    /// - Returns: the aggregate.
    public static func count(_ column: String) -> Aggregate {
        Aggregate(.count, column, name: "count(\(column))")
    }

    /// The number of distinct non-null values of `column`, named `count(distinct column)`.
    /// - Parameter column: the column whose values are counted.
    /// - Returns: the aggregate.
    public static func countDistinct(_ column: String) -> Aggregate {
        Aggregate(.countDistinct, column, name: "count(distinct \(column))")
    }

    /// The sum of the non-null values of `column`, named `sum(column)`: null when there are none,
    /// an exact integer when all are integers, a real otherwise.
    /// - Parameter column: a numeric column.
    /// - Returns: the aggregate.
    public static func sum(_ column: String) -> Aggregate {
        Aggregate(.sum, column, name: "sum(\(column))")
    }

    /// The mean of the non-null values of `column`, a real, named `avg(column)`; null when there
    /// are none.
    /// - Parameter column: a numeric column.
    /// - Returns: the aggregate.
    public static func average(_ column: String) -> Aggregate {
        Aggregate(.average, column, name: "avg(\(column))")
    }

    /// The smallest non-null value of `column` in `orderBy`'s order, named `min(column)`.
    /// - Parameter column: the column compared.
    /// - Returns: the aggregate.
    public static func minimum(_ column: String) -> Aggregate {
        Aggregate(.minimum, column, name: "min(\(column))")
    }

    /// The largest non-null value of `column` in `orderBy`'s order, named `max(column)`.
    /// - Parameter column: the column compared.
    /// - Returns: the aggregate.
    public static func maximum(_ column: String) -> Aggregate {
        Aggregate(.maximum, column, name: "max(\(column))")
    }

    /// The same aggregate under another name: `Aggregate.sum("amount").named("total")`.
    /// - Parameter name: the key of the result in each row.
    /// - Returns: the renamed aggregate.
    public func named(_ name: String) -> Aggregate {
        Aggregate(function, column, name: name)
    }

    /// The aggregate reading `column` instead (the stored spelling of the name it was given),
    /// keeping its name.
    package func reading(_ column: String) -> Aggregate {
        Aggregate(function, column, name: name)
    }
}

/// What a backend that computes aggregates itself is asked (``AggregatingReadTransaction``).
public struct AggregateRequest: Sendable, Hashable {
    /// The collection read.
    public var collection: String
    /// The results of each row after its group values, in order.
    public var aggregates: [Aggregate]
    /// Which records; `nil` for all. Simplified, with values converted with the columns'
    /// affinity, as in a ``ScanRequest``.
    public var predicate: StoragePredicate?
    /// The group columns, as stored: one row per distinct combination of their values.
    public var groupBy: [String]
    /// For each of `groupBy`, the keys of the field inside the column's JSON text that is grouped
    /// by (as `Column("address", "city")` names it), or no keys for the column itself. Only a
    /// transaction that declares ``AggregatingReadTransaction/groupsByNestedFields`` is asked
    /// a request with keys here; the field reads as ``Column`` says (missing, JSON `null` and
    /// text that is not JSON read as null, which is a group of its own).
    public var groupPaths: [[String]]

    /// Creates a request.
    /// - Parameters:
    ///   - collection: the collection read.
    ///   - aggregates: the results of each row.
    ///   - predicate: which records; `nil` for all.
    ///   - groupBy: the group columns; empty for one row over every record.
    public init(collection: String, aggregates: [Aggregate], predicate: StoragePredicate?, groupBy: [String]) {
        self.init(
            collection: collection,
            aggregates: aggregates,
            predicate: predicate,
            groupBy: groupBy,
            groupPaths: groupBy.map { _ in [] }
        )
    }

    /// Creates a request that may group by fields inside columns' JSON text.
    /// - Parameters:
    ///   - collection: the collection read.
    ///   - aggregates: the results of each row.
    ///   - predicate: which records; `nil` for all.
    ///   - groupBy: the group columns; empty for one row over every record.
    ///   - groupPaths: for each group column, the keys of the field grouped by; none for the
    ///     column itself. As many as `groupBy`.
    public init(
        collection: String,
        aggregates: [Aggregate],
        predicate: StoragePredicate?,
        groupBy: [String],
        groupPaths: [[String]]
    ) {
        precondition(groupPaths.count == groupBy.count, "one path for each group column")
        self.collection = collection
        self.aggregates = aggregates
        self.predicate = predicate
        self.groupBy = groupBy
        self.groupPaths = groupPaths
    }

    /// Whether a group is a field inside a column's JSON text.
    package var groupsByNestedFields: Bool {
        groupPaths.contains { !$0.isEmpty }
    }
}

/// A read transaction that can compute aggregates in its engine (SQL's `GROUP BY`) instead of
/// handing every record to ``ObjectStore``, which otherwise computes them in one pass over `scan`.
///
/// Implementation requirements: answer exactly what the one-pass computation answers (the
/// conformance suite compares them), or `nil` to let it compute the request. In particular: one
/// row per group, groups ascending by their values with nulls first and text in byte order (as
/// `scan` orders), exactly one row without group columns (also over no records); integer sums
/// exact, and a sum that leaves `Int64` throws ``StorageError`` with `.valueOutOfRange` (or answer
/// `nil`); averages and real sums rounded once, as ``Aggregate`` says. Answer `nil` before
/// reading anything when the engine cannot do that (a real sum the engine adds up in its own
/// order, a minimum of a type it cannot compare): in a single-query read
/// (`StorageBackend.readSingleQuery`) a second query is not allowed.
public protocol AggregatingReadTransaction: BackendReadTransaction {
    /// The rows of `request`, each its group values (in `groupBy` order) followed by its
    /// aggregates' values (in `aggregates` order), or `nil` when the engine does not compute it.
    /// - Parameter request: the aggregates, checked against the stored schema.
    /// - Returns: the rows, groups in ascending order, or `nil`.
    /// - Throws: ``StorageError``: `.valueOutOfRange` for an integer sum beyond `Int64`, or an
    ///   engine failure.
    func aggregate(_ request: AggregateRequest) throws -> [[StorageValue]]?

    /// Whether ``aggregate(_:)`` reads ``AggregateRequest/groupPaths``: groups by a field inside
    /// a column's JSON text as ``Column`` reads it. `false` by default, and the store then
    /// computes such a request in one pass over `scan` without asking.
    var groupsByNestedFields: Bool { get }
}

extension AggregatingReadTransaction {
    /// `false`: a request grouped by a nested field is computed by the store.
    public var groupsByNestedFields: Bool { false }
}
