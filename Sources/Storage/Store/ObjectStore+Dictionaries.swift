public import Foundation

extension ObjectStore {
    /// Stores a JSON array of objects (as a server sends it) in `collection`, in one transaction.
    ///
    /// ```swift
    /// try store.insert(jsonArray: data, into: "Person")
    /// ```
    /// The collection is created when missing, with column types inferred from the values
    /// (integer, real, text; nested arrays and objects as JSON text). An integer column is widened
    /// to real when fractions arrive, and new keys become new columns. The primary key is `id`
    /// when every object has one, otherwise an auto-assigned key; an existing object with the same
    /// key is replaced.
    /// - Parameters:
    ///   - data: UTF-8 JSON: an array of objects.
    ///   - collection: the collection's name; it must be a valid collection name
    ///     (`.invalidIdentifier` otherwise).
    /// - Returns: the primary keys of the stored rows.
    /// - Throws: ``StorageError`` with `.invalidJSON` for malformed JSON or JSON that is not an array
    ///   of objects, `.invalidIdentifier` for a key that is not a valid column name. Nothing is
    ///   stored then.
    @discardableResult
    public func insert(jsonArray data: Data, into collection: String) throws -> [StorageValue] {
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
        return try insert(dictionaries: rows, into: collection)
    }

    /// Stores dictionaries (as `JSONSerialization` gives them) in `collection`, in one transaction;
    /// see `insert(jsonArray:into:)`. Values may be strings, numbers, Bools, `NSNull`, `Data`,
    /// `Date`, ``StorageValue``, or arrays and dictionaries of JSON values (stored as JSON text).
    /// - Parameters:
    ///   - rows: the records, one dictionary each.
    ///   - collection: the collection's name.
    /// - Returns: the primary keys of the stored rows.
    /// - Throws: ``StorageError`` with `.invalidIdentifier` for a key that is not a valid column name,
    ///   `.unsupportedType` for a value of another type, `.constraintViolation` from a unique
    ///   index. Nothing is stored then.
    @discardableResult
    public func insert(dictionaries rows: [[String: Any]], into collection: String) throws -> [StorageValue] {
        try withWriteSession { try $0.insert(dictionaries: rows, into: collection) }
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

    private static func jsonKind(_ value: Any) -> String {
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
