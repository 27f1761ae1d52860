public import Foundation

extension ObjectStore {
    /// Stores the records of a CSV file in `collection`, in one transaction.
    ///
    /// ```swift
    /// try store.insert(csv: URL(fileURLWithPath: "airports.csv"), into: "airports", primaryKey: "iata")
    /// ```
    /// The file is RFC 4180 with a header row naming the columns: fields separated by commas,
    /// records by CRLF or LF; quoted fields may hold commas, doubled quotes and line breaks; a
    /// UTF-8 byte order mark is skipped, and so are blank lines.
    ///
    /// Each column's type comes from every value in it: integer when every value is one, real
    /// when every value is a number, text otherwise (so `007`, `1e`, `nan` or an integer beyond
    /// Int64 make a text column, stored as written). An empty field, quoted or not, is null.
    ///
    /// The file is read twice, a chunk at a time, so its size does not matter: a first pass,
    /// outside any transaction, checks every record and finds the column types; the second stores
    /// the records inside one write transaction. Nothing is stored when anything fails.
    /// - Parameters:
    ///   - url: the CSV file.
    ///   - collection: the collection, created when missing; new columns are added to an existing
    ///     one and integer columns widened to real when fractions arrive, as with JSON.
    ///   - primaryKey: the column that identifies a record, so that importing the same file again
    ///     replaces its records instead of adding them again. Without it the key is `id` when every
    ///     record has one, otherwise an auto-assigned key in the column `_key`. An existing
    ///     collection keeps its key.
    ///   - progress: called every few thousand records of each pass: `.reading` with the
    ///     records read so far by the first pass, then `.importing` with those stored and the
    ///     total the first pass counted. On the calling thread.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` with `.invalidCSV` naming the line for malformed CSV (an unclosed
    ///   quote, a record with more or fewer fields than the header, text after a closing quote,
    ///   bytes that are not UTF-8, a header naming a column twice); `.invalidKey` for a record
    ///   without its primary key; `.invalidIdentifier` for a header name that is not a valid
    ///   column name; `.io` when the file cannot be read. Nothing is stored then.
    @discardableResult
    public func insert(
        csv url: URL,
        into collection: String,
        primaryKey: String? = nil,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws -> Int {
        try insert(csv: .file(url), plan: nil, into: collection, primaryKey: primaryKey, progress: progress)
    }

    /// Stores the records of CSV text in `collection`, in one transaction; see
    /// `insert(csv:into:primaryKey:progress:)` for a file, which is the way for large inputs.
    /// - Parameters:
    ///   - data: the CSV text, UTF-8.
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the column that identifies a record (default: `id` or an auto key).
    ///   - progress: called every few thousand records of each pass, as for a file.
    /// - Returns: the number of records stored.
    /// - Throws: as `insert(csv:into:primaryKey:progress:)` for a file.
    @discardableResult
    public func insert(
        csv data: Data,
        into collection: String,
        primaryKey: String? = nil,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws -> Int {
        try insert(csv: .data(data), plan: nil, into: collection, primaryKey: primaryKey, progress: progress)
    }

    /// Checks CSV input without a store: the first pass of `insert(csv:into:primaryKey:progress:)`, and,
    /// when `primaryKey` is given, that the header names it and no record leaves it empty.
    ///
    /// For the command-line tool, which checks its input before it opens (and maybe creates) a
    /// store, so that bad input writes nothing at all, and then gives the plan it returns to
    /// `insert(csv:plan:into:primaryKey:progress:)` (the input is read twice, not three times).
    /// - Parameters:
    ///   - url: the CSV file, or nil to check `data`.
    ///   - data: the CSV text, used when `url` is nil.
    ///   - collection: the collection the records are meant for (its name is checked).
    ///   - primaryKey: the key the import will ask for, if any.
    ///   - progress: called as the first pass of an import calls it.
    /// - Returns: the first pass's findings.
    /// - Throws: ``StorageError`` with `.invalidCSV`, `.invalidIdentifier`, `.invalidKey` or `.io`,
    ///   as `insert(csv:into:primaryKey:progress:)` would before storing anything.
    @discardableResult
    package static func checkCSV(
        file url: URL?,
        data: Data = Data(),
        into collection: String,
        primaryKey: String?,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws -> CSVImport {
        let plan = try CSVImport(url.map { .file($0) } ?? .data(data), collection: collection, progress: progress)
        guard let primaryKey else { return plan }
        guard let slot = plan.header.firstIndex(where: { Identifier.folded($0) == Identifier.folded(primaryKey) })
        else {
            throw StorageError(
                .invalidKey,
                "the primary key \(Identifier.quoted(primaryKey)) is not a column of the input for collection '\(collection)'",
                collection: collection,
                column: primaryKey
            )
        }
        if plan.firstEmptyLine[slot] != 0 {
            throw StorageError(
                .invalidKey,
                "line \(plan.firstEmptyLine[slot]): the record has no value for the primary key \(Identifier.quoted(primaryKey))",
                collection: collection,
                column: primaryKey
            )
        }
        return plan
    }

    /// The second pass of an import whose first pass `checkCSV` ran (for the command-line tool).
    package func insert(
        csv url: URL?,
        data: Data = Data(),
        plan: CSVImport,
        primaryKey: String?,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws -> Int {
        try insert(
            csv: url.map { .file($0) } ?? .data(data),
            plan: plan,
            into: plan.collection,
            primaryKey: primaryKey,
            progress: progress
        )
    }

    private func insert(
        csv input: CSVReader.Input,
        plan: CSVImport?,
        into collection: String,
        primaryKey: String?,
        progress: ((StoreCopyProgress) -> Void)?
    ) throws -> Int {
        // The first pass runs before the write transaction, so other writers wait only for the second.
        let plan = try plan ?? CSVImport(input, collection: collection, progress: progress)
        return try withWriteSession { session in
            // A fresh reader in the closure: a backend may run the closure again.
            try session.insert(csv: CSVReader(input), plan: plan, primaryKey: primaryKey, progress: progress)
        }
    }
}
