public import Foundation

extension ObjectStore {
    /// Stores a JSON array of objects (as a server sends it) in `collection`, in one transaction.
    ///
    /// ```swift
    /// try store.insert(jsonArray: data, into: "Person")
    /// ```
    /// The collection is created when missing, with column types inferred from every value of
    /// the batch, never from the first row alone: integer, then real, then text as the values
    /// require (nested arrays and objects as JSON text), so any order of the same rows gives the
    /// same columns. A later batch widens an integer column to real or to text, rebuilding it in
    /// the same transaction; a real column stays real. New keys become new columns. The primary
    /// key is `primaryKey` when given, else `id` when every object has one, otherwise an
    /// auto-assigned key; an existing object with the same key is replaced, so importing the same
    /// file again with a natural key replaces its records.
    /// - Parameters:
    ///   - data: a JSON array of objects.
    ///   - collection: the collection's name.
    ///   - primaryKey: the member every object carries that identifies it (`"iata"`), or nil.
    /// - Returns: the number of records stored (as every bulk write returns a count; the keys
    ///   reach observers, in ``CollectionChange``).
    /// - Throws: ``StorageError`` with `.invalidJSON` for malformed JSON, JSON that is not an array
    ///   of objects, or an object holding a key twice (byte for byte, or in two Unicode
    ///   normalizations; the message names the row and the key), `.invalidIdentifier` for a key that is not a valid column name, `.invalidKey`
    ///   for an object without its `primaryKey`, `.constraintViolation` for two objects with the
    ///   same `primaryKey` and different content, `.valueOutOfRange` for a NaN, `.schemaMismatch`
    ///   for a `primaryKey` other than the collection's. Nothing is stored then.
    @discardableResult
    public func insert(
        jsonArray data: Data,
        into collection: String,
        primaryKey: String? = nil
    ) throws -> Int {
        try insert(dictionaries: Self.jsonRows(data, for: collection), into: collection, primaryKey: primaryKey)
    }

    /// The objects of a JSON array, checked as `insert(jsonArray:into:primaryKey:)` documents.
    static func jsonRows(_ data: Data, for collection: String) throws -> [[String: Any]] {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw StorageError(
                .invalidJSON,
                "the data for collection '\(collection)' is not valid JSON",
                collection: collection,
                underlying: SendableErrorDescription(error)
            )
        }
        guard let array = object as? [Any] else {
            throw StorageError(
                .invalidJSON,
                "expected a JSON array of objects, found \(Self.jsonKind(object))",
                collection: collection
            )
        }
        if let repeated = JSONRepeatedKeys.first(in: data) {
            throw Self.repeatedKeyError(repeated, in: collection)
        }
        var rows: [[String: Any]] = []
        rows.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            guard let row = element as? [String: Any] else {
                throw StorageError(
                    .invalidJSON,
                    "expected a JSON array of objects, but element \(index) is \(Self.jsonKind(element))",
                    collection: collection
                )
            }
            rows.append(row)
        }
        return rows
    }

    /// Stores dictionaries (as `JSONSerialization` gives them) in `collection`, in one transaction;
    /// see `insert(jsonArray:into:primaryKey:)`. Values may be strings, numbers, Bools, `NSNull`,
    /// `Data`, `Date`, `StorageValue`, or arrays and dictionaries of JSON values (stored as JSON
    /// text).
    /// - Parameters:
    ///   - rows: the records, one dictionary each.
    ///   - collection: the collection's name.
    ///   - primaryKey: the key every row carries that identifies it, or nil.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` as `insert(jsonArray:into:primaryKey:)` does; nothing is stored then.
    @discardableResult
    public func insert(
        dictionaries rows: [[String: Any]],
        into collection: String,
        primaryKey: String? = nil
    ) throws -> Int {
        try withWriteSession { try $0.insert(dictionaries: rows, into: collection, primaryKey: primaryKey).count }
    }

    /// The records of `collection` as dictionaries of every stored column.
    /// - Parameters:
    ///   - collection: the collection read.
    ///   - predicate: which records; `nil` for all.
    ///   - ordering: the order, then by primary key.
    ///   - limit: at most this many records; `nil` for all.
    ///   - offset: how many matching records to skip first.
    /// - Returns: one dictionary per record.
    /// - Throws: ``StorageError``, e.g. `.unknownColumn` for a column the collection lacks.
    public func fetchDictionaries(
        from collection: String,
        where predicate: StoragePredicate? = nil,
        orderBy ordering: [Ordering] = [],
        limit: Int? = nil,
        offset: Int = 0
    ) throws -> [[String: StorageValue]] {
        try withReadSession {
            try $0.fetchDictionaries(
                from: collection,
                where: predicate,
                orderBy: ordering,
                limit: limit,
                offset: offset
            )
        }
    }

    /// The error for an object of a JSON import that holds a key twice (`JSONRepeatedKeys`):
    /// `.invalidJSON`, naming the row (the array's element, or `line` when given) and the key's
    /// spellings.
    package static func repeatedKeyError(
        _ repeated: JSONRepeatedKeys.Repeat,
        in collection: String,
        line: Int? = nil
    ) -> StorageError {
        let place = line.map { "line \($0)" } ?? repeated.element.map { "row \($0)" } ?? "the JSON"
        return repeatedKeyError(repeated, in: collection, place: place)
    }

    /// The error for an object that holds a key twice, its message starting with `place`.
    static func repeatedKeyError(
        _ repeated: JSONRepeatedKeys.Repeat,
        in collection: String,
        place: String
    ) -> StorageError {
        let what =
            Identifier.spelledAlike(repeated.first, repeated.second)
            ? "key \(Identifier.spelling(repeated.first)) twice"
            : "key \(Identifier.spelling(repeated.first)) twice, the second time as \(Identifier.spelling(repeated.second))"
                + " (another Unicode normalization of it)"
        return StorageError(
            .invalidJSON,
            place + ": an object holds " + what + "; one of the values would be lost, so nothing was stored",
            collection: collection,
            column: repeated.first
        )
    }

    static func jsonKind(_ value: Any) -> String {
        switch value {
        case is NSNull: return "null"
        case is String: return "a string"
        case is NSNumber: return "a number"
        case is [Any]: return "an array"
        case is [String: Any]: return "an object"
        default: return "a \(type(of: value))"
        }
    }
}
