import Storage

/// The committed schemas of collections, shared by all connections of a backend.
///
/// Names are keyed ASCII-case-folded, as SQLite compares them.
///
/// Entries are tagged with the database's schema version (`PRAGMA schema_version`), which every
/// schema change by any connection or process increments, so a transaction only trusts entries
/// read at the version its own snapshot sees. A write transaction keeps its own changes apart
/// and publishes them only when it commits, so a rollback leaves the cache untouched.
final class SQLiteSchemaCache: Sendable {
    private struct State {
        var version: Int64 = -1
        /// `nil` values record collections known not to exist.
        var schemas: [String: CollectionSchema?] = [:]
    }

    private let state = Locked(State())

    /// The cached schema of `name` at `version`: `.some(nil)` when known not to exist, `nil`
    /// when not cached.
    func lookup(_ name: String, version: Int64) -> CollectionSchema?? {
        state.withLock { state in
            guard state.version == version else { return nil }
            return state.schemas[Identifier.folded(name)]
        }
    }

    /// Records what the catalog said about `name` at `version`. Entries from an older snapshot
    /// than the cache's are dropped; a newer one starts a new cache.
    func store(_ schema: CollectionSchema?, for name: String, version: Int64) {
        state.withLock { state in
            if version > state.version {
                state = State(version: version, schemas: [:])
            }
            if version == state.version {
                state.schemas[Identifier.folded(name)] = .some(schema)
            }
        }
    }

    /// Publishes the schemas a write transaction changed, once it has committed.
    /// - Parameters:
    ///   - changes: the new schemas of the collections the transaction changed.
    ///   - dropped: the folded names of the collections it dropped (or renamed) and did not make
    ///     again, whose entries from `baseVersion` no longer hold.
    ///   - baseVersion: the version the transaction started from.
    ///   - newVersion: the version after the commit.
    func publish(
        _ changes: [String: CollectionSchema],
        dropped: Set<String> = [],
        from baseVersion: Int64,
        to newVersion: Int64
    ) {
        state.withLock { state in
            if state.version != baseVersion {
                state = State(version: newVersion, schemas: [:])
            }
            state.version = newVersion
            for folded in dropped {
                state.schemas[folded] = nil
            }
            for (name, schema) in changes {
                state.schemas[Identifier.folded(name)] = .some(schema)
            }
        }
    }
}
