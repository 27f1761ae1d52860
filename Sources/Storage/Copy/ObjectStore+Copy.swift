import Foundation

extension ObjectStore {
    /// Copies collections of this store into `destination`, whatever the two engines, and checks
    /// by default that both then hold the same records.
    ///
    /// ```swift
    /// let target = try ObjectStore(backend: .postgreSQL(url: "postgresql://app@db1/app"))
    /// let report = try store.copy(to: target)
    /// print(report.records, "records copied and verified")
    /// ```
    /// Copied exactly: each collection's schema (columns, types, primary key), its indexes and
    /// unique constraints, every record with its values as stored (storage classes,
    /// infinities, blobs, JSON text), auto-assigned keys (the destination's next auto key is past
    /// every key the source ever assigned, those of deleted records too), the store's own collections
    /// such as `_settings`, and full-text indexes: a copied collection that the source indexes
    /// is indexed over the same fields at the destination, which builds its index from the records
    /// it then holds (the search collections are derived data, never copied as records), so a
    /// copy of some collections or a merge leaves no stale entry.
    ///
    /// Records are read in batches of at most `batchSize` (fewer when they are large), each batch
    /// in a read transaction of its own in primary-key order, and written in one destination
    /// transaction per batch: memory holds one batch, whatever the size of the store. A copy that
    /// is interrupted (even by a killed process) leaves each destination collection either
    /// missing or holding a prefix of the source's records; running the same copy again with
    /// `mode: .merge` completes it.
    ///
    /// Verification counts each collection's records on both sides and compares an
    /// order-independent digest of their canonical records (`verify(against:)` does only that).
    /// - Parameters:
    ///   - destination: the store written to; another `ObjectStore`, on any backend.
    ///   - collections: the collections to copy (names compared ignoring ASCII case); `nil` for
    ///     all of them, reserved ones (`_settings`) included.
    ///   - mode: what to do with a destination collection that already holds records.
    ///   - verifying: whether to verify each collection after copying it.
    ///   - batchSize: at most this many records per batch; at least 1.
    ///   - progress: called after each batch with how far the copy (or its verification) has come.
    /// - Returns: per collection, the records copied and whether verification matched.
    /// - Throws: `StorageError` with `.collectionNotEmpty` for a destination collection that
    ///   holds records when `mode` is `.refuse` (nothing is written to it), `.unknownCollection`
    ///   for a requested collection the source lacks (nothing is copied), `.schemaMismatch` when
    ///   the destination's collection has another primary key, `.verificationFailed` naming the
    ///   collection and a differing key, `.misuse` when `destination` is this store or
    ///   `batchSize` is below 1, `.readOnly` when `destination` was opened read-only (nothing is
    ///   read or written), or any error of either engine.
    @discardableResult
    public func copy(
        to destination: ObjectStore,
        collections: [String]? = nil,
        mode: StoreCopyMode = .refuse,
        verifying: Bool = true,
        batchSize: Int = 10_000,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws -> StoreCopyReport {
        guard destination !== self else {
            throw StorageError(.misuse, "a store cannot be copied into itself")
        }
        guard batchSize >= 1 else {
            throw StorageError(.misuse, "batchSize must be at least 1, got \(batchSize)")
        }
        // Before the source is read: a store opened read-only takes nothing.
        try destination.requireWritable()
        let plan = try copyPlan(collections)
        let total = plan.reduce(0) { $0 + $1.count }
        var done = 0
        var reports: [StoreCopyReport.CollectionReport] = []
        var digests: [CollectionDigest] = []
        for (schema, _) in plan {
            let (copied, digest) = try copyCollection(schema, to: destination, mode: mode, batchSize: batchSize) {
                batch in
                done += batch
                progress?(StoreCopyProgress(phase: .copying, collection: schema.name, records: done, total: total))
            }
            reports.append(.init(name: schema.name, records: copied, verified: false))
            digests.append(digest)
        }
        if verifying {
            var verified = 0
            for index in reports.indices {
                let name = reports[index].name
                // The source's digest is that of the records read for the copy; the destination's
                // is read now.
                let known = (plan[index].schema, digests[index])
                try verifyCollection(name, against: destination, knowing: known) { records in
                    verified += records
                    progress?(StoreCopyProgress(phase: .verifying, collection: name, records: verified, total: total))
                }
                reports[index].verified = true
            }
        }
        return StoreCopyReport(collections: reports)
    }

    /// Checks that this store and `other` hold the same collections with the same records: for
    /// each collection (reserved ones such as `_settings` included, the search collections, which
    /// are derived from the records, left out), the record counts and an
    /// order-independent digest of the canonical records, computed on both sides. A record's
    /// canonical form is its non-null values by column name (compared ignoring ASCII case), each
    /// with its storage class, so that the same data under two engines verifies.
    ///
    /// ```swift
    /// try sqliteStore.verify(against: postgresStore)   // throws on the first difference
    /// ```
    /// - Parameters:
    ///   - other: the store compared with; any backend.
    ///   - collections: the collections compared; `nil` for every collection of either store.
    ///   - progress: called after each collection with the records read so far on this side.
    /// - Returns: the number of records of each collection compared, by name.
    /// - Throws: `StorageError` with `.verificationFailed` naming the first collection that
    ///   differs and, when a record differs, one differing key; or any error of either engine.
    @discardableResult
    public func verify(
        against other: ObjectStore,
        collections: [String]? = nil,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws -> [String: Int] {
        var names: [String]
        if let collections {
            names = collections
        } else {
            let compared = { (name: String) in !SearchIndexKeys.isIndexCollection(name) }
            names = try withReadSession { try $0.reader.collectionNames() }.filter(compared)
            let mine = Set(names.map(Identifier.folded))
            let theirs = try other.withReadSession { try $0.reader.collectionNames() }.filter(compared)
            for name in theirs where !mine.contains(Identifier.folded(name)) {
                throw StorageError(
                    .verificationFailed,
                    "collection '\(name)' is in the other store only",
                    collection: name
                )
            }
            names.sort { Identifier.folded($0) < Identifier.folded($1) }
        }
        var counts: [String: Int] = [:]
        var done = 0
        for name in names {
            counts[name] = try verifyCollection(name, against: other) { records in
                done += records
                progress?(StoreCopyProgress(phase: .verifying, collection: name, records: done, total: nil))
            }
        }
        return counts
    }

    // MARK: Copying

    /// The source schemas (with their record counts) of the collections to copy.
    private func copyPlan(_ requested: [String]?) throws -> [(schema: CollectionSchema, count: Int)] {
        try withReadSession { session in
            // The search collections are derived from the records: each copied collection's
            // index is built again at the destination, in the destination's own form.
            let stored = try session.reader.collectionNames().filter { !SearchIndexKeys.isIndexCollection($0) }
            let names: [String]
            if let requested {
                var byFolded: [String: String] = [:]
                for name in stored { byFolded[Identifier.folded(name)] = name }
                names = try requested.map { name in
                    guard let found = byFolded[Identifier.folded(name)] else {
                        throw StorageError(
                            .unknownCollection,
                            "the source has no collection '\(name)'",
                            collection: name
                        )
                    }
                    return found
                }
            } else {
                // The store's own collections (`_settings`) first, then the others by name.
                names = stored.sorted { ($0.hasPrefix("_") ? 0 : 1, $0) < ($1.hasPrefix("_") ? 0 : 1, $1) }
            }
            return try names.compactMap { name in
                guard let schema = try session.reader.schema(of: name) else { return nil }
                return (schema, try session.reader.count(in: name, where: nil))
            }
        }
    }

    /// Copies one collection, batch by batch: a thread of its own reads the source's batches
    /// (and digests them) while this one writes the previous batch, at most two batches ahead.
    /// `didCopy` gets the size of each batch written.
    /// - Returns: the records copied, and the digest of the records read.
    private func copyCollection(
        _ schema: CollectionSchema,
        to destination: ObjectStore,
        mode: StoreCopyMode,
        batchSize: Int,
        didCopy: (Int) -> Void
    ) throws -> (Int, CollectionDigest) {
        let fullText = try withReadSession { try $0.searchEntry(schema.name)?.fields }
        try destination.withWriteSession { try $0.prepareCopy(of: schema, mode: mode, fullText: fullText) }
        let columns = schema.columns.map(\.name)
        let keyIndex = schema.columnIndex(named: schema.primaryKey)!
        let (folded, canonical) = CollectionDigest.canonicalColumns(of: schema)
        let canonicalPositions = canonical.map { schema.columnIndex(named: $0)! }
        let queue = BatchQueue(capacity: 2)
        let finished = DispatchSemaphore(value: 0)
        let reader = Thread { [self] in
            defer { finished.signal() }
            var digest = CollectionDigest()
            var last: StorageValue?
            do {
                while true {
                    let batch = try withReadSession { session in
                        try session.copyBatch(
                            schema,
                            columns: columns,
                            keyIndex: keyIndex,
                            after: last,
                            limit: batchSize
                        )
                    }
                    for record in batch {
                        digest.add(columns: folded) { record[canonicalPositions[$0]] }
                    }
                    guard let lastRecord = batch.last else { break }
                    last = lastRecord[keyIndex]
                    guard queue.put(batch) else { return }
                }
                queue.finish(digest)
            } catch {
                queue.fail(error)
            }
        }
        reader.stackSize = 4 << 20
        reader.start()
        defer {
            queue.cancel()
            finished.wait()
        }
        var copied = 0
        while let batch = try queue.take() {
            try destination.withWriteSession { session in
                try session.writeCopied(batch, into: schema.name, columns: columns, keyIndex: keyIndex)
            }
            copied += batch.count
            didCopy(batch.count)
        }
        let result = try queue.result()
        if schema.hasAutoKey {
            // Past the keys the source assigned and deleted too, not only the ones copied.
            if let next = try withReadSession({ try $0.reader.nextAutoKey(in: schema.name) }) {
                try destination.withWriteSession { session in
                    let writer = try session.requireWriter()
                    if try writer.nextAutoKey(in: schema.name).map({ $0 < next }) ?? true {
                        try writer.raiseNextAutoKey(in: schema.name, to: next)
                    }
                }
            }
        }
        return (copied, result)
    }

    // MARK: Verifying

    /// Compares one collection's count and digest with `other`'s, and finds a differing key when
    /// they differ. `didRead` gets the number of records read on this side.
    @discardableResult
    private func verifyCollection(
        _ name: String,
        against other: ObjectStore,
        knowing known: (schema: CollectionSchema, digest: CollectionDigest)? = nil,
        didRead: (Int) -> Void
    ) throws -> Int {
        let mine = try known ?? withReadSession { try $0.digest(of: name) }
        let theirs = try other.withReadSession { try $0.digest(of: name) }
        didRead(mine?.digest.count ?? 0)
        switch (mine, theirs) {
        case (nil, nil):
            throw StorageError(.verificationFailed, "neither store has collection '\(name)'", collection: name)
        case (nil, .some):
            throw StorageError(.verificationFailed, "collection '\(name)' is in the other store only", collection: name)
        case (.some, nil):
            throw StorageError(
                .verificationFailed,
                "collection '\(name)' is missing from the other store",
                collection: name
            )
        case (.some(let mine), .some(let theirs)):
            if mine.schema.primaryKey != theirs.schema.primaryKey {
                throw StorageError(
                    .verificationFailed,
                    "collection '\(name)' has primary key '\(mine.schema.primaryKey)' here and"
                        + " '\(theirs.schema.primaryKey)' in the other store",
                    collection: name
                )
            }
            if mine.digest == theirs.digest { return mine.digest.count }
            let summary = "here \(mine.digest), in the other store \(theirs.digest)"
            if let key = try firstDifference(in: name, mine.schema, against: other, theirs.schema) {
                throw StorageError(
                    .verificationFailed,
                    "collection '\(name)' differs at key \(key.difference) (\(summary))",
                    collection: name,
                    key: key.key
                )
            }
            throw StorageError(
                .verificationFailed,
                "collection '\(name)' differs (\(summary)), though no record was found to differ;"
                    + " was a store written during the check?",
                collection: name
            )
        }
    }

    /// One key whose record differs between the stores (present on one side only, or with other
    /// values), found by walking each side in batches and looking each key up on the other.
    private func firstDifference(
        in name: String,
        _ schema: CollectionSchema,
        against other: ObjectStore,
        _ otherSchema: CollectionSchema
    ) throws -> (key: StorageValue, difference: String)? {
        let sides = [
            (self, schema, other, otherSchema, "is missing from the other store"),
            (other, otherSchema, self, schema, "is in the other store only"),
        ]
        for (first, firstSchema, second, secondSchema, missing) in sides {
            let (folded, columns) = CollectionDigest.canonicalColumns(of: firstSchema)
            let (otherFolded, otherColumns) = CollectionDigest.canonicalColumns(of: secondSchema)
            let keyPosition = columns.firstIndex(of: firstSchema.primaryKey)!
            var last: StorageValue?
            while true {
                let batch = try first.withReadSession { session in
                    try session.copyBatch(firstSchema, columns: columns, keyIndex: keyPosition, after: last, limit: 500)
                }
                guard let lastRecord = batch.last else { break }
                last = lastRecord[keyPosition]
                let found: (StorageValue, String)? = try second.withReadSession { session in
                    for record in batch {
                        let key = record[keyPosition]
                        let expected = CollectionDigest.canonicalRecord(columns: folded) { record[$0] }
                        var actual: [[UInt8]: StorageValue]?
                        _ = try session.reader.get(secondSchema.name, key: key, columns: otherColumns) { row in
                            actual = CollectionDigest.canonicalRecord(columns: otherFolded) { row.value(at: $0) }
                        }
                        guard let actual else { return (key, "\(key), which " + missing) }
                        if actual != expected {
                            let column =
                                folded.indices.first { actual[folded[$0]] != expected[folded[$0]] }
                                .map { " in column '\(columns[$0])'" } ?? " in a column of the other store only"
                            return (key, "\(key)" + column)
                        }
                    }
                    return nil
                }
                if let found { return found }
            }
        }
        return nil
    }
}

extension ObjectStore {
    /// Copies collections into `destination` on the store's own threads; see
    /// `copy(to:collections:mode:verifying:batchSize:progress:)`.
    /// - Parameters:
    ///   - destination: the store written to.
    ///   - collections: the collections to copy; `nil` for all.
    ///   - mode: what to do with a destination collection that already holds records.
    ///   - verifying: whether to verify each collection after copying it.
    ///   - batchSize: at most this many records per batch.
    ///   - progress: called after each batch, on one of the store's threads.
    /// - Returns: per collection, the records copied and whether verification matched.
    /// - Throws: as the synchronous call, or `CancellationError` when the task was cancelled
    ///   before the copy began.
    @discardableResult
    public func copy(
        to destination: ObjectStore,
        collections: [String]? = nil,
        mode: StoreCopyMode = .refuse,
        verifying: Bool = true,
        batchSize: Int = 10_000,
        progress: (@Sendable (StoreCopyProgress) -> Void)? = nil
    ) async throws -> StoreCopyReport {
        try await perform {
            try self.copy(
                to: destination,
                collections: collections,
                mode: mode,
                verifying: verifying,
                batchSize: batchSize,
                progress: progress
            )
        }
    }

    /// Checks that this store and `other` hold the same data, on the store's own threads; see
    /// `verify(against:collections:progress:)`.
    /// - Parameters:
    ///   - other: the store compared with.
    ///   - collections: the collections compared; `nil` for all.
    ///   - progress: called after each collection, on one of the store's threads.
    /// - Returns: the number of records of each collection compared, by name.
    /// - Throws: as the synchronous call, or `CancellationError` when the task was cancelled
    ///   before the check began.
    @discardableResult
    public func verify(
        against other: ObjectStore,
        collections: [String]? = nil,
        progress: (@Sendable (StoreCopyProgress) -> Void)? = nil
    ) async throws -> [String: Int] {
        try await perform { try self.verify(against: other, collections: collections, progress: progress) }
    }
}
