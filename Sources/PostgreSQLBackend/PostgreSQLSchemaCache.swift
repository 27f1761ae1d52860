import Storage

/// The committed schemas of the store's collections, shared by the backend's connections, by
/// folded name, each with the stamp of the catalog row it was read from
/// (`PostgreSQLCatalog.stampSQL(parameter:)`). Statements that read records read the stamp with
/// them, and a stamp that differs from the cached one means another process changed the schema:
/// the read runs again on a schema read afresh. A stale entry is also refreshed when a statement
/// names a column it lacks or when the server reports a changed table.
///
/// Beside them it keeps what is made from them (the SQL of look-ups by key, writer plans), which
/// is dropped whenever a schema changes or is removed. Schemas and what is made from them are
/// under one lock, so a plan made from a schema that another thread has replaced in the meantime
/// is never kept.
final class PostgreSQLSchemaCache: Sendable {
    /// A look-up by key: the collection as named, the columns read, and the key's class (the
    /// comparison's SQL depends on it).
    struct Lookup: Hashable {
        let collection: String
        let columns: [String]
        let keyClass: Int
    }

    /// A writer's layout: the collection as named and its columns.
    struct WriterLayout: Hashable {
        let collection: String
        let columns: [String]
    }

    /// A cached schema and the stamp of the catalog row it was read from.
    struct Entry {
        let schema: CollectionSchema
        let stamp: Int64
    }

    private struct State {
        var schemas: [String: Entry] = [:]
        /// The SQL of look-ups by key, made from `schemas`.
        var lookups: [Lookup: String] = [:]
        /// The writer plans made from `schemas`.
        var writerPlans: [WriterLayout: PostgreSQLWriterPlan] = [:]
        /// The writer plan found or stored last, and its layout: a store saving one type again
        /// and again passes the same collection and column array each time, which compare equal
        /// at once (same storage), where the dictionary would hash every column name on every
        /// save (docs/BENCHMARKS.md).
        var lastWriterPlan: (layout: WriterLayout, plan: PostgreSQLWriterPlan)?
        /// The schema `lookup` found last, by the name it was asked for: a name asked again (the
        /// same string, compared at once) needs no folding and no hashing (docs/BENCHMARKS.md).
        /// Dropped whenever `schemas` changes.
        var lastLookup: (name: String, entry: Entry)?
        /// By folded name, the last schema a transaction asked to prepare that the cached schema
        /// already covered (see `covered(_:folded:)`).
        var covered: [String: CollectionSchema] = [:]
        /// Whether a catalog read found no registry of full-text indexes (see
        /// `PostgreSQLSearchRegistryAppeared`): a write transaction answers its absence from
        /// here, and checks it in its last statement.
        var searchRegistryAbsent = false
        /// The collections (folded) whose record in the registry of full-text indexes a query
        /// found absent, and nothing since said otherwise: answered so by write transactions,
        /// which check it at their commit.
        var unindexed: Set<String> = []

        mutating func dropDerived() {
            lookups.removeAll()
            writerPlans.removeAll()
            lastWriterPlan = nil
            covered.removeAll()
        }
    }

    private let state = Locked(State())

    func writerPlan(_ layout: WriterLayout) -> PostgreSQLWriterPlan? {
        state.withLock { state in
            if let last = state.lastWriterPlan, last.layout == layout { return last.plan }
            guard let plan = state.writerPlans[layout] else { return nil }
            state.lastWriterPlan = (layout, plan)
            return plan
        }
    }

    /// Keeps `plan` for `layout`, made from `schema` if that is still the cached one.
    func storeWriterPlan(_ plan: PostgreSQLWriterPlan, for layout: WriterLayout, madeFrom schema: CollectionSchema) {
        let folded = Identifier.folded(layout.collection)
        state.withLock { state in
            guard state.schemas[folded]?.schema == schema else { return }
            state.writerPlans[layout] = plan
            state.lastWriterPlan = (layout, plan)
        }
    }

    /// The cached schema of `requested`'s collection (folded name `folded`) when it is known to
    /// cover `requested` already: a transaction then prepares the collection with one comparison,
    /// instead of merging the schemas (a profile of single saves showed the merge as most of
    /// `prepareCollection`'s cost).
    func covered(_ requested: CollectionSchema, folded: String) -> CollectionSchema? {
        state.withLock { state in
            guard state.covered[folded] == requested else { return nil }
            return state.schemas[folded]?.schema
        }
    }

