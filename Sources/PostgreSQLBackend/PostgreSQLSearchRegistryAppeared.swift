import Storage

/// Thrown, internally, when a write transaction that answered a question about the store's
/// full-text indexes from the process's cache finds at its commit that the answer no longer
/// holds: another process (or another backend of this one) created the registry of full-text
/// indexes (`_search_indexes`), or indexed a collection the transaction wrote, since the cache
/// learned otherwise. The transaction was rolled back, and the backend forgets what it cached
/// and runs it again, so the store then keeps the index with the records it writes. It never
/// leaves the backend.
///
/// Why the cache: the store asks, at every write, whether the collection has a full-text index:
/// on PostgreSQL the look-up of a collection that does not exist is a catalog query, and that of
/// the collection's registry record a query too, either of which would begin a transaction
/// before a single save that is otherwise one statement. The check the cached answer needs is
/// made where the transaction commits instead (`Check`): in the single save's upsert, or as a
/// pipelined statement before the `COMMIT`.
struct PostgreSQLSearchRegistryAppeared: Error {
    /// The name the store gives its registry of full-text indexes.
    static let registry = SearchIndexKeys.indexes

    /// The SQLSTATE of a failed check (`PostgreSQLChangeFeed.listenersAppeared`'s division by
    /// zero), which the connection turns into this marker for the checking statement only.
    static let code = PostgreSQLError.Code.divisionByZero

    /// What a transaction answered from the cache, and so checks where it commits.
    enum Check: Equatable {
        /// Nothing.
        case none
        /// The store has no registry of full-text indexes.
        case noRegistry
        /// The registry has no record of these collections (folded names).
        case unindexed([String])
    }

    /// A condition true while the store's catalog has no row for the registry.
    static func noRegistryCondition(_ catalog: PostgreSQLCatalog) -> String {
        "NOT EXISTS (SELECT 1 FROM " + catalog.table + " WHERE folded = "
            + PostgreSQLIdentifier.literal(Identifier.folded(registry)) + ")"
    }

    /// A condition true while the registry has no record of `folded` (a collection's folded
    /// name, a constant of a writer plan; `nil`: those of the text array parameter `parameter`).
    static func unindexedCondition(_ catalog: PostgreSQLCatalog, folded: String?, parameter: Int = 1) -> String {
        let keys = folded.map { "= " + PostgreSQLIdentifier.literal($0) } ?? "= ANY($\(parameter)::text[])"
        return "NOT EXISTS (SELECT 1 FROM " + catalog.table(of: registry) + " WHERE "
            + PostgreSQLIdentifier.quoted(SearchIndexKeys.indexesSchema.primaryKey) + " " + keys + ")"
    }

    /// The statement pipelined before the `COMMIT` of a transaction whose check is `.noRegistry`:
    /// it divides by zero when the registry exists.
    static func noRegistrySQL(_ catalog: PostgreSQLCatalog) -> String {
        "SELECT 1 / (" + noRegistryCondition(catalog) + ")::int"
    }

    /// The statement pipelined before the `COMMIT` of a transaction whose check is
    /// `.unindexed`: it divides by zero when the registry holds a record of one of the
    /// collections of its parameter (a text array).
    static func unindexedSQL(_ catalog: PostgreSQLCatalog) -> String {
        "SELECT 1 / (" + unindexedCondition(catalog, folded: nil) + ")::int"
    }
}
