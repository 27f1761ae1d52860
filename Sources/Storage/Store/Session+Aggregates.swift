/// Aggregates: counts, sums, averages, minima and maxima per group, computed by the engine when
/// its read transaction adopts ``AggregatingReadTransaction`` and answers, otherwise in one pass
/// over `scan` (`AggregateComputation`).
extension Session {
    func aggregate<T>(
        _ type: T.Type,
        _ aggregates: [Aggregate],
        where predicate: StoragePredicate?,
        groupBy: [Column]
    ) throws -> [[String: StorageValue]] {
        try aggregate(in: try catalog.info(for: type).collection, aggregates, where: predicate, groupBy: groupBy)
    }

    func aggregate(
        in collection: String,
        _ aggregates: [Aggregate],
        where predicate: StoragePredicate?,
        groupBy: [Column]
    ) throws -> [[String: StorageValue]] {
        try Identifier.validateCollection(collection)
        let names = groupBy.map(Self.groupName) + aggregates.map(\.name)
        var seen: Set<String> = []
        for name in names where !seen.insert(name).inserted {
            throw StorageError(
                .invalidQuery,
                "two results of the aggregate are named \(Identifier.spelling(name)); give one another name"
                    + " with named(_:)",
                collection: collection,
                column: name
            )
        }
        guard let stored = try storedSchema(collection) else {
            // Nothing was ever stored: no groups, or the one row of no records.
            let empty = aggregates.map { aggregate -> StorageValue in
                aggregate.function == .count || aggregate.function == .countDistinct ? .integer(0) : .null
            }
            let rows = groupBy.isEmpty ? [Self.dictionary(names, empty)] : []
            return try Self.noCollection(predicate, rows)
        }
        let plan = catalog.readPlan(for: stored)
        let groupColumns = try groupBy.map { try Self.storedColumn($0.name, plan) }
        for (group, column) in zip(groupBy, groupColumns) where !group.path.isEmpty {
            try Self.checkPath(group.path, on: column, plan.schema)
        }
        let resolved = try aggregates.map { aggregate in
            try aggregate.column.map { aggregate.reading(try Self.storedColumn($0, plan)) } ?? aggregate
        }
        for aggregate in resolved where aggregate.function == .sum || aggregate.function == .average {
            let column = aggregate.column!
            let type = plan.types[column] ?? .untyped
            if type == .text || type == .blob {
                throw StorageError(
                    .invalidQuery,
                    "\(aggregate.name) adds numbers, but column \(Identifier.quoted(column)) is a \(type) column",
                    collection: stored.name,
                    column: column
                )
            }
        }
        if aggregates.isEmpty && groupBy.isEmpty {
            // Nothing to compute: the one row of no values (SQL's `SELECT` of no aggregate would
            // be a row per record instead).
            _ = try makeRequest(plan, columns: [], where: predicate, orderBy: [], limit: nil)
            return [[:]]
        }
        var columns: [String] = []
        for column in groupColumns + resolved.compactMap(\.column) where !columns.contains(column) {
            columns.append(column)
        }
        var scan = try makeRequest(plan, columns: columns, where: predicate, orderBy: [], limit: nil)
        // Groups are sorted at the end; the records may come in any order.
        scan.ordering = []
        let request = AggregateRequest(
            collection: stored.name,
            aggregates: resolved,
            predicate: scan.predicate,
            groupBy: groupColumns,
            groupPaths: groupBy.map(\.path)
        )
        let rows: [[StorageValue]]
        if let engine = reader as? any AggregatingReadTransaction,
            !request.groupsByNestedFields || engine.groupsByNestedFields,
            let answered = try engine.aggregate(request)
        {
            rows = answered
        } else {
            var computation = AggregateComputation(
                request,
                columns: columns,
                types: columns.map { plan.types[$0] ?? .untyped }
            )
            try reader.scan(scan) { row in
                try computation.add(row)
                return true
            }
            rows = try computation.rows()
        }
        return rows.map { Self.dictionary(names, $0) }
    }

    /// The key of a group's value in each row: the column's name, or for a field inside its JSON
    /// text the name and the path's keys joined by dots (`Column("address", "city")` is
    /// `"address.city"`).
    static func groupName(_ column: Column) -> String {
        column.path.isEmpty ? column.name : ([column.name] + column.path).joined(separator: ".")
    }

    /// The stored spelling of the column a query names, or `.unknownColumn` (a column spelt in
    /// another Unicode normalization included, as in `makeRequest`).
    private static func storedColumn(_ name: String, _ plan: ReadPlan) throws -> String {
        if let slot = plan.slotByName[name], Identifier.spelledAlike(plan.columns[slot], name) {
            return plan.columns[slot]
        }
        let other = plan.schema.column(named: name).map { " (it has \(Identifier.spelling($0.name)))" } ?? ""
        throw StorageError(
            .unknownColumn,
            "collection '\(plan.schema.name)' has no column \(Identifier.spelling(name))" + other,
            collection: plan.schema.name,
            column: name
        )
    }

    private static func dictionary(_ names: [String], _ values: [StorageValue]) -> [String: StorageValue] {
        var row: [String: StorageValue] = [:]
        row.reserveCapacity(names.count)
        for (name, value) in zip(names, values) { row[name] = value }
        return row
    }
}
