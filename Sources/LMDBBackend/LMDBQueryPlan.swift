import Storage

/// Where the candidates of a query come from: one key, a list of keys (an IN list on the primary
/// key), a range of an index, a list of values of an index (an IN list on its first column), a
/// range of primary keys, or (a primary range without bounds) every record. Candidates are a superset of the
/// answer; every one is still checked with `PredicateEvaluator`, so a plan only saves work.
struct LMDBQueryPlan {
    enum Source {
        case key([UInt8])
        /// The values of an IN list on the primary key (see `keyList`).
        case keys([StorageValue])
        case primary(lower: [UInt8]?, upper: [UInt8]?)
        case index(LMDBCollection.Index, lower: [UInt8]?, upper: [UInt8]?)
        /// The values of an IN list on the index's first column (see `keyList`).
        case indexValues(LMDBCollection.Index, [StorageValue])
    }

    let source: Source

    /// Whether the candidates come in primary-key order.
    var isInKeyOrder: Bool {
        switch source {
        case .index, .indexValues: return false
        case .key, .keys, .primary: return true
        }
    }

    init(_ predicate: StoragePredicate?, _ info: LMDBCollectionInfo) {
        let collection = info.collection
        var primary = Bounds()
        var indexBounds = Array(repeating: Bounds(), count: collection.indexes.count)
        var primaryList: [StorageValue]?
        var indexLists: [[StorageValue]?] = Array(repeating: nil, count: collection.indexes.count)
        for conjunct in predicate?.conjuncts ?? [] {
            if case .in(let column, let list) = conjunct {
                // Only the shortest list of a column matters: every candidate is checked anyway.
                if column == collection.primaryKey, primaryList.map({ list.count < $0.count }) ?? true {
                    primaryList = list
                }
                for (position, index) in collection.indexes.enumerated()
                where index.columns.first == column && (indexLists[position].map { list.count < $0.count } ?? true) {
                    indexLists[position] = list
                }
                continue
            }
            // Any other kind of term (a kind this plan does not know among them) only filters.
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
        if let primaryList {
            source = .keys(primaryList)
        } else if let position = indexBounds.firstIndex(where: \.isEquality) {
            let bounds = indexBounds[position]
            source = .index(collection.indexes[position], lower: bounds.lower, upper: bounds.upper)
        } else if let (position, list) = Self.shortest(indexLists) {
            source = .indexValues(collection.indexes[position], list)
        } else if primary.isBounded {
            source = .primary(lower: primary.lower, upper: primary.upper)
        } else if let position = indexBounds.firstIndex(where: \.isBounded) {
            let bounds = indexBounds[position]
            source = .index(collection.indexes[position], lower: bounds.lower, upper: bounds.upper)
        } else {
            source = .primary(lower: nil, upper: nil)
        }
    }

    /// The position and values of the shortest of the IN lists found for the indexes.
    private static func shortest(_ lists: [[StorageValue]?]) -> (Int, [StorageValue])? {
        lists.indices.compactMap { position in lists[position].map { (position, $0) } }.min { $0.1.count < $1.1.count }
    }

    /// The key bytes of the values of an IN list that can equal a stored value (not null, not
    /// NaN), sorted and without repeats (`1` and `1.0` encode alike). Built only once the list is
    /// known to be shorter than the collection: a longer one is answered by reading everything.
    static func keyList(_ values: [StorageValue]) -> [[UInt8]] {
        var keys = Set<[UInt8]>()
        for value in values where !value.isNull {
            if case .real(let number) = value, number.isNaN { continue }
            keys.insert(LMDBKeyCoding.encode(value))
        }
        return keys.sorted { $0.lexicographicallyPrecedes($1) }
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
