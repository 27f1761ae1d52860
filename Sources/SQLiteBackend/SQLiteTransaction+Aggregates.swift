import Storage

/// Aggregates in SQL: `SELECT <groups>, count(*), sum(x), … FROM t WHERE … GROUP BY <groups>
/// ORDER BY <groups>`, identifiers quoted and values bound as in every other statement.
///
/// SQLite's own answers equal the one-pass computation's for counts, minima and maxima (its
/// BINARY collation is byte order, as `orderBy` sorts) and for sums of integer columns. A sum of a
/// real column is `storage_exact_sum` (`SQLiteExactSum`), not SQLite's `sum`, which adds reals one
/// by one in its scan order, rounding at each step, where every engine here rounds the exact sum
/// once. Left to the one-pass computation (`nil`): a sum that overflows (SQLite fails with
/// "integer overflow" as soon as a partial sum leaves 64 bits, where the exact sum may fit, and
/// an average of integers must not fail at all), a real sum beyond the finite reals, and sums of
/// untyped columns. An average is the exact sum divided by the count, rounded here as
/// `ExactSum` does.
extension SQLiteReadTransaction: AggregatingReadTransaction {
    /// How one aggregate's value is read from the statement's columns.
    private enum Reading {
        case value(Int)
        case average(sum: Int, count: Int)
        case realAverage(sum: Int, count: Int)
    }

    /// Groups by a field inside a column's JSON text with the expression a nested condition
    /// uses (`json_extract` with a bound path, null unless the value is valid JSON text).
    var groupsByNestedFields: Bool { true }

    func aggregate(_ request: AggregateRequest) throws -> [[StorageValue]]? {
        try checkActive()
        if isUnpinned { try requirePinnedRead() }
        guard let schema = try storedSchema(of: request.collection) else { return nil }
        if request.groupPaths.contains(where: { !$0.isEmpty && !SQLiteQueryCompiler.expressible($0) }) { return nil }
        var compiler = SQLiteQueryCompiler(schema: schema)
        // The group expressions come first in the statement, so their bound paths (if any) are
        // the first arguments, before the WHERE clause's.
        var selected = zip(request.groupBy, request.groupPaths).map { compiler.column($0, path: $1) }
        var readings: [Reading] = []
        for aggregate in request.aggregates {
            let column = aggregate.column.map { compiler.column($0) }
            let type = aggregate.column.flatMap { schema.column(named: $0)?.type }
            let isInteger = type == .integer
            switch (aggregate.function, column) {
            case (.count, nil):
                selected.append("count(*)")
            case (.count, let column?):
                selected.append("count(\(column))")
            case (.countDistinct, let column?):
                selected.append("count(DISTINCT \(column))")
            case (.sum, let column?) where isInteger:
                selected.append("sum(\(column))")
            case (.average, let column?) where isInteger:
                readings.append(.average(sum: selected.count, count: selected.count + 1))
                selected.append("sum(\(column))")
                selected.append("count(\(column))")
                continue
            case (.sum, let column?) where type == .real:
                selected.append("\(SQLiteExactSum.name)(\(column))")
            case (.average, let column?) where type == .real:
                readings.append(.realAverage(sum: selected.count, count: selected.count + 1))
                selected.append("\(SQLiteExactSum.name)(\(column))")
                selected.append("count(\(column))")
                continue
            case (.minimum, let column?):
                selected.append("min(\(column))")
            case (.maximum, let column?):
                selected.append("max(\(column))")
            default:
                return nil
            }
            readings.append(.value(selected.count - 1))
        }
        guard let whereClause = compiler.whereClause(request.predicate) else { return nil }
        if selected.isEmpty { selected = ["NULL"] }
        var sql = "SELECT " + selected.joined(separator: ", ") + " FROM " + quote(request.collection) + whereClause
        if !request.groupBy.isEmpty {
            // Each group by its position in the result (SQLite's `GROUP BY 1`), so a nested
            // field's expression and its bound path are written once.
            let groups = request.groupBy.indices.map { String($0 + 1) }
            sql += " GROUP BY " + groups.joined(separator: ", ")
            sql += " ORDER BY " + groups.map { $0 + " ASC" }.joined(separator: ", ")
        }
        let groupCount = request.groupBy.count
        var rows: [[StorageValue]] = []
        do {
            try connection.withStatement(sql, collection: request.collection) { statement in
                try statement.bind(compiler.arguments)
                let row = statement.row
                while try statement.step("cannot compute aggregates", collection: request.collection) {
                    var values = (0..<groupCount).map { row.value(at: $0) }
                    for reading in readings {
                        switch reading {
                        case .value(let index):
                            values.append(row.value(at: index))
                        case .average(let sum, let count):
                            guard case .integer(let total) = row.value(at: sum),
                                case .integer(let number) = row.value(at: count), number > 0
                            else {
                                values.append(.null)
                                continue
                            }
                            values.append(.real(ExactSum.quotient(Int128(total), Int(number))))
                        case .realAverage(let sum, let count):
                            // The sum rounded once, divided by the count: as `ExactSum.average`.
                            guard case .real(let total) = row.value(at: sum),
                                case .integer(let number) = row.value(at: count), number > 0
                            else {
                                values.append(.null)
                                continue
                            }
                            let mean = total / Double(number)
                            values.append(.real(mean == 0 ? 0 : mean))
                        }
                    }
                    rows.append(values)
                }
            }
        } catch let error as StorageError
            where error.message.contains("integer overflow") || error.message.contains(SQLiteExactSum.declined)
        {
            // A partial sum left 64 bits, or a real sum its function could not keep exactly: the
            // one-pass computation answers (an exact sum that fits, an average, or the error).
            return nil
        }
        return rows
    }
}
