/// Update-where: new values for some columns of every record a predicate matches, in the write
/// transaction of the session, checked before anything is written.
extension Session {
    /// What an update writes once its assignments are checked: the stored spelling of each
    /// column set, and its value as the column holds it, in column-name order (so every engine
    /// gets the same statement for the same assignments, whatever the dictionary's order).
    struct Assignments {
        let columns: [String]
        let values: [StorageValue]
    }

    /// Sets `assignments` in every record of `type`'s collection matching `predicate`, after
    /// checking that a record of `type` can still be read with the new values (a `nil` in a
    /// property that is not optional, a text that is none of an enum's raw values, are refused).
    /// - Returns: how many records changed.
    func update<T: Decodable>(
        _ type: T.Type,
        set assignments: [String: StorageValue],
        where predicate: StoragePredicate?,
        observed: Bool
    ) throws -> Int {
        let info = try catalog.info(for: type)
        return try update(in: info.collection, set: assignments, where: predicate, observed: observed) {
            stored,
            checked,
            request in
            try self.checkDecodable(type, info: info, stored: stored, checked, request)
        }
    }

    /// Sets `assignments` in every record of `collection` matching `predicate`; `check` sees the
    /// checked assignments and the matching records' request before anything is written.
    ///
    /// `observed` says whether the store's change streams have a subscriber now. When none has,
    /// the keys changed are neither asked of a backend that can count instead (SQLite skips its
    /// `RETURNING`) nor noted for publication: a change stream subscribed while the update runs
    /// may then not hear of it, as one subscribed just after its commit would not.
    /// - Returns: how many records changed.
    func update(
        in collection: String,
        set assignments: [String: StorageValue],
        where predicate: StoragePredicate?,
        observed: Bool,
        check: ((CollectionSchema, Assignments, ScanRequest) throws -> Void)? = nil
    ) throws -> Int {
        guard !assignments.isEmpty else {
            throw StorageError(
                .misuse,
                "an update of collection \(Identifier.quoted(collection)) sets no column; name at least one in `set:`",
                collection: collection
            )
        }
        for name in assignments.keys { try Identifier.validateColumn(name, in: collection, allowingReserved: true) }
        guard let stored = try storedSchema(collection) else { return try Self.noCollection(predicate, 0) }
        let checked = try Self.checkAssignments(assignments, against: stored)
        let request = try makeRequest(
            catalog.readPlan(for: stored),
            columns: [stored.primaryKey],
            where: predicate,
            orderBy: [],
            limit: nil
        )
        try check?(stored, checked, request)
        // A reference set to a key must name a record, as a save's does.
        let references = try referenceSlots(of: stored.name, columns: checked.columns)
        if !references.isEmpty {
            try checkReferences(of: checked.values, key: .null, slots: references, in: stored.name)
        }
        let writer = try requireWriter()
        let bulk = writer as? any BulkUpdatingWriteTransaction
        // An update of an indexed field re-indexes the records it changed, so it needs their keys.
        let reindexes = try indexesForSearch(stored.name, anyOf: checked.columns)
        if !observed, !reindexes, let bulk,
            let count = try bulk.countingUpdateAll(
                in: stored.name,
                columns: checked.columns,
                values: checked.values,
                where: request.predicate
            )
        {
            return count
        }
        let keys: [StorageValue]
        if observed || reindexes, let bulk,
            let changed = try bulk.updateAll(
                in: stored.name,
                columns: checked.columns,
                values: checked.values,
                where: request.predicate
            )
        {
            keys = changed
        } else {
            keys = try Self.rewrite(request, checked, stored, writer)
        }
        if reindexes { try reindexRecords(keys, in: stored.name) }
        if !keys.isEmpty { noteChange(.upsert(keys), in: stored.name) }
        return keys.count
    }

    /// The core path, for a backend that does not run updates itself: the matching keys first
    /// (a scan must not see the records it rewrites), then each record replaced through a writer
    /// of the key and the columns set, which keeps every other column as it is.
    private static func rewrite(
        _ request: ScanRequest,
        _ checked: Assignments,
        _ stored: CollectionSchema,
        _ writer: any BackendWriteTransaction
    ) throws -> [StorageValue] {
        var keys: [StorageValue] = []
        try writer.scan(
            ScanRequest(collection: stored.name, columns: [stored.primaryKey], predicate: request.predicate)
        ) { row in
            keys.append(row.value(at: 0))
            return true
        }
        guard !keys.isEmpty else { return [] }
        let records = try writer.makeWriter(for: stored.name, columns: [stored.primaryKey] + checked.columns)
        try records.expectRecords(keys.count)
        var record = [StorageValue.null] + checked.values
        for key in keys {
            record[0] = key
            do {
                try records.put(record)
            } catch let error as StorageError {
                var error = error.inCollection(stored.name)
                if error.key == nil { error.key = key }
                throw error
            }
        }
        return keys
    }

