import Storage

/// The committed schemas of the store's collections, shared by the backend's connections, by
/// folded name. Schemas only grow (columns added, integers widened, indexes added), and a stale
/// entry is refreshed from the catalog when a statement names a column it lacks or when the
/// server reports a changed table.
final class PostgreSQLSchemaCache: Sendable {
    private let schemas = Locked<[String: CollectionSchema]>([:])
    /// The SQL of look-ups by key, made from the cached schemas: dropped whenever a schema is
    /// stored or removed.
    private let lookups = Locked<[Lookup: String]>([:])

    /// A look-up by key: the collection as named, the columns read, and the key's class (the
    /// comparison's SQL depends on it).
    struct Lookup: Hashable {
        let collection: String
        let columns: [String]
        let keyClass: Int
    }

    /// The writer plans made from the cached schemas, by collection as named and columns:
    /// dropped whenever a schema is stored or removed.
    private let writerPlans = Locked<[WriterLayout: PostgreSQLWriterPlan]>([:])

    /// A writer's layout: the collection as named and its columns.
    struct WriterLayout: Hashable {
        let collection: String
        let columns: [String]
    }

    func writerPlan(_ layout: WriterLayout) -> PostgreSQLWriterPlan? {
        writerPlans.withLock { $0[layout] }
    }

    /// Keeps `plan` for `layout`, made from `schema` if that is still the cached one.
    func storeWriterPlan(_ plan: PostgreSQLWriterPlan, for layout: WriterLayout, madeFrom schema: CollectionSchema) {
        guard self.lookup(layout.collection) == schema else { return }
        writerPlans.withLock { $0[layout] = plan }
    }

    func lookupSQL(_ lookup: Lookup) -> String? {
        lookups.withLock { $0[lookup] }
    }

    /// Keeps `sql` for `lookup`, made from `schema` if that is still the cached one.
    func storeLookupSQL(_ sql: String, for lookup: Lookup, madeFrom schema: CollectionSchema) {
        guard self.lookup(lookup.collection) == schema else { return }
        lookups.withLock { $0[lookup] = sql }
    }

    func lookup(_ name: String) -> CollectionSchema? {
        schemas.withLock { $0[Identifier.folded(name)] }
    }

    func store(_ schema: CollectionSchema) {
        schemas.withLock { $0[Identifier.folded(schema.name)] = schema }
        lookups.withLock { $0.removeAll() }
        writerPlans.withLock { $0.removeAll() }
    }

    func remove(_ folded: String) {
        schemas.withLock { $0[folded] = nil }
        lookups.withLock { $0.removeAll() }
        writerPlans.withLock { $0.removeAll() }
    }

    func removeAll() {
        schemas.withLock { $0.removeAll() }
        lookups.withLock { $0.removeAll() }
        writerPlans.withLock { $0.removeAll() }
    }
}
