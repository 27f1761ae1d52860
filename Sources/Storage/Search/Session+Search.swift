import Foundation

/// One full-text index as the store keeps it in `_search_indexes`, with its statistics as this
/// session last wrote or read them.
struct SearchIndexEntry: Equatable {
    var collection: String
    var fields: [String]
    /// N: every record of the collection.
    var documents: Int
    /// The words of every record together.
    var tokens: Int
}

/// What a session knows of the store's full-text indexes and what it still has to write.
final class SearchState {
    /// The index of each collection met, by folded name (`.some(nil)`: it has none).
    var entries: [String: SearchIndexEntry?] = [:]
    /// The collections whose statistics changed and are written before the commit.
    var dirty: Set<String> = []
    /// The collections whose type's declared index this session checked.
    var registered: Set<String> = []
    /// The writers of the postings and the document records, made once a session.
    var writers: (postings: any RecordWriter, documents: any RecordWriter)?
    /// The engine's writer of each collection's index, by folded name, once asked (`.some(nil)`:
    /// the store keeps the index in its own collections; see `Session+EngineSearch.swift`).
    var engineWriters: [String: (any FullTextIndexWriter)?] = [:]
}

/// Full-text indexes: kept by the store itself, over the backend seam, in its own collections
/// (`SearchIndexKeys`), in the same transaction as the records they index, so every engine
/// holds the same index and answers a search alike.
extension Session {
    var searchState: SearchState {
        if let search { return search }
        let state = SearchState()
        search = state
        return state
    }

    // MARK: The registry

    /// The full-text index of `collection`, or `nil` when it has none.
    func searchEntry(_ collection: String) throws -> SearchIndexEntry? {
        let folded = Identifier.folded(collection)
        let state = searchState
        if let known = state.entries[folded] { return known }
        var entry: SearchIndexEntry?
        if try storedSchema(SearchIndexKeys.indexes) != nil {
            _ = try reader.get(
                SearchIndexKeys.indexes,
                key: .text(folded),
                columns: ["collection", "fields", "documents", "tokens"]
            ) { row in
                let fields =
                    (try? JSONDecoder().decode([String].self, from: Data((row.text(at: 1) ?? "[]").utf8))) ?? []
                entry = SearchIndexEntry(
                    collection: row.text(at: 0) ?? collection,
                    fields: fields,
                    documents: Int(row.integer(at: 2) ?? 0),
                    tokens: Int(row.integer(at: 3) ?? 0)
                )
            }
        }
        state.entries[folded] = .some(entry)
        return entry
    }

    /// Makes the store's search collections ready and the session's writers of them.
    private func searchWriters() throws -> (postings: any RecordWriter, documents: any RecordWriter) {
        let state = searchState
        if let writers = state.writers { return writers }
        let writer = try requireWriter()
        _ = try prepare(SearchIndexKeys.indexesSchema)
        _ = try prepare(SearchIndexKeys.documentsSchema)
        _ = try prepare(SearchIndexKeys.postingsSchema)
        let writers = (
            postings: try writer.makeWriter(for: SearchIndexKeys.postings, columns: ["id", "length", "hits"]),
            documents: try writer.makeWriter(for: SearchIndexKeys.documents, columns: ["id", "length", "terms"])
        )
        state.writers = writers
        return writers
    }

    /// Writes the full-text index `info`'s type declares for its collection when the store does
    /// not hold it so (once a session for each collection): a new or changed index is built
    /// from every record the collection holds.
    func registerSearch(of info: ModelInfo) throws {
        guard let index = info.fullText else { return }
        let folded = Identifier.folded(info.collection)
        let state = searchState
        if state.registered.contains(folded) { return }
        if let existing = try searchEntry(info.collection), existing.fields == index.columns {
            state.registered.insert(folded)
            return
        }
        try rebuildSearchIndex(of: info.collection, fields: index.columns)
        state.registered.insert(folded)
    }

    /// Replaces the index of `collection` with one over `fields`, built from its records.
    func rebuildSearchIndex(of collection: String, fields: [String]) throws {
        let folded = Identifier.folded(collection)
        let engine = try makeEngineIndex(of: collection, fields: fields)
        if !engine { _ = try searchWriters() }
        try removeSearchData(folded)
        let state = searchState
        state.entries[folded] = .some(SearchIndexEntry(collection: collection, fields: fields, documents: 0, tokens: 0))
        state.dirty.insert(folded)
        guard let stored = try storedSchema(collection) else { return }
        var records: [(StorageValue, [StorageValue])] = []
        try reader.scan(ScanRequest(collection: stored.name, columns: [stored.primaryKey] + fields)) { row in
            records.append((row.value(at: 0), (1...fields.count).map { row.value(at: $0) }))
            return true
        }
        for (key, values) in records { try indexDocument(folded, key: key, values: values, replacing: false) }
    }

