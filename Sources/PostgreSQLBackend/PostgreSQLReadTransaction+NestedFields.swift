import Storage

extension PostgreSQLReadTransaction {
    /// Whether `scan` must take `scanWithNestedFields`: the request filters or sorts on a field
    /// inside a column's JSON text.
    static func readsNestedFields(_ request: ScanRequest) -> Bool {
        if request.ordering.contains(where: { !$0.path.isEmpty }) { return true }
        var found = false
        request.predicate?.forEachTerm { term in
            if case .nested = term { found = true }
        }
        return found
    }

    /// A scan that filters or sorts on nested fields. The conditions without a nested field
    /// (the request's top-level `&&` operands) go to the server as usual; the others are tested
    /// here with `PreparedPredicate`, and an ordering by a nested field sorts here with the
    /// rules of `PredicateEvaluator.precedes`, over the rows the server returns. The offset and
    /// limit are applied after both.
    ///
    /// Not pushed down: the servers this backend supports (PostgreSQL 15 among them) have no
    /// `IS JSON` or `pg_input_is_valid`, so `column::json #> path` would fail the whole statement
    /// on one text value that is not JSON, where every other engine reads the field as null.
    func scanWithNestedFields(_ request: ScanRequest, _ body: (any StorageRow) throws -> Bool) throws {
        var pushed: [StoragePredicate] = []
        var residual: [StoragePredicate] = []
        for conjunct in request.predicate?.conjuncts ?? [] {
            var nested = false
            conjunct.forEachTerm { term in
                if case .nested = term { nested = true }
            }
            if nested { residual.append(conjunct) } else { pushed.append(conjunct) }
        }
        let sortsHere = request.ordering.contains { !$0.path.isEmpty }
        // The rows carry the requested columns, then those the conditions and orderings here read.
        var columns = request.columns
        var positions: [String: Int] = [:]
        let needed = residual.flatMap(\.columnNames) + (sortsHere ? request.ordering.map(\.column) : [])
        for name in needed where positions[name] == nil {
            if let position = columns.firstIndex(of: name) {
                positions[name] = position
            } else {
                positions[name] = columns.count
                columns.append(name)
            }
        }
        var inner = request
        inner.columns = columns
        inner.predicate = pushed.isEmpty ? nil : .all(pushed)
        inner.limit = nil
        inner.offset = 0
        if sortsHere { inner.ordering = [] }
        let filter = PreparedPredicate(residual.isEmpty ? nil : .all(residual))
        var remaining = request.limit ?? Int.max
        var skipped = 0
        guard remaining > 0 else {
            // Still checks the collection, as any scan does, and returns nothing.
            inner.limit = 0
            return try scan(inner) { _ in false }
        }
        if !sortsHere {
            try scan(inner) { row in
                guard filter.matches({ name in positions[name].map { row.value(at: $0) } ?? .null }) else {
                    return true
                }
                if skipped < request.offset {
                    skipped += 1
                    return true
                }
                remaining -= 1
                return try body(row) && remaining > 0
            }
            return
        }
        var rows: [BufferedRow] = []
        var keys: [[StorageValue]] = []
        try scan(inner) { row in
            guard filter.matches({ name in positions[name].map { row.value(at: $0) } ?? .null }) else { return true }
            rows.append(BufferedRow(values: (0..<columns.count).map { row.value(at: $0) }))
            // Each record's sort values read once, not once per comparison.
            keys.append(
                request.ordering.map { $0.value(from: positions[$0.column].map { row.value(at: $0) } ?? .null) }
            )
            return true
        }
        // The primary key is the last sort key, so no two records tie.
        let order = (0..<rows.count).sorted { lhs, rhs in
            for (index, sortKey) in request.ordering.enumerated() {
                let order = StorageValue.compare(keys[lhs][index], keys[rhs][index])
                if order != 0 { return sortKey.isDescending ? order > 0 : order < 0 }
            }
            return false
        }
        for index in order.dropFirst(request.offset).prefix(remaining) {
            guard try body(rows[index]) else { return }
        }
    }
}
