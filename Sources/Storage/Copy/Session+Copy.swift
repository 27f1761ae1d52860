/// The session's part of `ObjectStore.copy` and `verify`: raw records, exactly as stored, with
/// no model type and no type affinity applied.
extension Session {
    /// The most bytes of values one copy batch holds (besides its record limit), so that a
    /// batch of large blobs stays small.
    static let copyBatchBytes = 8 << 20

    /// Makes the destination collection ready for a copy of `schema` under `mode`, with the
    /// full-text index `fullText` (the fields the source indexes) when there is one: the
    /// destination builds it from the records it holds and then indexes every copied record.
    func prepareCopy(of schema: CollectionSchema, mode: StoreCopyMode, fullText: [String]?) throws {
        try prepareCollection(for: schema, mode: mode)
        if let fields = fullText, try searchEntry(schema.name)?.fields != fields {
            try rebuildSearchIndex(of: schema.name, fields: fields)
        }
    }

    private func prepareCollection(for schema: CollectionSchema, mode: StoreCopyMode) throws {
        let writer = try requireWriter()
        if let existing = try reader.schema(of: schema.name) {
            if mode == .replace {
                let keys = try writer.deleteAll(from: existing.name, where: nil)
                // The collection is the source's now, with the source's index or none.
                try dropSearchIndex(of: existing.name)
                try writer.dropCollection(existing.name)
                if !keys.isEmpty { noteChange(.delete(keys), in: existing.name) }
                _ = try prepare(schema)
                return
            }
            let count = try reader.count(in: existing.name, where: nil)
            if count > 0 && mode == .refuse {
                throw StorageError(
                    .collectionNotEmpty,
                    "collection '\(existing.name)' of the destination already holds \(count) record\(count == 1 ? "" : "s");"
                        + " ask to merge (upsert) or to replace it",
                    collection: existing.name
                )
            }
            if existing.primaryKey != schema.primaryKey {
                throw StorageError(
                    .schemaMismatch,
                    "collection '\(existing.name)' of the destination has primary key '\(existing.primaryKey)',"
                        + " the source's has '\(schema.primaryKey)'",
                    collection: existing.name,
                    column: schema.primaryKey
                )
            }
        }
        _ = try prepare(schema)
    }

    /// The records of `schema`'s collection after primary key `after` (all from the first when
    /// `nil`), in key order: at most `limit`, and fewer once they hold `copyBatchBytes`.
    func copyBatch(
        _ schema: CollectionSchema,
        columns: [String],
        keyIndex: Int,
        after: StorageValue?,
        limit: Int
    ) throws -> [[StorageValue]] {
        let request = ScanRequest(
            collection: schema.name,
            columns: columns,
            predicate: after.map { .compare(schema.primaryKey, .greater, $0) },
            ordering: [.ascending(schema.primaryKey)],
            limit: limit
        )
        var records: [[StorageValue]] = []
        records.reserveCapacity(min(limit, 4_096))
        var bytes = 0
        try reader.scan(request) { row in
            var record: [StorageValue] = []
            record.reserveCapacity(columns.count)
            for index in columns.indices {
                let value = row.value(at: index)
                switch value {
                case .text(let text): bytes += text.utf8.count
                case .blob(let data): bytes += data.count
                default: bytes += 8
                }
                record.append(value)
            }
            records.append(record)
            return bytes < Self.copyBatchBytes
        }
        return records
    }

    /// Writes copied records as they are (inserting, or replacing the record with the same key),
    /// keeping the destination's full-text index of the collection in step.
    func writeCopied(_ batch: [[StorageValue]], into collection: String, columns: [String], keyIndex: Int) throws {
        let writer = try makeRecordWriter(for: collection, columns: columns)
        var keys: [StorageValue] = []
        keys.reserveCapacity(batch.count)
        for record in batch {
            do {
                keys.append(try writer.put(record))
            } catch let error as StorageError {
                var error = error.inCollection(collection)
                if error.key == nil { error.key = record[keyIndex] }
                throw error
            }
        }
        if !keys.isEmpty { noteChange(.upsert(keys), in: collection) }
    }

    /// The stored schema and the digest of `collection`, or `nil` when there is no such
    /// collection.
    func digest(of collection: String) throws -> (schema: CollectionSchema, digest: CollectionDigest)? {
        guard let schema = try reader.schema(of: collection) else { return nil }
        let (folded, columns) = CollectionDigest.canonicalColumns(of: schema)
        var digest = CollectionDigest()
        let request = ScanRequest(
            collection: schema.name,
            columns: columns,
            ordering: [.ascending(schema.primaryKey)]
        )
        try reader.scan(request) { row in
            digest.add(columns: folded) { row.value(at: $0) }
            return true
        }
        return (schema, digest)
    }
}