    /// The assignments as the stored columns hold them, or the error for the first one (in name
    /// order) that names no column, the primary key, a column under another spelling, or a value
    /// of a kind the column cannot hold without changing its type.
    static func checkAssignments(
        _ assignments: [String: StorageValue],
        against stored: CollectionSchema
    ) throws -> Assignments {
        // Keyed by the folded name, found by Swift's string equality: a name differing from a
        // stored one by ASCII case or Unicode normalization finds it, and is then refused as a
        // write spelling a stored column another way is, naming both.
        var byFoldedName: [String: ColumnDefinition] = [:]
        for column in stored.columns { byFoldedName[Identifier.folded(column.name)] = column }
        var columns: [String] = []
        var values: [StorageValue] = []
        for (name, value) in assignments.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            guard let column = byFoldedName[Identifier.folded(name)] else {
                throw StorageError(
                    .unknownColumn,
                    "collection \(Identifier.quoted(stored.name)) has no column \(Identifier.spelling(name)) to set;"
                        + " an update changes stored columns only (save a value to add one)",
                    collection: stored.name,
                    column: name
                )
            }
            guard Identifier.spelledAlike(column.name, name) else {
                throw StorageError(
                    .schemaMismatch,
                    CollectionSchema.twinNames(column.name, name) + "; nothing was updated",
                    collection: stored.name,
                    column: name
                )
            }
            if Identifier.folded(column.name) == Identifier.folded(stored.primaryKey) {
                throw StorageError(
                    .invalidKey,
                    "an update cannot set \(Identifier.quoted(column.name)), the primary key of collection"
                        + " \(Identifier.quoted(stored.name)): a record's key is what names it (save it under the new"
                        + " key and delete the old one); nothing was updated",
                    collection: stored.name,
                    column: column.name
                )
            }
            columns.append(column.name)
            values.append(try Self.assigned(value, to: column, in: stored.name))
        }
        return Assignments(columns: columns, values: values)
    }

    /// `value` as `column` holds it, converted with the column's affinity as a save converts it.
    /// An update never changes a column's type, so a value that would need the column widened
    /// (a real in an integer column, which a save of a `Double` would widen to real), or that
    /// no widening allows (text in a number column, a blob beside other values), is refused.
    private static func assigned(
        _ value: StorageValue,
        to column: ColumnDefinition,
        in collection: String
    ) throws -> StorageValue {
        let fits: Bool
        switch (column.type, value) {
        case (_, .null), (.untyped, _): fits = true
        case (.integer, .integer), (.real, .integer), (.real, .real), (.text, .integer), (.text, .real),
            (.text, .text), (.blob, .blob):
            fits = true
        default: fits = false
        }
        guard fits else {
            throw StorageError(
                .schemaMismatch,
                "collection \(Identifier.quoted(collection)) stores column \(Identifier.quoted(column.name))"
                    + " as \(column.type), which cannot hold the \(value.columnType?.rawValue ?? "null") value"
                    + " \(value) an update would write; an update keeps a column's type (nothing was updated)",
                collection: collection,
                column: column.name
            )
        }
        do {
            return try converted(value.checkedForStorage(column: column.name), to: column.type, column: column.name)
        } catch let error as StorageError {
            throw error.inCollection(collection)
        }
    }

    /// Refuses an update that would leave a record `type` cannot read: the first matching record
    /// (as the engine holds it) is decoded with the new values put in, when it decoded before.
    /// A record is enough, since the other columns do not take part in whether the new values
    /// fit their properties; none matching means nothing is written at all.
    private func checkDecodable<T: Decodable>(
        _ type: T.Type,
        info: ModelInfo,
        stored: CollectionSchema,
        _ checked: Assignments,
        _ request: ScanRequest
    ) throws {
        let plan = catalog.readPlan(for: stored)
        var first: [StorageValue]?
        try reader.scan(
            ScanRequest(collection: stored.name, columns: plan.columns, predicate: request.predicate, limit: 1)
        ) { row in
            first = plan.columns.indices.map { row.value(at: $0) }
            return false
        }
        guard var values = first else { return }
        let decoder = RowDecoder(typeName: info.typeName, collection: stored.name, plan: plan)
        guard (try? decoder.decode(T.self, from: ValuesRow(values: values))) != nil else { return }
        for (column, value) in zip(checked.columns, checked.values) {
            if let slot = plan.slotByName[column] { values[slot] = value }
        }
        do {
            _ = try decoder.decode(T.self, from: ValuesRow(values: values))
        } catch {
            let reason = (error as? StorageError)?.message ?? "\(error)"
            throw StorageError(
                .schemaMismatch,
                "\(info.typeName) cannot hold the values an update of collection \(Identifier.quoted(stored.name))"
                    + " would write (\(reason)); nothing was updated",
                collection: stored.name,
                column: (error as? StorageError)?.column,
                underlying: error as? StorageError
            )
        }
    }
}

/// A record held as an array, in the read plan's column order.
private struct ValuesRow: StorageRow {
    let values: [StorageValue]

    func value(at index: Int) -> StorageValue { values[index] }
}
