import Storage

/// Where the candidates of a query come from: one key, a range of primary keys, a range of an
/// index, or (a primary range without bounds) every record. Candidates are a superset of the
/// answer; every one is still checked with `PredicateEvaluator`, so a plan only saves work.
struct LMDBQueryPlan {
    enum Source {
        case key([UInt8])
        case primary(lower: [UInt8]?, upper: [UInt8]?)
        case index(LMDBCollection.Index, lower: [UInt8]?, upper: [UInt8]?)
    }

    let source: Source

    /// Whether the candidates come in primary-key order.
    var isInKeyOrder: Bool {
        if case .index = source { return false }
        return true
    }

    init(_ predicate: StoragePredicate?, _ info: LMDBCollectionInfo) {
        let collection = info.collection
        var primary = Bounds()
        var indexBounds = Array(repeating: Bounds(), count: collection.indexes.count)
        for conjunct in Self.conjuncts(of: predicate) {
            guard case .compare(let column, let comparison, let value) = conjunct, !value.isNull else { continue }
            if case .real(let number) = value, number.isNaN { continue }
            if column == collection.primaryKey { primary.add(comparison, value) }
            for (position, index) in collection.indexes.enumerated() where index.columns.first == column {
                indexBounds[position].add(comparison, value)
            }
        }
        if let equal = primary.lower, primary.isEquality {
            source = .key(equal)
            return
        }
        if let position = indexBounds.firstIndex(where: \.isEquality) {
            let bounds = indexBounds[position]
            source = .index(collection.indexes[position], lower: bounds.lower, upper: bounds.upper)
        } else if primary.isBounded {
            source = .primary(lower: primary.lower, upper: primary.upper)
        } else if let position = indexBounds.firstIndex(where: \.isBounded) {
            let bounds = indexBounds[position]
            source = .index(collection.indexes[position], lower: bounds.lower, upper: bounds.upper)
        } else {
            source = .primary(lower: nil, upper: nil)
        }
    }

    /// The terms of a top-level conjunction.
    private static func conjuncts(of predicate: StoragePredicate?) -> [StoragePredicate] {
        guard let predicate else { return [] }
        if case .and(let lhs, let rhs) = predicate { return conjuncts(of: lhs) + conjuncts(of: rhs) }
        return [predicate]
    }

    /// Inclusive bounds on one component, as key bytes; the tightest of those added.
    private struct Bounds {
        var lower: [UInt8]?
        var upper: [UInt8]?
        var isEquality = false

        var isBounded: Bool { lower != nil || upper != nil }

        mutating func add(_ comparison: StoragePredicate.Comparison, _ value: StorageValue) {
            let bytes = LMDBKeyCoding.encode(value)
            switch comparison {
            case .equal:
                if !isEquality {
                    lower = bytes
                    upper = bytes
                    isEquality = true
                }
            case .greater, .greaterOrEqual:
                if !isEquality, lower.map({ $0.lexicographicallyPrecedes(bytes) }) ?? true { lower = bytes }
            case .less, .lessOrEqual:
                if !isEquality, upper.map({ bytes.lexicographicallyPrecedes($0) }) ?? true { upper = bytes }
            case .notEqual:
                break
            }
        }
    }
}
