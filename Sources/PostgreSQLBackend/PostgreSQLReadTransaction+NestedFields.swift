import Storage

extension PostgreSQLReadTransaction {
    /// A scan ordered by a field inside a column's JSON text, sorted here with
    /// `PredicateEvaluator.precedes` (which reads the field as `NestedField` does) over the
    /// matching rows, then cut to the request's offset and limit.
    ///
    /// Not pushed down to the server: the servers this backend supports (PostgreSQL 15 among
    /// them) have no `IS JSON` or `pg_input_is_valid`, so `column::json #> path` would fail the
    /// whole statement on one text value that is not JSON, where every other engine reads the
    /// field as null. Filters on nested fields are evaluated here for the same reason (the
    /// compiler leaves `.nested` nodes to `PreparedPredicate`).
    func scanSortingNestedFields(_ request: ScanRequest, _ body: (any StorageRow) throws -> Bool) throws {
        if let limit = request.limit, limit <= 0 {
            // Still checks the collection and the query, as a scan that returns nothing.
            var empty = request
            empty.ordering = []
            return try scan(empty) { _ in false }
        }
        var columns = request.columns
        var positions: [String: Int] = [:]
        for sortKey in request.ordering where positions[sortKey.column] == nil {
            if let position = columns.firstIndex(of: sortKey.column) {
                positions[sortKey.column] = position
            } else {
                positions[sortKey.column] = columns.count
                columns.append(sortKey.column)
            }
        }
        var unsorted = request
        unsorted.columns = columns
        unsorted.ordering = []
        unsorted.limit = nil
        unsorted.offset = 0
        var rows: [BufferedRow] = []
        try scan(unsorted) { row in
            rows.append(BufferedRow(values: (0..<columns.count).map { row.value(at: $0) }))
            return true
        }
        // Each record's sort values read once, not once per comparison.
        let keys = rows.map { row in request.ordering.map { $0.value(from: row.value(at: positions[$0.column]!)) } }
        let order = (0..<rows.count).sorted { lhs, rhs in
            for (index, sortKey) in request.ordering.enumerated() {
                let order = StorageValue.compare(keys[lhs][index], keys[rhs][index])
                if order != 0 { return sortKey.isDescending ? order > 0 : order < 0 }
            }
            return false
        }
        for index in order.dropFirst(request.offset).prefix(request.limit ?? Int.max) {
            guard try body(rows[index]) else { return }
        }
    }
}
