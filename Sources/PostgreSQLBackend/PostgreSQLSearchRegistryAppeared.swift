import Storage

/// Thrown, internally, when a write transaction that answered "the store keeps no full-text
/// index" from the process's cache (`PostgreSQLSchemaCache.searchRegistryKnownAbsent`) finds at
/// its commit that the store's registry of full-text indexes (`_search_indexes`) exists: another
/// process (or another backend of this one) created it since. The transaction was rolled back,
/// and the backend forgets the cached answer and runs it again, so the store then keeps the
/// index with the records it writes. It never leaves the backend.
///
/// Why the cache: the store asks, at every write, whether the collection has a full-text index,
/// and on PostgreSQL the look-up of a collection that does not exist is a catalog query, which
/// would begin a transaction before a single save that is otherwise one statement. The check
/// the cached answer needs is made in the same statement instead (`condition(_:)`): in the
/// single save's upsert, or as a pipelined statement before the `COMMIT`.
struct PostgreSQLSearchRegistryAppeared: Error {
    /// The name the store gives its registry of full-text indexes.
    static let registry = SearchIndexKeys.indexes

    /// The SQLSTATE of a failed check (`PostgreSQLChangeFeed.listenersAppeared`'s division by
    /// zero), which the connection turns into this marker for the checking statement only.
    static let code = PostgreSQLError.Code.divisionByZero

    /// A condition true while the store's catalog has no row for the registry.
    static func condition(_ catalog: PostgreSQLCatalog) -> String {
        "NOT EXISTS (SELECT 1 FROM " + catalog.table + " WHERE folded = "
            + PostgreSQLIdentifier.literal(Identifier.folded(registry)) + ")"
    }

    /// The statement pipelined before the `COMMIT` of a transaction that used the cached
    /// answer: it divides by zero when the registry exists.
    static func checkSQL(_ catalog: PostgreSQLCatalog) -> String {
        "SELECT 1 / (" + condition(catalog) + ")::int"
    }
}