    /// Remembers that `schema`, the cached schema of `requested`'s collection, covers it.
    func storeCovered(_ requested: CollectionSchema, by schema: CollectionSchema, folded: String) {
        state.withLock { state in
            guard state.schemas[folded]?.schema == schema else { return }
            state.covered[folded] = requested
        }
    }

    /// The SQL kept for `lookup`, and the stamp of the schema it was made from.
    func lookupSQL(_ lookup: Lookup) -> (sql: String, stamp: Int64)? {
        state.withLock { state in
            // Dropped whenever the schemas change, so made from the cached schema.
            guard let sql = state.lookups[lookup],
                let entry = state.schemas[Identifier.folded(lookup.collection)]
            else { return nil }
            return (sql, entry.stamp)
        }
    }

    /// Keeps `sql` for `lookup`, made from `schema` if that is still the cached one.
    func storeLookupSQL(_ sql: String, for lookup: Lookup, madeFrom schema: CollectionSchema) {
        let folded = Identifier.folded(lookup.collection)
        state.withLock { state in
            guard state.schemas[folded]?.schema == schema else { return }
            state.lookups[lookup] = sql
        }
    }

    /// Whether the last catalog read of the registry of full-text indexes found none, and
    /// nothing since said otherwise: an answer a write transaction must verify at its commit.
    var searchRegistryKnownAbsent: Bool { state.withLock { $0.searchRegistryAbsent } }

    /// Records that a catalog read found no registry of full-text indexes.
    func noteSearchRegistryAbsent() {
        state.withLock { $0.searchRegistryAbsent = true }
    }

    /// Forgets every answer about the store's full-text indexes (a commit's check found one
    /// wrong).
    func forgetSearchAnswers() {
        state.withLock { state in
            state.searchRegistryAbsent = false
            state.unindexed.removeAll()
        }
    }

    /// Whether a query found no record of collection `folded` in the registry of full-text
    /// indexes, and nothing since said otherwise: an answer a write transaction must verify at
    /// its commit.
    func isKnownUnindexed(_ folded: String) -> Bool {
        state.withLock { $0.unindexed.contains(folded) }
    }

    /// Records that a query found no record of collection `folded` in the registry.
    func noteUnindexed(_ folded: String) {
        state.withLock { _ = $0.unindexed.insert(folded) }
    }

    /// Forgets what was known of the registry records of `collections` (folded; written by a
    /// transaction of this process that committed).
    func forgetUnindexed(_ collections: [String]) {
        guard !collections.isEmpty else { return }
        state.withLock { state in
            for folded in collections { state.unindexed.remove(folded) }
        }
    }

    func lookup(_ name: String) -> Entry? {
        let last = state.withLock { state -> Entry? in
            guard let last = state.lastLookup, last.name == name else { return nil }
            return last.entry
        }
        if let last { return last }
        let folded = Identifier.folded(name)
        return state.withLock { state in
            guard let entry = state.schemas[folded] else { return nil }
            state.lastLookup = (name, entry)
            return entry
        }
    }

    /// Caches `schema`, read from a catalog row with `stamp`; what was made from the schemas is
    /// dropped when it differs from the one cached (a catalog read that finds the same schema
    /// keeps the plans made from it).
    func store(_ schema: CollectionSchema, stamp: Int64) {
        let folded = Identifier.folded(schema.name)
        state.withLock { state in
            if let cached = state.schemas[folded], cached.schema == schema {
                if cached.stamp != stamp {
                    state.schemas[folded] = Entry(schema: schema, stamp: stamp)
                    state.lastLookup = nil
                }
                return
            }
            state.schemas[folded] = Entry(schema: schema, stamp: stamp)
            state.lastLookup = nil
            state.dropDerived()
            if folded == Identifier.folded(PostgreSQLSearchRegistryAppeared.registry) {
                state.searchRegistryAbsent = false
                state.unindexed.removeAll()
            }
        }
    }

    func remove(_ folded: String) {
        state.withLock { state in
            state.schemas[folded] = nil
            state.lastLookup = nil
            state.dropDerived()
        }
    }

    func removeAll() {
        state.withLock { state in
            state.schemas.removeAll()
            state.lastLookup = nil
            state.dropDerived()
            state.searchRegistryAbsent = false
            state.unindexed.removeAll()
        }
    }
}