    /// Deletes the postings and document records of a collection, by their key range.
    func removeSearchData(_ folded: String) throws {
        let writer = try requireWriter()
        for name in [SearchIndexKeys.postings, SearchIndexKeys.documents] where try storedSchema(name) != nil {
            _ = try writer.deleteAll(
                from: name,
                where: .and(
                    .compare("id", .greaterOrEqual, .text(folded + "\u{1}")),
                    .compare("id", .less, .text(folded + "\u{2}"))
                )
            )
        }
    }

    /// Removes the full-text index of `collection` (dropped) from the store.
    func dropSearchIndex(of collection: String) throws {
        guard try searchEntry(collection) != nil else { return }
        let folded = Identifier.folded(collection)
        try removeSearchData(folded)
        try dropEngineIndex(of: collection)
        _ = try requireWriter().delete(from: SearchIndexKeys.indexes, key: .text(folded))
        let state = searchState
        state.entries[folded] = .some(nil)
        state.dirty.remove(folded)
        state.registered.remove(folded)
    }

    /// Writes the statistics this session changed: called once, before the transaction commits.
    func flushSearchStatistics() throws {
        guard let state = search, !state.dirty.isEmpty else { return }
        let writer = try requireWriter().makeWriter(
            for: SearchIndexKeys.indexes,
            columns: ["id", "collection", "fields", "documents", "tokens"]
        )
        for folded in state.dirty.sorted() {
            guard let entry = state.entries[folded] ?? nil else { continue }
            let fields = String(decoding: try JSONEncoder().encode(entry.fields), as: UTF8.self)
            try writer.put([
                .text(folded), .text(entry.collection), .text(fields), .integer(Int64(entry.documents)),
                .integer(Int64(entry.tokens)),
            ])
        }
        state.dirty.removeAll()
    }

    // MARK: Records

    /// A writer of `collection` laid out as `columns` that keeps the collection's full-text
    /// index in step with every record it puts: the backend's own when there is no index.
    ///
    /// Every write asks, whatever wrote it: a typed save of a type that does not declare the
    /// index (another type on the same collection, an older version of the app) keeps the index
    /// that another declared. A store without any full-text index answers from the schema of
    /// `_search_indexes`, which the backends keep cached: no record is read.
    func makeRecordWriter(for collection: String, columns: [String]) throws -> any RecordWriter {
        let writer = try requireWriter().makeWriter(for: collection, columns: columns)
        if search == nil, try storedSchema(SearchIndexKeys.indexes) == nil { return writer }
        guard let entry = try searchEntry(collection) else { return writer }
        let positions = entry.fields.map { field in
            columns.firstIndex { Identifier.folded($0) == Identifier.folded(field) }
        }
        return SearchIndexingWriter(base: writer) { [unowned self] key, values in
            try self.indexRecord(
                Identifier.folded(collection),
                entry: entry,
                key: key,
                positions: positions,
                values: values
            )
        }
    }

    /// Indexes the record just put: from the values put when they hold every indexed field, else
    /// from the record as stored.
    private func indexRecord(
        _ folded: String,
        entry: SearchIndexEntry,
        key: StorageValue,
        positions: [Int?],
        values: [StorageValue]
    ) throws {
        var fields: [StorageValue]
        if positions.allSatisfy({ $0 != nil }) {
            fields = positions.map { values[$0!] }
        } else {
            fields = Array(repeating: .null, count: entry.fields.count)
            _ = try reader.get(entry.collection, key: key, columns: entry.fields) { row in
                fields = (0..<entry.fields.count).map { row.value(at: $0) }
            }
        }
        try indexDocument(folded, key: key, values: fields, replacing: true)
    }

    /// Whether `collection` has a full-text index over any of `columns`.
    func indexesForSearch(_ collection: String, anyOf columns: [String]) throws -> Bool {
        if search == nil, try storedSchema(SearchIndexKeys.indexes) == nil { return false }
        guard let entry = try searchEntry(collection) else { return false }
        let fields = Set(entry.fields.map(Identifier.folded))
        return columns.contains { fields.contains(Identifier.folded($0)) }
    }

