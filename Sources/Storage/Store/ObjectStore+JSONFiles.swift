public import Foundation

/// JSON and NDJSON imports streamed from a file (or NDJSON from memory): read twice, a chunk
/// at a time, as CSV files are, so that memory does not grow with the input.
extension ObjectStore {
    /// Stores the objects of a JSON array file in `collection`, in one transaction, reading the
    /// file a chunk at a time: its size does not matter.
    ///
    /// ```swift
    /// try store.insert(jsonArray: URL(fileURLWithPath: "movies.json"), into: "movies")
    /// ```
    /// The same records, columns, types and keys as `insert(jsonArray:into:primaryKey:)` with
    /// the file's contents, and the same errors. The file is read twice: a first pass, outside
    /// any transaction, parses every element and finds the column types over all of them (so
    /// any order of the same objects gives the same columns); the second stores the records
    /// inside one write transaction. Nothing is stored when anything fails.
    /// - Parameters:
    ///   - url: a file holding one JSON array of objects, UTF-8 (UTF-16 and UTF-32 files are
    ///     read whole).
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the member every object carries that identifies it, or nil for `id` when
    ///     every object has one, else an auto-assigned key.
    ///   - progress: called every few thousand records of each pass: `.reading`, then
    ///     `.importing` with the total the first pass counted. On the calling thread.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` as `insert(jsonArray:into:primaryKey:)` does, each naming the
    ///   element, its line and byte offset; `.io` when the file cannot be read.
    @discardableResult
    public func insert(
        jsonArray url: URL,
        into collection: String,
        primaryKey: String? = nil,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws -> Int {
        try insert(json: .file(url), layout: .array, into: collection, primaryKey: primaryKey, progress: progress)
    }

    /// Stores the objects of an NDJSON file (one JSON object per line; blank lines skipped) in
    /// `collection`, in one transaction, reading it a chunk at a time; see
    /// `insert(jsonArray:into:primaryKey:progress:)` for a file, whose rules it follows.
    ///
    /// ```swift
    /// try store.insert(jsonLines: URL(fileURLWithPath: "events.ndjson"), into: "events")
    /// ```
    /// - Parameters:
    ///   - url: the NDJSON file, UTF-8.
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the member every object carries that identifies it, or nil.
    ///   - progress: called every few thousand records of each pass.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` as for a JSON array file, naming the line and byte offset.
    @discardableResult
    public func insert(
        jsonLines url: URL,
        into collection: String,
        primaryKey: String? = nil,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws -> Int {
        try insert(json: .file(url), layout: .lines, into: collection, primaryKey: primaryKey, progress: progress)
    }

    /// Stores the objects of NDJSON text in `collection`, in one transaction; see
    /// `insert(jsonLines:into:primaryKey:progress:)` for a file.
    /// - Parameters:
    ///   - data: the NDJSON text, UTF-8.
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the member every object carries that identifies it, or nil.
    ///   - progress: called every few thousand records of each pass.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` as for a file.
    @discardableResult
    public func insert(
        jsonLines data: Data,
        into collection: String,
        primaryKey: String? = nil,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws -> Int {
        try insert(json: .data(data), layout: .lines, into: collection, primaryKey: primaryKey, progress: progress)
    }

    /// Where a streamed JSON import reads.
    package enum JSONInput {
        case file(URL)
        case data(Data)

        func reader(_ layout: JSONElementReader.Layout, collection: String) throws -> JSONElementReader {
            switch self {
            case .file(let url): try JSONElementReader(contentsOf: url, layout: layout, collection: collection)
            case .data(let data): JSONElementReader(data: data, layout: layout, collection: collection)
            }
        }
    }

    /// The first pass of a streamed JSON import: every object parsed and checked, the columns
    /// and their types found.
    package struct JSONImportPlan {
        let input: JSONInput
        let layout: JSONElementReader.Layout
        let batch: DictionaryBatch
        /// A JSON array in UTF-16 or UTF-32, imported from memory instead.
        let wide: Data?

        /// The records the input holds.
        package var count: Int { batch.count }

        /// The first record (from 0) without a value for `column`, or nil.
        package func firstRecord(lacking column: String) -> Int? { batch.firstRow(lacking: column) }
    }

    /// The first pass of `insert(jsonArray:…)` or `insert(jsonLines:…)` from `input`: reads and
    /// checks every object, outside any store (the command-line tool checks its input before it
    /// opens a store, so that bad input writes nothing), for `insert(json:primaryKey:progress:)`.
    /// - Parameters:
    ///   - input: the file or the text.
    ///   - lines: NDJSON rather than one array.
    ///   - collection: the collection the records are for (its name is checked).
    ///   - column: a column whose first record without a value the plan should know.
    ///   - progress: called every few thousand records read.
    /// - Returns: the first pass's findings.
    /// - Throws: ``StorageError`` as the import would before storing anything.
    package static func checkJSON(
        _ input: JSONInput,
        lines: Bool,
        into collection: String,
        watching column: String? = nil,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws -> JSONImportPlan {
        try Identifier.validateCollection(collection)
        let layout: JSONElementReader.Layout = lines ? .lines : .array
        let reader = try input.reader(layout, collection: collection)
        var batch = DictionaryBatch(collection: collection, watching: ["id"] + (column.map { [$0] } ?? []))
        if layout == .array, JSONElementReader.isWide(try reader.prefix()) {
            var data: Data
            switch input {
            case .data(let text): data = text
            case .file(let url):
                do {
                    data = try Data(contentsOf: url)
                } catch {
                    throw StorageError(
                        .io,
                        "cannot read the JSON file '\(url.path)'",
                        collection: collection,
                        path: url.path
                    )
                }
            }
            for (index, row) in try jsonRows(data, for: collection).enumerated() { _ = try batch.add(row, at: index) }
            return JSONImportPlan(input: input, layout: layout, batch: batch, wide: data)
        }
        while let element = try reader.next() {
            let row = try jsonObject(element, layout, collection)
            try at(element, collection) { _ = try batch.add(row, at: element.index) }
            if let progress, batch.count % CSVImport.progressInterval == 0 {
                progress(StoreCopyProgress(phase: .reading, collection: collection, records: batch.count, total: nil))
            }
        }
        progress?(StoreCopyProgress(phase: .reading, collection: collection, records: batch.count, total: nil))
        return JSONImportPlan(input: input, layout: layout, batch: batch, wide: nil)
    }

    private func insert(
        json input: JSONInput,
        layout: JSONElementReader.Layout,
        into collection: String,
        primaryKey: String?,
        progress: ((StoreCopyProgress) -> Void)?
    ) throws -> Int {
        // The first pass runs before the write transaction, so other writers wait only for the
        // second.
        let plan = try Self.checkJSON(input, lines: layout == .lines, into: collection, progress: progress)
        return try insert(json: plan, primaryKey: primaryKey, progress: progress)
    }

    /// The second pass of a streamed JSON import whose first pass `checkJSON` made: reads the
    /// input again and stores its records in one write transaction.
    package func insert(
        json plan: JSONImportPlan,
        primaryKey: String?,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws -> Int {
        let batch = plan.batch
        let collection = batch.collection
        if let wide = plan.wide { return try insert(jsonArray: wide, into: collection, primaryKey: primaryKey) }
        // Nothing to store creates nothing, as with a JSON array in memory.
        if batch.count == 0 { return 0 }
        return try withWriteSession { session in
            // A fresh reader in the closure: a backend may run the closure again.
            let reader = try plan.input.reader(plan.layout, collection: collection)
            var current: JSONElementReader.Element?
            var stored = 0
            do {
                return try session.store(batch, primaryKey: primaryKey) {
                    if let progress, stored > 0, stored % CSVImport.progressInterval == 0 {
                        progress(
                            StoreCopyProgress(
                                phase: .importing,
                                collection: collection,
                                records: stored,
                                total: batch.count
                            )
                        )
                    }
                    current = try reader.next()
                    guard let element = current else {
                        guard stored == batch.count else {
                            throw Self.changed(collection, rows: stored, first: batch.count)
                        }
                        return nil
                    }
                    stored += 1
                    guard stored <= batch.count else {
                        throw Self.changed(collection, rows: stored, first: batch.count)
                    }
                    // The first pass found no object holding a key twice: not looked for again.
                    let row = try Self.jsonObject(element, plan.layout, collection, checkingKeys: false)
                    return try Self.at(element, collection) {
                        (element.index, try batch.values(of: row, at: element.index))
                    }
                }
                .count
            } catch let error as StorageError where error.code != .io {
                // Checks of the record `next` gave last (its key, its types): name where it is.
                guard let element = current, !error.message.hasPrefix(Self.position(element)) else { throw error }
                throw error.at(Self.position(element), in: collection)
            }
        }
    }

    /// The object `element` holds.
    /// - Throws: ``StorageError`` with `.invalidJSON` for text that is not JSON, a value that is not
    ///   an object, or (when `checkingKeys`) an object holding a key twice.
    private static func jsonObject(
        _ element: JSONElementReader.Element,
        _ layout: JSONElementReader.Layout,
        _ collection: String,
        checkingKeys: Bool = true
    ) throws -> [String: Any] {
        let place =
            layout == .array
            ? "element \(element.index) (line \(element.line), byte \(element.offset))"
            : "line \(element.line) (byte \(element.offset))"
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: element.text, options: [.fragmentsAllowed])
        } catch {
            throw StorageError(
                .invalidJSON,
                "\(place): not valid JSON",
                collection: collection,
                underlying: SendableErrorDescription(error)
            )
        }
        guard let row = object as? [String: Any] else {
            throw StorageError(
                .invalidJSON,
                "\(place): expected a JSON object, found \(jsonKind(object))",
                collection: collection
            )
        }
        if checkingKeys, let repeated = JSONRepeatedKeys.first(in: element.text) {
            throw repeatedKeyError(repeated, in: collection, place: place)
        }
        return row
    }

    /// Where `element` starts, as errors name it: `line 7, byte 1234`.
    private static func position(_ element: JSONElementReader.Element) -> String {
        "line \(element.line), byte \(element.offset)"
    }

    /// Runs `body`, naming where `element` starts in the errors it throws.
    private static func at<Result>(
        _ element: JSONElementReader.Element,
        _ collection: String,
        _ body: () throws -> Result
    ) throws -> Result {
        do {
            return try body()
        } catch let error as StorageError {
            throw error.at(position(element), in: collection)
        }
    }

    private static func changed(_ collection: String, rows: Int, first: Int) -> StorageError {
        StorageError(
            .invalidJSON,
            "the input changed while it was read twice: \(rows) records the second time, \(first) the first",
            collection: collection
        )
    }
}

extension ObjectStore {
    /// Stores the objects of a JSON array file in `collection`, in one transaction; see
    /// `insert(jsonArray:into:primaryKey:progress:)`. Both passes over the file run on the
    /// store's threads.
    /// - Parameters:
    ///   - url: a file holding one JSON array of objects.
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the member every object carries that identifies it, or nil.
    ///   - progress: called every few thousand records of each pass, on one of the store's threads.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` (nothing is stored then), or `CancellationError` when the task
    ///   was cancelled first.
    @discardableResult
    public func insert(
        jsonArray url: URL,
        into collection: String,
        primaryKey: String? = nil,
        progress: (@Sendable (StoreCopyProgress) -> Void)? = nil
    ) async throws -> Int {
        try await perform {
            try self.insert(jsonArray: url, into: collection, primaryKey: primaryKey, progress: progress)
        }
    }

    /// Stores the objects of an NDJSON file in `collection`, in one transaction; see
    /// `insert(jsonLines:into:primaryKey:progress:)`.
    /// - Parameters:
    ///   - url: the NDJSON file.
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the member every object carries that identifies it, or nil.
    ///   - progress: called every few thousand records of each pass, on one of the store's threads.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` (nothing is stored then), or `CancellationError` when the task
    ///   was cancelled first.
    @discardableResult
    public func insert(
        jsonLines url: URL,
        into collection: String,
        primaryKey: String? = nil,
        progress: (@Sendable (StoreCopyProgress) -> Void)? = nil
    ) async throws -> Int {
        try await perform {
            try self.insert(jsonLines: url, into: collection, primaryKey: primaryKey, progress: progress)
        }
    }

    /// Stores the objects of NDJSON text in `collection`, in one transaction; see
    /// `insert(jsonLines:into:primaryKey:progress:)`.
    /// - Parameters:
    ///   - data: the NDJSON text.
    ///   - collection: the collection, created when missing.
    ///   - primaryKey: the member every object carries that identifies it, or nil.
    ///   - progress: called every few thousand records of each pass, on one of the store's threads.
    /// - Returns: the number of records stored.
    /// - Throws: ``StorageError`` (nothing is stored then), or `CancellationError` when the task
    ///   was cancelled first.
    @discardableResult
    public func insert(
        jsonLines data: Data,
        into collection: String,
        primaryKey: String? = nil,
        progress: (@Sendable (StoreCopyProgress) -> Void)? = nil
    ) async throws -> Int {
        try await perform {
            try self.insert(jsonLines: data, into: collection, primaryKey: primaryKey, progress: progress)
        }
    }
}
