import Storage

/// Aggregates in SQL: `SELECT <groups>, count(*), sum(x)::text, … FROM t WHERE … GROUP BY
/// <groups> ORDER BY <groups> ASC NULLS FIRST`, every value a bound parameter.
///
/// Text columns are `COLLATE "C"`, so groups, minima and maxima of text are in byte order, as
/// `orderBy` sorts. `sum` of a `bigint` column is PostgreSQL's exact `numeric`, read as text: one
/// beyond `Int64` throws `.valueOutOfRange` here, as on every engine; an average of integers is
/// that exact sum divided by the count, rounded once here (PostgreSQL's own `avg` rounds the
/// `numeric` quotient to a scale of its choosing). Left to the one-pass computation (`nil`,
/// before any statement runs): sums and averages of `double precision` columns (PostgreSQL adds
/// them one by one in its scan order, rounding at each step), and minima and maxima of `bytea`,
/// which PostgreSQL does not define.
extension PostgreSQLReadTransaction: AggregatingReadTransaction {
    /// How one aggregate's value is read from the statement's columns.
    private enum Reading {
        case value(Int)
        case sum(Int, column: String)
        case average(sum: Int, count: Int)
    }

    func aggregate(_ request: AggregateRequest) throws -> [[StorageValue]]? {
        try checkActive()
        try willRunStatement()
        let named = request.groupBy + request.aggregates.compactMap(\.column) + (request.predicate?.columnNames ?? [])
        guard let (schema, stamp) = try storedEntry(of: request.collection, needing: named) else { return nil }
        var compiler = makeCompiler(schema)
        var selected = request.groupBy.map(compiler.selected)
        var readings: [Reading] = []
        for aggregate in request.aggregates {
            let column = aggregate.column.map(compiler.selected)
            let type = aggregate.column.flatMap { compiler.definition(of: $0)?.type }
            switch (aggregate.function, column) {
            case (.count, nil):
                selected.append("count(*)")
            case (.count, let column?):
                selected.append("count(\(column))")
            case (.countDistinct, let column?):
                selected.append("count(DISTINCT \(column))")
            case (.sum, let column?) where type == .integer:
                readings.append(.sum(selected.count, column: aggregate.column!))
                selected.append("sum(\(column))::text")
                continue
            case (.average, let column?) where type == .integer:
                readings.append(.average(sum: selected.count, count: selected.count + 1))
                selected.append("sum(\(column))::text")
                selected.append("count(\(column))")
                continue
            case (.minimum, let column?) where type != .blob:
                selected.append("min(\(column))")
            case (.maximum, let column?) where type != .blob:
                selected.append("max(\(column))")
            default:
                return nil
            }
            readings.append(.value(selected.count - 1))
        }
        var condition = ""
        if let predicate = request.predicate {
            guard let compiled = compiler.compile(predicate) else { return nil }
            condition = " WHERE " + compiled
        }
        var parameters = compiler.parameters
        // The first row carries the collection's catalog stamp, as a scan's does.
        parameters.append(.text(Identifier.folded(request.collection)))
        selected.append(catalog.stampSQL(parameter: parameters.count))
        let stampIndex = selected.count - 1
        var sql = "SELECT " + selected.joined(separator: ", ") + " FROM " + catalog.table(of: request.collection)
        sql += condition
        if !request.groupBy.isEmpty {
            sql += " GROUP BY " + request.groupBy.map(compiler.selected).joined(separator: ", ")
            sql += compiler.orderByClause(request.groupBy.map { Ordering.ascending($0) })
        }
        try willRunQuery()
        let result = try connection.query(sql, parameters, "cannot compute aggregates", collection: request.collection)
        let groupCount = request.groupBy.count
        var rows: [[StorageValue]] = []
        var checked = false
        try result.forEachRow { row in
            if !checked {
                try checkStamp(row.value(at: stampIndex), expected: stamp, collection: request.collection)
                checked = true
            }
            var values = (0..<groupCount).map { row.value(at: $0) }
            for reading in readings {
                switch reading {
                case .value(let index):
                    values.append(row.value(at: index))
                case .sum(let index, let column):
                    guard let total = try Self.exactInteger(row.value(at: index), column, request.collection) else {
                        values.append(.null)
                        continue
                    }
                    do {
                        values.append(try ExactSum.integer(total, column: column))
                    } catch let error as StorageError {
                        throw error.inCollection(request.collection)
                    }
                case .average(let sum, let count):
                    guard let total = try Self.exactInteger(row.value(at: sum), "", request.collection),
                        case .integer(let number) = row.value(at: count), number > 0
                    else {
                        values.append(.null)
                        continue
                    }
                    values.append(.real(ExactSum.quotient(total, Int(number))))
                }
            }
            rows.append(values)
            return true
        }
        return rows
    }

    /// A `numeric` sum of `bigint`s read as text, exactly; `nil` for a null sum.
    private static func exactInteger(_ value: StorageValue, _ column: String, _ collection: String) throws -> Int128? {
        guard case .text(let text) = value else { return nil }
        guard let total = Int128(text) else {
            // 2^63 values of at most 2^63 stay within 127 bits: only a malformed answer gets here.
            throw StorageError(
                .engine,
                "the server answered the sum of \(Identifier.quoted(column)) with \(text), not an integer",
                collection: collection,
                column: column
            )
        }
        return total
    }
}
