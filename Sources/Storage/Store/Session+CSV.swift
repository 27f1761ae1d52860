import Foundation

/// CSV import's second pass (see `CSVImport`): the records stored through the backend's writer,
/// with the types the first pass found.
extension Session {
    /// Both passes inside this session's transaction (the transaction handle's import).
    func insert(csv input: CSVReader.Input, into collection: String, primaryKey: String?) throws -> Int {
        let plan = try CSVImport(input, collection: collection)
        return try insert(csv: CSVReader(input), plan: plan, primaryKey: primaryKey)
    }

    /// Stores every record of `reader` in `collection`.
    /// - Parameters:
    ///   - reader: the input, from its start (the header is read again).
    ///   - plan: the first pass's findings.
    ///   - requested: the primary key asked for, or nil.
    ///   - progress: called every `CSVImport.progressInterval` records stored.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` naming the line: a record whose values the columns cannot take,
    ///   without its key, or differing from an earlier one under the same natural key.
    func insert(
        csv reader: CSVReader,
        plan: CSVImport,
        primaryKey requested: String?,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws -> Int {
        let collection = plan.collection
        let stored = try storedSchema(collection)
        let key = try CSVImport.chooseKey(
            requested: requested,
            stored: stored,
            candidates: plan.header,
            isAlwaysPresent: { name in plan.firstEmptyLine[plan.header.firstIndex(of: name)!] == 0 },
            collection: collection
        )
        var columns = zip(plan.header, plan.kinds).map { ColumnDefinition(name: $0, type: $1.columnType) }
        let keySlot: Int
        if let slot = plan.header.firstIndex(where: { Identifier.folded($0) == Identifier.folded(key) }) {
            keySlot = slot
            if plan.firstEmptyLine[slot] != 0 && key != CollectionSchema.autoKeyColumn {
                throw StorageError(
                    .invalidKey,
                    "line \(plan.firstEmptyLine[slot]): the record has no value for the primary key \(Identifier.quoted(key))",
                    collection: collection,
                    column: key
                )
            }
        } else {
            guard key == CollectionSchema.autoKeyColumn else {
                throw StorageError(
                    .invalidKey,
                    "the input has no column \(Identifier.quoted(key)), the primary key of collection '\(collection)'",
                    collection: collection,
                    column: key
                )
            }
            keySlot = columns.count
            columns.append(ColumnDefinition(name: key, type: .integer, isNullable: false))
        }
        // Nothing to store creates nothing, as with JSON: an empty input must not fix the key.
        if plan.recordCount == 0 { return 0 }
        if let stored { try Self.checkBatchTypes(of: columns, against: stored) }
        let schema = CollectionSchema(name: collection, columns: columns, primaryKey: key)
        try schema.validate()
        let result = try prepare(schema)
        let types = columns.map { result.column(named: $0.name)?.type ?? .untyped }
        let writer = try makeRecordWriter(for: collection, columns: columns.map(\.name))
        let references = try referenceSlots(of: collection, columns: columns.map(\.name))

        var record = CSVRecord()
        guard try reader.next(into: &record) else { return 0 }  // the header, read in the first pass
        var values = Array(repeating: StorageValue.null, count: columns.count)
        var keys = KeyList()  // sequential keys take a few bytes however long the file
        // For a natural key only: the line and a digest of the content of each key's first
        // record, so that two records of one file under one key must agree (as with JSON), or the
        // file has an error the last record would silently hide. Auto keys need nothing.
        var seen: [StorageValue: (line: Int, digest: Int)]? = requested == nil ? nil : [:]
        while try reader.next(into: &record) {
            try plan.checkShape(record)
            for index in 0..<record.count {
                let value = try plan.value(record, at: index).checkedForStorage(column: plan.header[index])
                do {
                    values[index] = try Self.converted(value, to: types[index], column: columns[index].name)
                } catch let error as StorageError {
                    throw error.at("line \(record.line)", in: collection)
                }
            }
            if keySlot < record.count && values[keySlot].isNull {
                throw StorageError(
                    .invalidKey,
                    "line \(record.line): the record has no value for the primary key \(Identifier.quoted(key))",
                    collection: collection,
                    column: key
                )
            }
            if seen != nil {
                let digest = values.hashValue
                if let first = seen![values[keySlot]] {
                    guard first.digest == digest else {
                        throw StorageError(
                            .constraintViolation,
                            "lines \(first.line) and \(record.line) both have \(Identifier.quoted(key))"
                                + " = \(values[keySlot]) but differ; nothing was stored",
                            collection: collection,
                            column: key,
                            key: values[keySlot]
                        )
                    }
                } else {
                    seen![values[keySlot]] = (record.line, digest)
                }
            }
            do {
                if !references.isEmpty {
                    try checkReferences(of: values, key: values[keySlot], slots: references, in: collection)
                }
                keys.append(try writer.put(values))
            } catch let error as StorageError {
                throw error.at("line \(record.line)", in: collection)
            }
            if let progress, keys.count % CSVImport.progressInterval == 0 {
                progress(
                    StoreCopyProgress(
                        phase: .importing,
                        collection: collection,
                        records: keys.count,
                        total: plan.recordCount
                    )
                )
            }
        }
        noteChange(.upsertList(keys), in: collection)
        return keys.count
    }
}
