extension Column {
    /// Whether the column's value is the primary key of a record of `type` matching `predicate`:
    /// SQL's `column IN (SELECT key FROM collection WHERE predicate)`, usable wherever a predicate
    /// is (fetches, counts, deletes, updates, aggregates, and inside `&&`, `||` and `!`).
    ///
    /// ```swift
    /// let french = Column("authorID").in(Author.self, where: Column("country") == "FR")
    /// let books = try store.fetchAll(Book.self, where: french)
    /// ```
    /// SQLite and PostgreSQL run it as one statement; the other engines resolve the sub-query
    /// first, in the same transaction. A collection that does not exist yet holds no key.
    /// - Parameters:
    ///   - type: the model whose primary keys are looked for; its collection is queried.
    ///   - predicate: which of its records; `nil` for all.
    /// - Returns: the predicate.
    public func `in`<Target>(_ type: Target.Type, where predicate: StoragePredicate?) -> StoragePredicate {
        let collection = (type as? any StorableModel.Type)?.collectionName ?? String(describing: type)
        return applying(.subquery(name, collection: collection, predicate: predicate))
    }

    /// Whether the column's value is the primary key of a record of the collection named
    /// `collection` matching `predicate`: the untyped form of ``in(_:where:)``.
    /// - Parameters:
    ///   - collection: the queried collection's name.
    ///   - predicate: which of its records; `nil` for all.
    /// - Returns: the predicate.
    public func `in`(collection: String, where predicate: StoragePredicate?) -> StoragePredicate {
        applying(.subquery(name, collection: collection, predicate: predicate))
    }
}

extension Optional where Wrapped == StoragePredicate {
    /// Whether a query with this predicate reads with one query: not when it holds a sub-query,
    /// which the store may resolve with a query of its own first.
    var isSingleQuery: Bool {
        guard let predicate = self else { return true }
        return !predicate.containsSubquery
    }
}

extension Session {
    /// `predicate` with each sub-query replaced by `.in` over the primary keys it selects, read
    /// in this session's transaction (so a write session sees its own writes).
    /// - Throws: ``StorageError`` as a query of the sub-query's collection does (`.unknownColumn`,
    ///   `.invalidIdentifier`, `.invalidQuery`).
    func resolveSubqueries(_ predicate: StoragePredicate) throws -> StoragePredicate {
        try predicate.fold(
            term: { term in
                switch term {
                case .subquery(let column, let collection, let inner):
                    return try resolveSubquery(column, collection, inner)
                case .nested(let path, let inner) where inner.containsSubquery:
                    return .nested(path: path, try resolveSubqueries(inner))
                default:
                    return term
                }
            },
            all: StoragePredicate.all,
            any: StoragePredicate.any,
            not: StoragePredicate.not
        )
    }

    /// `predicate` with each sub-query checked for a backend that runs them itself
    /// (``SubqueryFilteringReadTransaction``): its collection spelt as stored and its predicate
    /// checked and converted as a query's (`makeRequest`); one over a collection that does not
    /// exist becomes an empty `.in`.
    func checkSubqueries(_ predicate: StoragePredicate) throws -> StoragePredicate {
        try predicate.fold(
            term: { term in
                switch term {
                case .subquery(let column, let collection, let inner):
                    try Identifier.validateCollection(collection, allowingReserved: true)
                    guard let stored = try storedSchema(collection) else {
                        return try Self.noCollection(inner, .in(column, []))
                    }
                    let request = try makeRequest(
                        catalog.readPlan(for: stored),
                        columns: [stored.primaryKey],
                        where: inner,
                        orderBy: [],
                        limit: nil
                    )
                    return .subquery(column, collection: stored.name, predicate: request.predicate)
                case .nested(let path, let inner) where inner.containsSubquery:
                    return .nested(path: path, try checkSubqueries(inner))
                default:
                    return term
                }
            },
            all: StoragePredicate.all,
            any: StoragePredicate.any,
            not: StoragePredicate.not
        )
    }

    /// `.in` over the primary keys of `collection`'s records matching `inner`.
    private func resolveSubquery(
        _ column: String,
        _ collection: String,
        _ inner: StoragePredicate?
    ) throws -> StoragePredicate {
        try Identifier.validateCollection(collection, allowingReserved: true)
        guard let stored = try storedSchema(collection) else {
            return try Self.noCollection(inner, .in(column, []))
        }
        let request = try makeRequest(
            catalog.readPlan(for: stored),
            columns: [stored.primaryKey],
            where: inner,
            orderBy: [],
            limit: nil
        )
        return .in(column, try keys(of: stored, where: request.predicate))
    }
}
