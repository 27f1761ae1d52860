/// Eager loading: records with the records they reference, or the records referencing them, in
/// one query per level (never one per record).
extension Session {
    /// The position of `column` among a scan's columns, spelt as stored.
    /// - Throws: ``StorageError`` with `.unknownColumn` when the collection has no such column.
    private static func position(of column: String, in request: ScanRequest, _ stored: CollectionSchema) throws -> Int {
        if let position = request.columns.firstIndex(of: column) { return position }
        let other = stored.column(named: column).map { " (it has \(Identifier.spelling($0.name)))" } ?? ""
        throw StorageError(
            .unknownColumn,
            "collection '\(stored.name)' has no column \(Identifier.spelling(column)) to relate through" + other,
            collection: stored.name,
            column: column
        )
    }

    /// The values of `type` matching `predicate`, each with the value of column `column` of its
    /// record: one scan.
    private func scanWithColumn<T: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate?,
        orderBy ordering: [Ordering],
        column: String
    ) throws -> [(T, StorageValue)]? {
        guard let (request, decoder) = try prepareScan(type, where: predicate, orderBy: ordering, limit: nil) else {
            return nil
        }
        let stored = try storedSchema(request.collection)!
        let position = try Self.position(of: column, in: request, stored)
        var found: [(T, StorageValue)] = []
        try reader.scan(request) { row in
            found.append((try decoder.decode(T.self, from: row), row.value(at: position)))
            return true
        }
        return found
    }

    /// Each value of `type` matching `predicate`, in `ordering`, with the value of `related` whose
    /// primary key its column `column` holds (`nil` for a null or a key that names no record).
    func fetchAll<T: Decodable, Related: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate?,
        orderBy ordering: [Ordering],
        including related: Related.Type,
        via column: String
    ) throws -> [(T, Related?)] {
        guard let records = try scanWithColumn(type, where: predicate, orderBy: ordering, column: column) else {
            return []
        }
        let info = try catalog.info(for: related)
        guard let stored = try storedSchema(info.collection) else { return records.map { ($0.0, nil) } }
        let keyType = catalog.readPlan(for: stored).keyType
        var wanted: [StorageValue] = []
        var seen: Set<StorageValue> = []
        for (_, value) in records where !value.isNull {
            let key = value.applyingAffinity(keyType)
            if seen.insert(key).inserted { wanted.append(key) }
        }
        var byKey: [StorageValue: Related] = [:]
        if !wanted.isEmpty {
            let targets = try scanWithColumn(
                related,
                where: .in(stored.primaryKey, wanted),
                orderBy: [],
                column: stored.primaryKey
            )
            for (value, key) in targets ?? [] { byKey[key] = value }
        }
        return records.map { record, value in (record, value.isNull ? nil : byKey[value.applyingAffinity(keyType)]) }
    }

    /// Each value of `type` matching `predicate`, in `ordering`, with the values of `related`
    /// whose column `column` holds its primary key (in primary-key order).
    func fetchAll<T: Decodable, Related: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate?,
        orderBy ordering: [Ordering],
        includingAll related: Related.Type,
        via column: String
    ) throws -> [(T, [Related])] {
        let info = try catalog.info(for: type)
        guard let stored = try storedSchema(info.collection) else { return try Self.noCollection(predicate, []) }
        guard let records = try scanWithColumn(type, where: predicate, orderBy: ordering, column: stored.primaryKey)
        else { return [] }
        let keyType = catalog.readPlan(for: stored).keyType
        let relatedInfo = try catalog.info(for: related)
        guard !records.isEmpty, let relatedStored = try storedSchema(relatedInfo.collection) else {
            if let relatedStored = try storedSchema(relatedInfo.collection) {
                _ = try Self.position(
                    of: column,
                    in: ScanRequest(collection: relatedStored.name, columns: relatedStored.columns.map(\.name)),
                    relatedStored
                )
            }
            return records.map { ($0.0, []) }
        }
        let columnType = catalog.readPlan(for: relatedStored).types[column] ?? .untyped
        let children =
            try scanWithColumn(
                related,
                where: .in(column, records.map { $0.1.applyingAffinity(columnType) }),
                orderBy: [],
                column: column
            ) ?? []
        var byKey: [StorageValue: [Related]] = [:]
        for (child, value) in children { byKey[value.applyingAffinity(keyType), default: []].append(child) }
        return records.map { record, key in (record, byKey[key] ?? []) }
    }
}
