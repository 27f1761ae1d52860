public import Foundation

extension StoreTransaction {
    /// Stores the records of a CSV file in `collection`, inside this transaction; see
    /// `ObjectStore.insert(csv:into:primaryKey:progress:)`. Both passes over the file run inside the
    /// transaction here.
    /// - Parameters:
    ///   - url: the CSV file.
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the column that identifies a record (default: `id` or an auto key).
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` (`.invalidCSV` naming the line for malformed CSV).
    @discardableResult
    public func insert(csv url: URL, into collection: String, primaryKey: String? = nil) throws -> Int {
        try open().insert(csv: .file(url), into: collection, primaryKey: primaryKey)
    }

    /// Stores the records of CSV text in `collection`, inside this transaction; see
    /// `ObjectStore.insert(csv:into:primaryKey:progress:)`.
    /// - Parameters:
    ///   - data: the CSV text, UTF-8.
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the column that identifies a record (default: `id` or an auto key).
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` (`.invalidCSV` naming the line for malformed CSV).
    @discardableResult
    public func insert(csv data: Data, into collection: String, primaryKey: String? = nil) throws -> Int {
        try open().insert(csv: .data(data), into: collection, primaryKey: primaryKey)
    }
}
