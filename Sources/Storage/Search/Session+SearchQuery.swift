/// Full-text queries: the matching keys from the store's postings, ranked by BM25
/// (`SearchRanking`), filtered by a predicate, then the records read by key.
extension Session {
    /// The keys of the records of `collection` matching `text` and `predicate`, best first, at
    /// most `limit`, with the read plan of the collection; `nil` when the collection does not
    /// exist.
    func searchKeys(
        in collection: String,
        matching text: String,
        where predicate: StoragePredicate?,
        limit: Int?
    ) throws -> (plan: ReadPlan, keys: [StorageValue])? {
        let query = try SearchQuery(parsing: text)
        if let limit, limit < 0 {
            throw StorageError(.misuse, "limit must not be negative, got \(limit)", collection: collection)
        }
        guard let stored = try storedSchema(collection) else { return try Self.noCollection(predicate, nil) }
        guard let entry = try searchEntry(stored.name) else {
            throw StorageError(
                .invalidQuery,
                "collection \(Identifier.quoted(stored.name)) has no full-text index: declare"
                    + " IndexDefinition.fullText([...]) in its type's indexes, and save a record of the type",
                collection: stored.name
            )
        }
        let plan = catalog.readPlan(for: stored)
        if let keys = try engineSearchKeys(stored, plan: plan, matching: query, where: predicate, limit: limit) {
            return (plan, keys)
        }
        let folded = Identifier.folded(stored.name)
        let scores = try SearchRanking.evaluate(query, documents: entry.documents, tokens: entry.tokens) {
            lower,
            upper in
            try postings(folded, from: lower, to: upper)
        }
        var ranked = scores.map { (key: SearchIndexKeys.key(ofDocument: $0.key), score: $0.value) }
        if let predicate {
            let keys = ranked.map(\.key)
            let request = try makeRequest(
                plan,
                columns: [stored.primaryKey],
                where: .and(predicate, .in(stored.primaryKey, keys)),
                orderBy: [],
                limit: nil
            )
            var allowed: Set<StorageValue> = []
            if !keys.isEmpty {
                try reader.scan(request) { row in
                    allowed.insert(row.value(at: 0))
                    return true
                }
            }
            ranked.removeAll { !allowed.contains($0.key) }
        }
        ranked.sort { $0.score != $1.score ? $0.score > $1.score : StorageValue.compare($0.key, $1.key) < 0 }
        if let limit, ranked.count > limit { ranked.removeSubrange(limit...) }
        return (plan, ranked.map(\.key))
    }

    /// The postings of the words from `lower` up to (not including) `upper` in `folded`'s index.
    private func postings(_ folded: String, from lower: String, to upper: String) throws -> [SearchPosting] {
        guard try storedSchema(SearchIndexKeys.postings) != nil else { return [] }
        let prefix = folded + "\u{1}"
        let request = ScanRequest(
            collection: SearchIndexKeys.postings,
            columns: ["id", "length", "hits"],
            predicate: .and(
                .compare("id", .greaterOrEqual, .text(prefix + lower)),
                .compare("id", .less, .text(prefix + upper))
            )
        )
        var found: [SearchPosting] = []
        let skip = prefix.unicodeScalars.count
        try reader.scan(request) { row in
            guard let id = row.text(at: 0) else { return true }
            let rest = id.unicodeScalars.dropFirst(skip)
            guard let separator = rest.firstIndex(of: "\u{1}") else { return true }
            found.append(
                SearchPosting(
                    document: String(rest[rest.index(after: separator)...]),
                    length: Int(row.integer(at: 1) ?? 0),
                    encodedPositions: row.text(at: 2) ?? ""
                )
            )
            return true
        }
        return found
    }

    /// The values of `type` matching `text` and `predicate`, best first.
    func search<T: Decodable>(
        _ type: T.Type,
        matching text: String,
        where predicate: StoragePredicate?,
        limit: Int?
    ) throws -> [T] {
        let info = try catalog.info(for: type)
        guard let (plan, keys) = try searchKeys(in: info.collection, matching: text, where: predicate, limit: limit),
            !keys.isEmpty
        else { return [] }
        let key = plan.schema.primaryKey
        let request = try makeRequest(plan, columns: plan.columns, where: .in(key, keys), orderBy: [], limit: nil)
        let decoder = RowDecoder(typeName: info.typeName, collection: info.collection, plan: plan)
        guard let keyIndex = plan.columns.firstIndex(of: key) else { return [] }
        var found: [StorageValue: T] = [:]
        try reader.scan(request) { row in
            found[row.value(at: keyIndex)] = try decoder.decode(T.self, from: row)
            return true
        }
        return keys.compactMap { found[$0] }
    }

    /// The records of `collection` matching `text` and `predicate`, best first, as dictionaries.
    func search(
        in collection: String,
        matching text: String,
        where predicate: StoragePredicate?,
        limit: Int?
    ) throws -> [[String: StorageValue]] {
        try Identifier.validateCollection(collection)
        guard let (plan, keys) = try searchKeys(in: collection, matching: text, where: predicate, limit: limit),
            !keys.isEmpty
        else { return [] }
        let key = plan.schema.primaryKey
        let columns = plan.columns
        let request = try makeRequest(plan, columns: columns, where: .in(key, keys), orderBy: [], limit: nil)
        guard let keyIndex = columns.firstIndex(of: key) else { return [] }
        var found: [StorageValue: [String: StorageValue]] = [:]
        try reader.scan(request) { row in
            var dictionary: [String: StorageValue] = [:]
            dictionary.reserveCapacity(columns.count)
            for (index, name) in columns.enumerated() { dictionary[name] = row.value(at: index) }
            found[row.value(at: keyIndex)] = dictionary
            return true
        }
        return keys.compactMap { found[$0] }
    }
}
