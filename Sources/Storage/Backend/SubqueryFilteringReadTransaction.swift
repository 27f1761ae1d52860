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
