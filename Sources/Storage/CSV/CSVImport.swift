import Foundation

/// What the first pass over a CSV input learns: the header, each column's type over every
/// record, the number of records, and the primary key the second pass will use.
///
/// CSV import reads its input twice. A column's type depends on every value in it (a column is
/// numbers only when every value parses as one), and the last row can change it, so the types
/// must be known before the first row is stored; keeping the rows in memory until then would
/// hold a whole file. The first pass, outside any transaction, parses every record and keeps only
/// one kind per column; the second, inside one write transaction, parses again and stores the
/// records as it goes. Both passes hold one chunk of the input and one record at a time.
package struct CSVImport {
    /// A field's kind, ordered so that a column's type is the largest kind among its values.
    enum Kind: Int, Comparable {
        case empty, integer, real, text

        static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }

        var columnType: ColumnType {
            switch self {
            case .empty: return .untyped
            case .integer: return .integer
            case .real: return .real
            case .text: return .text
            }
        }
    }

    let collection: String
    var header: [String] = []
    var kinds: [Kind] = []
    var recordCount = 0
    /// Per column, the line of the first record where it is empty (0: never), to choose `id` as
    /// the key only when every record has one and to name the record that lacks a chosen key.
    var firstEmptyLine: [Int] = []

    /// How many records an import reads or stores between two progress reports.
    static let progressInterval = 4_096

    /// The first pass: reads every record of `input`, checking its shape and its UTF-8.
    /// - Parameters:
    ///   - input: the file or the text.
    ///   - collection: the collection the records are for.
    ///   - progress: called every `progressInterval` records and at the end.
    /// - Throws: ``StorageError`` with `.invalidCSV` naming the line, `.invalidIdentifier` for a
    ///   header name, `.io` when the file cannot be read.
    init(
        _ input: CSVReader.Input,
        collection: String,
        progress: ((StoreCopyProgress) -> Void)? = nil
    ) throws {
        try Identifier.validateCollection(collection)
        self.collection = collection
        let reader = try CSVReader(input)
        var record = CSVRecord()
        guard try reader.next(into: &record) else {
            throw StorageError(.invalidCSV, "the CSV input has no header row", collection: collection)
        }
        var folded: [String: String] = [:]
        for index in 0..<record.count {
            let name = try Self.text(record.field(index), line: record.line, collection: collection)
            try Identifier.validateColumn(name, in: collection)
            if let earlier = folded.updateValue(name, forKey: Identifier.folded(name)) {
                throw StorageError(
                    .invalidCSV,
                    "line \(record.line): the header names column \(Identifier.quoted(name)) twice (as \(Identifier.quoted(earlier)) too;"
                        + " names are compared ignoring ASCII case)",
                    collection: collection,
                    column: name
                )
            }
            header.append(name)
        }
        kinds = Array(repeating: .empty, count: header.count)
        firstEmptyLine = Array(repeating: 0, count: header.count)
        while try reader.next(into: &record) {
            try checkShape(record)
            for index in 0..<record.count where kinds[index] != .text {
                let field = record.field(index)
                let kind = Self.kind(of: field)
                if kind == .empty {
                    if firstEmptyLine[index] == 0 { firstEmptyLine[index] = record.line }
                } else if kind > kinds[index] {
                    kinds[index] = kind
                }
            }
            for index in 0..<record.count where kinds[index] == .text {
                // Text is checked here, in the pass that stores nothing, so that bad bytes are
                // refused before the write transaction starts.
                let field = record.field(index)
                if field.isEmpty {
                    if firstEmptyLine[index] == 0 { firstEmptyLine[index] = record.line }
                } else if field.contains(where: { $0 >= 0x80 }) {
                    _ = try Self.text(field, line: record.line, collection: collection)
                }
            }
            recordCount += 1
            if let progress, recordCount % Self.progressInterval == 0 {
                progress(StoreCopyProgress(phase: .reading, collection: collection, records: recordCount, total: nil))
            }
        }
        progress?(StoreCopyProgress(phase: .reading, collection: collection, records: recordCount, total: nil))
    }

    /// A ragged record is an error: a missing or extra field means the columns no longer line up.
    func checkShape(_ record: CSVRecord) throws {
        guard record.count == header.count else {
            throw StorageError(
                .invalidCSV,
                "line \(record.line): the record has \(record.count) field\(record.count == 1 ? "" : "s"),"
                    + " the header has \(header.count)",
                collection: collection
            )
        }
    }

    /// The primary key: `primaryKey` when given, the stored collection's key when it exists,
    /// `id` when the header has it and no record leaves it empty, otherwise an auto-assigned key.
    ///
    /// The same rule as `insert(dictionaries:into:)`; kept as one small function so the natural
    /// keys of the untyped JSON path can share it.
    static func chooseKey(
        requested: String?,
        stored: CollectionSchema?,
        candidates: [String],
        isAlwaysPresent: (String) -> Bool,
        collection: String
    ) throws -> String {
        if let stored {
            if let requested, Identifier.folded(requested) != Identifier.folded(stored.primaryKey) {
                throw StorageError(
                    .schemaMismatch,
                    "the primary key \(Identifier.quoted(requested)) differs from \(Identifier.quoted(stored.primaryKey)), the key of the stored"
                        + " collection '\(collection)'",
                    collection: collection,
                    column: requested
                )
            }
            return stored.primaryKey
        }
        if let requested {
            guard candidates.contains(requested) else {
                throw StorageError(
                    .invalidKey,
                    "the primary key \(Identifier.quoted(requested)) is not a column of the input for collection '\(collection)'",
                    collection: collection,
                    column: requested
                )
            }
            return requested
        }
        if candidates.contains("id"), isAlwaysPresent("id") { return "id" }
        return CollectionSchema.autoKeyColumn
    }

    /// The kind of one field. Numbers follow JSON's grammar (`-`, no `+`, no leading zeros, no
    /// `nan` or `inf`), so text that merely looks numeric to a lenient parser (`007`, `+1`, `1.`,
    /// `0x10`) stays text and reads back as it was written. An integer beyond Int64 and a real
    /// with more than 17 significant digits (a Double's precision) are text too: stored as
    /// numbers they would be rounded.
    static func kind(of field: ArraySlice<UInt8>) -> Kind {
        if field.isEmpty { return .empty }
        var index = field.startIndex
        let end = field.endIndex
        if field[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        while index < end, field[index] &- 0x30 < 10 { index += 1 }
        let integerDigits = index - integerStart
        if integerDigits == 0 || (integerDigits > 1 && field[integerStart] == UInt8(ascii: "0")) { return .text }
        if index == end { return parseInteger(field) == nil ? .text : .integer }
        var significant = integerDigits
        if field[integerStart] == UInt8(ascii: "0") { significant = 0 }
        if field[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < end, field[index] &- 0x30 < 10 {
                if significant > 0 || field[index] != UInt8(ascii: "0") { significant += 1 }
                index += 1
            }
            if index == fractionStart { return .text }
        }
        if index < end, field[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < end, field[index] == UInt8(ascii: "-") || field[index] == UInt8(ascii: "+") { index += 1 }
            let exponentStart = index
            while index < end, field[index] &- 0x30 < 10 { index += 1 }
            if index == exponentStart { return .text }
        }
        guard index == end, significant <= 17, let value = parseReal(field), value.isFinite else { return .text }
        return .real
    }

    /// The field as an Int64, or nil when it is not an integer that fits.
    static func parseInteger(_ field: ArraySlice<UInt8>) -> Int64? {
        var index = field.startIndex
        let negative = field[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < field.endIndex else { return nil }
        // Accumulated as a negative number, which reaches Int64.min.
        var value: Int64 = 0
        while index < field.endIndex {
            let digit = field[index] &- 0x30
            guard digit < 10 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times10.subtractingReportingOverflow(Int64(digit))
            if overflow1 || overflow2 { return nil }
            value = next
            index += 1
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    /// The field as a Double (Swift's own correctly rounded parser).
    static func parseReal(_ field: ArraySlice<UInt8>) -> Double? {
        Double(String(decoding: field, as: UTF8.self))
    }

    /// The field as text; bytes that are not UTF-8 are an error, never replaced.
    static func text(_ field: ArraySlice<UInt8>, line: Int, collection: String) throws -> String {
        guard let text = String(validating: field, as: UTF8.self) else {
            throw StorageError(.invalidCSV, "line \(line): a field is not valid UTF-8", collection: collection)
        }
        return text
    }

    /// Field `index` of `record` as the value its column stores.
    /// - Throws: `.invalidCSV` when the value no longer fits the column's kind (the input changed
    ///   between the two passes).
    func value(_ record: CSVRecord, at index: Int) throws -> StorageValue {
        let field = record.field(index)
        if field.isEmpty { return .null }
        switch kinds[index] {
        case .integer:
            if let value = Self.parseInteger(field) { return .integer(value) }
        case .real:
            // An integer stays one here: `Session.converted` makes it a real when a Double holds it
            // exactly, and refuses it otherwise (parsed as a real, it would be rounded unseen).
            let kind = Self.kind(of: field)
            if kind == .integer, let value = Self.parseInteger(field) { return .integer(value) }
            if kind != .text, let value = Self.parseReal(field) { return .real(value) }
        case .text:
            return .text(try Self.text(field, line: record.line, collection: collection))
        case .empty:
            break
        }
        throw StorageError(
            .invalidCSV,
            "line \(record.line): column \(Identifier.quoted(header[index])) changed while the input was read twice",
            collection: collection,
            column: header[index]
        )
    }
}
