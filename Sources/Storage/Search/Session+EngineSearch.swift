/// Full-text indexes the engine keeps itself (``FullTextIndexingWriteTransaction``, SQLite's
/// FTS5): the store still registers them in `_search_indexes` and tokenizes every field, and
/// hands the engine the folded tokens instead of writing its own postings.
///
/// An index in the store's own postings on such an engine (a store written before the engine
/// kept indexes, or one whose collection did not exist yet when its index was registered) is
/// read from the postings until the first write to the collection, which moves it into the
/// engine: built from the records, the postings removed.
extension Session {
    /// Makes an empty index of `collection` over `fields` in the engine, replacing any.
    /// - Returns: whether the engine keeps the index: made now, or at the first write when the
    ///   collection does not exist yet; `false` when the store keeps it in its own postings.
    func makeEngineIndex(of collection: String, fields: [String]) throws -> Bool {
        guard let engine = writer as? any FullTextIndexingWriteTransaction else { return false }
        let folded = Identifier.folded(collection)
        let state = searchState
        state.engineWriters[folded] = nil
        _ = try prepare(SearchIndexKeys.indexesSchema)
        guard try storedSchema(collection) != nil else { return true }
        guard try engine.createFullTextIndex(of: collection, fields: fields) else { return false }
        state.engineWriters[folded] = .some(try engine.makeFullTextWriter(for: collection))
        return true
    }

    /// Removes the engine's index of `collection`, if it keeps one.
    func dropEngineIndex(of collection: String) throws {
        guard let engine = writer as? any FullTextIndexingWriteTransaction else { return }
        try engine.dropFullTextIndex(of: collection)
        searchState.engineWriters[Identifier.folded(collection)] = nil
    }

    /// The engine's writer of the index `entry` (of the collection folded as `folded`), or `nil`
    /// when the store keeps the index itself; an index of the store's postings is moved into the
    /// engine first (see the type's comment).
    func engineIndexWriter(_ folded: String, entry: SearchIndexEntry) throws -> (any FullTextIndexWriter)? {
        let state = searchState
        if let known = state.engineWriters[folded] { return known }
        guard let engine = writer as? any FullTextIndexingWriteTransaction else {
            state.engineWriters[folded] = .some(nil)
            return nil
        }
        if let existing = try engine.makeFullTextWriter(for: entry.collection) {
            state.engineWriters[folded] = .some(existing)
            return existing
        }
        guard let stored = try storedSchema(entry.collection),
            try engine.createFullTextIndex(of: stored.name, fields: entry.fields),
            let made = try engine.makeFullTextWriter(for: stored.name)
        else {
            state.engineWriters[folded] = .some(nil)
            return nil
        }
        state.engineWriters[folded] = .some(made)
        try removeSearchData(folded)
        var records: [(StorageValue, [String])] = []
        let fields = entry.fields
        try reader.scan(ScanRequest(collection: stored.name, columns: [stored.primaryKey] + fields)) { row in
            records.append(
                (row.value(at: 0), (1...fields.count).map { SearchTokenizer.joinedTokens(row.value(at: $0)) })
            )
            return true
        }
        for (key, values) in records { try made.index(key, fields: values) }
        // The engine keeps the statistics of its index.
        if var moved = state.entries[folded] ?? nil, moved.documents != 0 || moved.tokens != 0 {
            moved.documents = 0
            moved.tokens = 0
            state.entries[folded] = .some(moved)
            state.dirty.insert(folded)
        }
        return made
    }

    /// The keys of `stored`'s records matching `query` and `predicate` from the engine's index,
    /// best first, at most `limit`; `nil` when the engine keeps no index of the collection.
    func engineSearchKeys(
        _ stored: CollectionSchema,
        plan: ReadPlan,
        matching query: SearchQuery,
        where predicate: StoragePredicate?,
        limit: Int?
    ) throws -> [StorageValue]? {
        guard let engine = reader as? any FullTextSearchingReadTransaction,
            try engine.hasFullTextIndex(of: stored.name)
        else { return nil }
        var checked: StoragePredicate?
        if let predicate {
            checked =
                try makeRequest(plan, columns: [stored.primaryKey], where: predicate, orderBy: [], limit: nil)
                .predicate
        }
        if let keys = try engine.searchFullText(in: stored.name, matching: query, where: checked, limit: limit) {
            return keys
        }
        // The engine cannot apply the predicate: every match, filtered here.
        var keys = try engine.searchFullText(in: stored.name, matching: query, where: nil, limit: nil) ?? []
        if let checked, !keys.isEmpty {
            var allowed: Set<StorageValue> = []
            let request = ScanRequest(
                collection: stored.name,
                columns: [stored.primaryKey],
                predicate: .and(checked, .in(stored.primaryKey, keys))
            )
            try reader.scan(request) { row in
                allowed.insert(row.value(at: 0))
                return true
            }
            keys.removeAll { !allowed.contains($0) }
        }
        if let limit, keys.count > limit { keys.removeSubrange(limit...) }
        return keys
    }
}
