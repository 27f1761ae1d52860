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

    /// The values of `type` matching `predicate` and the value of column `column` of each record,
    /// in two arrays of one order: one scan. The values are decoded into raw memory and moved into
    /// their array once, as `fetchAll` does (an append of a generic tuple in this unspecialized
    /// code looked up its metadata at run time every time).
    private func scanWithColumn<T: Decodable>(
        _ type: T.Type,
        where predicate: StoragePredicate?,
        orderBy ordering: [Ordering],
        column: String
    ) throws -> (values: [T], columns: [StorageValue])? {
        guard let (request, decoder) = try prepareScan(type, where: predicate, orderBy: ordering, limit: nil) else {
            return nil
        }
        let stored = try storedSchema(request.collection)!
        let position = try Self.position(of: column, in: request, stored)
        var buffer = ValueBuffer()
        defer { buffer.free(T.self) }
        var columns: [StorageValue] = []
        if let expected = try reader.expectedRowCount(of: request) { columns.reserveCapacity(expected) }
        try reader.scan(request) { row in
            try decoder.decode(T.self, from: row, into: buffer.reserveNext(T.self))
            buffer.didInitializeNext()
            columns.append(row.value(at: position))
            return true
        }
        return (buffer.moveToArray(of: T.self), columns)
    }

    /// `values` paired with `partners` (as many, in order), built in place.
    private static func zipped<A, B>(_ values: [A], _ partners: (Int) -> B) -> [(A, B)] {
        [(A, B)](unsafeUninitializedCapacity: values.count) { buffer, initialized in
            let base = buffer.baseAddress!
            for index in values.indices { (base + index).initialize(to: (values[index], partners(index))) }
            initialized = values.count
        }
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
        guard let (records, references) = try scanWithColumn(type, where: predicate, orderBy: ordering, column: column)
        else { return [] }
        let info = try catalog.info(for: related)
        guard let stored = try storedSchema(info.collection) else { return Self.zipped(records) { _ in nil } }
        let keyType = catalog.readPlan(for: stored).keyType
        var wanted: [StorageValue] = []
        var seen = KeyPositions(capacity: references.count)
        for value in references where !value.isNull {
            let key = value.applyingAffinity(keyType)
            if seen.insert(key, at: 0) { wanted.append(key) }
        }
        var targets: [Related] = []
        var positions = KeyPositions(capacity: wanted.count)
        if !wanted.isEmpty,
            let (found, keys) = try scanWithColumn(
                related,
                where: .in(stored.primaryKey, wanted),
                orderBy: [],
                column: stored.primaryKey
            )
        {
            targets = found
            for (index, key) in keys.enumerated() { positions.insert(key, at: index) }
        }
        return Self.zipped(records) { index in
            let value = references[index]
            guard !value.isNull, let position = positions[value.applyingAffinity(keyType)] else { return nil }
            return targets[position]
        }
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
        guard
            let (records, keys) = try scanWithColumn(
                type,
                where: predicate,
                orderBy: ordering,
                column: stored.primaryKey
            )
        else { return [] }
        let keyType = catalog.readPlan(for: stored).keyType
        let relatedInfo = try catalog.info(for: related)
        guard let relatedStored = try storedSchema(relatedInfo.collection) else {
            return Self.zipped(records) { _ in [] }
        }
        guard !records.isEmpty else {
            // The column is checked even when there is nothing to load.
            _ = try Self.position(
                of: column,
                in: ScanRequest(collection: relatedStored.name, columns: relatedStored.columns.map(\.name)),
                relatedStored
            )
            return []
        }
        let columnType = catalog.readPlan(for: relatedStored).types[column] ?? .untyped
        let (children, parents) =
            try scanWithColumn(
                related,
                where: .in(column, keys.map { $0.applyingAffinity(columnType) }),
                orderBy: [],
                column: column
            ) ?? ([], [])
        var positions = KeyPositions(capacity: keys.count)
        for (index, key) in keys.enumerated() { positions.insert(key, at: index) }
        var groups = [[Int]](repeating: [], count: records.count)
        for (child, parent) in parents.enumerated() {
            if let position = positions[parent.applyingAffinity(keyType)] { groups[position].append(child) }
        }
        return Self.zipped(records) { index in groups[index].map { children[$0] } }
    }
}

/// Positions by primary key, for joining the records of two levels: integer keys (the common
/// case) in a table of `Int64`s, whose hashing is a fraction of a `StorageValue`'s, others by
/// value.
struct KeyPositions {
    private var integers: [Int64: Int] = [:]
    private var others: [StorageValue: Int] = [:]

    init(capacity: Int) { integers.reserveCapacity(capacity) }

    /// Records `position` for `key` unless the key has one; returns whether it was new.
    @discardableResult
    mutating func insert(_ key: StorageValue, at position: Int) -> Bool {
        if case .integer(let number) = key {
            if integers[number] != nil { return false }
            integers[number] = position
            return true
        }
        if others[key] != nil { return false }
        others[key] = position
        return true
    }

    subscript(key: StorageValue) -> Int? {
        if case .integer(let number) = key { return integers[number] }
        return others[key]
    }
}
