import Storage

/// Aggregates in SQL: `SELECT <groups>, count(*), sum(x), … FROM t WHERE … GROUP BY <groups>
/// ORDER BY <groups>`, identifiers quoted and values bound as in every other statement.
///
/// SQLite's own answers equal the one-pass computation's for counts, minima and maxima (its
/// BINARY collation is byte order, as `orderBy` sorts) and for sums of integer columns. What it
/// answers otherwise is left to the one-pass computation (`nil`): a sum or average of a real
/// column (SQLite adds reals one by one in its scan order, rounding at each step, where every
/// engine here rounds the exact sum once), and a sum that overflows (SQLite fails with "integer
/// overflow" as soon as a partial sum leaves 64 bits, where the exact sum may fit, and an average
/// of integers must not fail at all). An average of integers is the exact `sum` divided by
/// `count`, rounded once here.
extension SQLiteReadTransaction: AggregatingReadTransaction {
    /// How one aggregate's value is read from the statement's columns.
    private enum Reading {
        case value(Int)
        case average(sum: Int, count: Int)
    }

    func aggregate(_ request: AggregateRequest) throws -> [[StorageValue]]? {
        try checkActive()
        if isUnpinned { try requirePinnedRead() }
        guard let schema = try storedSchema(of: request.collection) else { return nil }
        var compiler = SQLiteQueryCompiler(schema: schema)
        var selected = request.groupBy.map { compiler.column($0) }
        var readings: [Reading] = []
        for aggregate in request.aggregates {
            let column = aggregate.column.map { compiler.column($0) }
            let isInteger = aggregate.column.flatMap { schema.column(named: $0)?.type } == .integer
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
            let groups = request.groupBy.map { compiler.column($0) }
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
                        }
                    }
                    rows.append(values)
                }
            }
        } catch let error as StorageError where error.message.contains("integer overflow") {
            // A partial sum left 64 bits: the exact sum, or the average, is the one-pass
            // computation's to answer.
            return nil
        }
        return rows
    }
}