    /// Indexes the records of `keys` again from their stored values (after an update in place).
    func reindexRecords(_ keys: [StorageValue], in collection: String) throws {
        guard let entry = try searchEntry(collection), !keys.isEmpty else { return }
        let folded = Identifier.folded(collection)
        for key in keys {
            var fields = Array(repeating: StorageValue.null, count: entry.fields.count)
            _ = try reader.get(entry.collection, key: key, columns: entry.fields) { row in
                fields = (0..<entry.fields.count).map { row.value(at: $0) }
            }
            try indexDocument(folded, key: key, values: fields, replacing: true)
        }
    }

    /// Removes the records of `keys` (deleted) from the index of `collection`.
    func unindexRecords(_ keys: [StorageValue], in collection: String) throws {
        guard let entry = try searchEntry(collection), !keys.isEmpty else { return }
        let folded = Identifier.folded(collection)
        if let engine = try engineIndexWriter(folded, entry: entry) {
            for key in keys { try engine.unindex(key) }
            return
        }
        _ = try searchWriters()
        for key in keys { try removeDocument(folded, SearchIndexKeys.document(key)) }
    }

    /// Removes one record's postings and document record, with its share of the statistics.
    /// - Returns: whether the record was indexed.
    @discardableResult
    private func removeDocument(_ folded: String, _ document: String) throws -> Bool {
        let writer = try requireWriter()
        let id = StorageValue.text(SearchIndexKeys.documentRecord(folded, document))
        var old: (length: Int, terms: String)?
        _ = try reader.get(SearchIndexKeys.documents, key: id, columns: ["length", "terms"]) { row in
            old = (Int(row.integer(at: 0) ?? 0), row.text(at: 1) ?? "")
        }
        guard let old else { return false }
        for term in old.terms.split(separator: " ") {
            _ = try writer.delete(
                from: SearchIndexKeys.postings,
                key: .text(SearchIndexKeys.posting(folded, String(term), document))
            )
        }
        _ = try writer.delete(from: SearchIndexKeys.documents, key: id)
        let state = searchState
        if var entry = state.entries[folded] ?? nil {
            entry.documents -= 1
            entry.tokens -= old.length
            state.entries[folded] = .some(entry)
            state.dirty.insert(folded)
        }
        return true
    }

    /// Writes the postings and the document record of one record.
    private func indexDocument(_ folded: String, key: StorageValue, values: [StorageValue], replacing: Bool) throws {
        if let entry = searchState.entries[folded] ?? nil, let engine = try engineIndexWriter(folded, entry: entry) {
            try engine.index(key, fields: values.map(SearchTokenizer.joinedTokens))
            return
        }
        let writers = try searchWriters()
        let document = SearchIndexKeys.document(key)
        if replacing { try removeDocument(folded, document) }
        var positions: [String: [Int: [Int]]] = [:]
        var order: [String] = []
        var length = 0
        for (field, value) in values.enumerated() {
            guard case .text(let text) = value else { continue }
            let tokens = SearchTokenizer.tokens(in: text)
            length += tokens.count
            for (position, token) in tokens.enumerated() {
                if positions[token] == nil { order.append(token) }
                positions[token, default: [:]][field, default: []].append(position)
            }
        }
        for term in order {
            let posting = SearchPosting(document: document, length: length, positions: positions[term]!)
            try writers.postings.put([
                .text(SearchIndexKeys.posting(folded, term, document)), .integer(Int64(length)),
                .text(posting.encodedPositions),
            ])
        }
        try writers.documents.put([
            .text(SearchIndexKeys.documentRecord(folded, document)), .integer(Int64(length)),
            .text(order.joined(separator: " ")),
        ])
        let state = searchState
        if var entry = state.entries[folded] ?? nil {
            entry.documents += 1
            entry.tokens += length
            state.entries[folded] = .some(entry)
            state.dirty.insert(folded)
        }
    }
}

/// A backend's writer whose every record is then indexed for full-text search.
final class SearchIndexingWriter: RecordWriter {
    private let base: any RecordWriter
    private let index: (StorageValue, [StorageValue]) throws -> Void

    init(base: any RecordWriter, index: @escaping (StorageValue, [StorageValue]) throws -> Void) {
        self.base = base
        self.index = index
    }

    func put(_ values: [StorageValue]) throws -> StorageValue {
        let key = try base.put(values)
        try index(key, values)
        return key
    }

    func expectRecords(_ count: Int) throws {
        try base.expectRecords(count)
    }
}
