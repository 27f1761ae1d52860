/// A read transaction that runs sub-queries (``StoragePredicate/subquery(_:collection:predicate:)``)
/// in its engine's own statements, so that `Column("authorID").in(Author.self, where: …)` is one
/// statement rather than a query for the keys and a second with them.
///
/// The store hands such a transaction a `.subquery` only over a collection that exists (spelt as
/// stored), its predicate checked against that collection and converted as every predicate is;
/// a sub-query over a collection that does not exist is handed over as an empty `.in`. Other
/// transactions never see one: the store resolves it first.
///
/// # Implementation requirements
///
/// `scan`, `count` and the write transaction's `deleteAll` must answer every predicate holding a
/// `.subquery` with its semantics (an `.in` over the primary keys of the matching records of its
/// collection, in the same snapshot), also where they fall back to evaluating a predicate
/// themselves (``PreparedPredicate`` reads an unresolved sub-query as an empty list): resolve the
/// sub-query there with a scan of its own first. Other calls that take a predicate (an
/// ``AggregatingReadTransaction``'s `aggregate`, a ``BulkUpdatingWriteTransaction``'s updates) may
/// answer `nil` for one, and the store then takes its generic path through `scan`.
public protocol SubqueryFilteringReadTransaction: BackendReadTransaction {}

extension StoragePredicate {
    /// Whether a `.subquery` node appears anywhere in the predicate, inside nested-field terms
    /// too: for a backend that runs sub-queries itself (``SubqueryFilteringReadTransaction``).
    public var containsSubquery: Bool {
        var found = false
        forEachTerm { term in
            switch term {
            case .subquery: found = true
            case .nested(_, let inner): if inner.containsSubquery { found = true }
            default: break
            }
        }
        return found
    }
}

extension SubqueryFilteringReadTransaction {
    /// `predicate` with each sub-query replaced by `.in` over the primary keys of the records it
    /// selects, read with this transaction's own `scan` (so in its snapshot, with its writes): for
    /// the places where the backend evaluates a predicate itself rather than in its engine. A
    /// sub-query over a collection the snapshot lacks selects nothing.
    /// - Parameter predicate: a predicate holding sub-queries, as the store hands them over.
    /// - Returns: the same predicate with no `.subquery` left.
    /// - Throws: ``StorageError`` when a sub-query's records cannot be read.
    public func resolvingSubqueries(_ predicate: StoragePredicate) throws -> StoragePredicate {
        try predicate.fold(
            term: { term in
                switch term {
                case .subquery(let column, let collection, let inner):
                    guard let target = try schema(of: collection) else { return .in(column, []) }
                    var keys: [StorageValue] = []
                    try scan(ScanRequest(collection: target.name, columns: [target.primaryKey], predicate: inner)) {
                        keys.append($0.value(at: 0))
                        return true
                    }
                    return .in(column, keys)
                case .nested(let path, let inner) where inner.containsSubquery:
                    return .nested(path: path, try resolvingSubqueries(inner))
                default:
                    return term
                }
            },
            all: StoragePredicate.all,
            any: StoragePredicate.any,
            not: StoragePredicate.not
        )
    }
}
