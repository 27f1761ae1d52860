import Foundation

/// The untyped path (ORIGINS.md §1): dictionaries, as `JSONSerialization` gives them, stored
/// with inferred column types, and rows read back as dictionaries.
extension Session {
    /// Stores dictionaries in `collection` with column types inferred over the whole batch.
    /// - Parameters:
    ///   - rows: the records, one dictionary each.
    ///   - collection: the collection's name.
    ///   - primaryKey: the key every row carries (a natural key such as `iata`), or nil for `id`
    ///     when every row has one, else an auto-assigned key.
    /// - Returns: the primary keys of the stored rows.
    /// - Throws: ``StorageError`` as ``ObjectStore/insert(dictionaries:into:primaryKey:)`` does.
    func insert(
        dictionaries rows: [[String: Any]],
        into collection: String,
        primaryKey: String? = nil
    ) throws -> [StorageValue] {
        try Identifier.validateCollection(collection)
        // Nothing to store creates nothing: an empty first batch must not fix the key to an
        // auto-assigned one before any row has shown whether it carries an `id`.
        if rows.isEmpty { return [] }
        var batch = DictionaryBatch(collection: collection)
        var records: [[StorageValue]] = []
        records.reserveCapacity(rows.count)
        for (rowIndex, row) in rows.enumerated() { records.append(try batch.add(row, at: rowIndex)) }
        var next = 0
        return try store(
            batch,
            primaryKey: primaryKey,
            earlier: { records[$0] },
            next: {
                guard next < records.count else { return nil }
                defer { next += 1 }
                return (next, records[next])
            }
        ).values
    }

    /// A dictionary value as a stored value and the column type it implies (nil for null).
    static func storageValue(
        _ any: Any,
        collection: String,
        column: String,
        row: Int
    ) throws -> (StorageValue, ColumnType?) {
        // Text and numbers first: they are what JSONSerialization hands out, and a failed cast
        // of an `Any` is dear (docs/BENCHMARKS.md). No value matches more than one case, so the
        // order changes nothing else.
        switch any {
        case let text as String:
            return (.text(text), .text)
        case let number as NSNumber:
            // The type code's first character; "d"/"f" for floating point, "Q"/"L"/"I"/"S"/"C"
            // for unsigned integers.
            switch UInt8(bitPattern: number.objCType.pointee) {
            case UInt8(ascii: "d"), UInt8(ascii: "f"):
                if ObjectIdentifier(type(of: number)) == ObjectIdentifier(NSDecimalNumber.self) {
                    // JSON integers beyond UInt64 arrive as decimals: kept as their digits,
                    // never rounded to the nearest real.
                    return try exactNumber(number.decimalValue, collection: collection, column: column, row: row)
                }
                return (try real(number.doubleValue, collection: collection, column: column, row: row), .real)
            case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"), UInt8(ascii: "S"), UInt8(ascii: "C"):
                if let exact = Int64(exactly: number.uint64Value) { return (.integer(exact), .integer) }
                // Beyond Int64 (18446744073709551615): the digits, exactly, as text.
                return (.text(String(number.uint64Value)), .text)
            default:
                return (.integer(number.int64Value), .integer)
            }
        case is NSNull:
            return (.null, nil)
        case let value as StorageValue:
            if case .real(let number) = value {
                return (try real(number, collection: collection, column: column, row: row), .real)
            }
            return (value, value.columnType)
        case let data as Data:
            return (.blob(data), .blob)
        case let date as Date:
            return (try real(date.timeIntervalSince1970, collection: collection, column: column, row: row), .real)
        case is [Any], is [String: Any]:
            guard JSONSerialization.isValidJSONObject(any),
                let data = try? JSONSerialization.data(withJSONObject: any, options: [.sortedKeys])
            else {
                throw StorageError(
                    .invalidJSON,
                    "row \(row), key \(Identifier.quoted(column)): the nested value cannot be stored as JSON",
                    collection: collection,
                    column: column
                )
            }
            return (.text(String(decoding: data, as: UTF8.self)), .text)
        default:
            throw StorageError(
                .unsupportedType,
                "row \(row), key \(Identifier.quoted(column)): a value of type \(type(of: any)) cannot be stored",
                collection: collection,
                column: column
            )
        }
    }

    /// A real as every backend stores it (see `StorageValue.checkedForStorage`), or an error
    /// naming the row for a NaN.
    private static func real(_ number: Double, collection: String, column: String, row: Int) throws -> StorageValue {
        do {
            return try StorageValue.real(number).checkedForStorage(column: column)
        } catch let error as StorageError {
            throw error.at("row \(row)", in: collection)
        }
    }

    /// A decimal number from JSON: an integer when it is a whole number that fits Int64, a real
    /// when the real prints back as the same digits, and otherwise its exact digits as text.
    private static func exactNumber(
        _ decimal: Decimal,
        collection: String,
        column: String,
        row: Int
    ) throws -> (StorageValue, ColumnType) {
        let text = decimal.description
        if let integer = Int64(text) { return (.integer(integer), .integer) }
        if let number = Double(text), number.isFinite, Decimal(string: "\(number)") == decimal {
            return (try real(number, collection: collection, column: column, row: row), .real)
        }
        return (.text(text), .text)
    }

    func fetchDictionaries(
        from collection: String,
        where predicate: StoragePredicate?,
        orderBy ordering: [Ordering],
        limit: Int?,
        offset: Int = 0
    ) throws -> [[String: StorageValue]] {
        try Identifier.validateCollection(collection)
        guard let stored = try storedSchema(collection) else { return try Self.noCollection(predicate, []) }
        let plan = catalog.readPlan(for: stored)
        let columns = plan.columns
        let request = try makeRequest(
            plan,
            columns: columns,
            where: predicate,
            orderBy: ordering,
            limit: limit,
            offset: offset
        )
        var rows: [[String: StorageValue]] = []
        try reader.scan(request) { row in
            var dictionary: [String: StorageValue] = [:]
            dictionary.reserveCapacity(columns.count)
            for (index, name) in columns.enumerated() { dictionary[name] = row.value(at: index) }
            rows.append(dictionary)
            return true
        }
        return rows
    }
}
