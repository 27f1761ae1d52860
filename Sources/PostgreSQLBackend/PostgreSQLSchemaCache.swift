import Storage

/// The committed schemas of the store's collections, shared by the backend's connections, by
/// folded name. Schemas only grow (columns added, integers widened, indexes added), and a stale
/// entry is refreshed from the catalog when a statement names a column it lacks or when the
/// server reports a changed table.
final class PostgreSQLSchemaCache: Sendable {
    private let schemas = Locked<[String: CollectionSchema]>([:])

    func lookup(_ name: String) -> CollectionSchema? {
        schemas.withLock { $0[Identifier.folded(name)] }
    }

    func store(_ schema: CollectionSchema) {
        schemas.withLock { $0[Identifier.folded(schema.name)] = schema }
    }

    func remove(_ folded: String) {
        schemas.withLock { $0[folded] = nil }
    }

    func removeAll() {
        schemas.withLock { $0.removeAll() }
    }
}
