import Foundation
import Storage

/// `storage aggregate`: counts, sums, averages, minima and maxima per group, with
/// `ObjectStore.aggregate(in:_:where:groupBy:)`.
extension StorageTool {
    static let aggregateHelp = """
        usage: storage aggregate STORE COLLECTION AGGREGATE... [--where EXPR] [--group-by A,B]
                                 [--format json|ndjson|csv] [--output FILE]

        Writes one record per group of the --group-by columns' values (one record in all
        without it), groups in ascending order with nulls first, each holding its group values
        and each AGGREGATE under its name. A --group-by name that is no column but starts with
        one and a dot (address.city) groups by that field of the column's JSON. AGGREGATEs:
          count  count(COLUMN)  count(distinct COLUMN)  sum(COLUMN)  avg(COLUMN)
          min(COLUMN)  max(COLUMN)
        followed by ` as NAME` for another name: "sum(Worldwide Gross) as gross". EXPR filters
        the records first, in the query language of --where in export:
          storage aggregate app.sqlite movies count "avg(IMDB Rating)" --group-by "Major Genre"
        An integer sum beyond 64 bits is an error. The store is opened read-only.
        """

    static func aggregate(_ arguments: [String]) throws {
        let parsed = try parse(arguments, "aggregate", options: ["where", "group-by", "format", "output"], flags: [])
        guard parsed.positionals.count >= 3 else {
            throw UsageError("missing " + ["STORE", "COLLECTION", "AGGREGATE"][parsed.positionals.count])
        }
        let aggregates = try parsed.positionals.dropFirst(2).map(parseAggregate)
        let groups =
            parsed.options["group-by"].map { list in
                list.split(separator: ",", omittingEmptySubsequences: false).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
            } ?? []
        if let empty = groups.firstIndex(of: "") {
            throw UsageError("--group-by names an empty column (position \(empty + 1))")
        }
        let format = try recordFormat(parsed.options["format"]) ?? .json
        let predicate = try parsed.options["where"].map(WhereExpression.parse)
        let (location, store) = try openExisting(parsed.positionals[0])
        defer { try? store.close() }
        let collection = parsed.positionals[1]
        guard let schema = try store.schema(of: collection) else {
            throw StorageError(.unknownCollection, "no collection '\(collection)'", collection: collection)
        }
        let rows = try store.aggregate(
            in: schema.name,
            aggregates,
            where: predicate,
            groupBy: groups.map { groupColumn($0, in: schema) }
        )
        try writeRecords(rows, columns: groups + aggregates.map(\.name), format: format, to: parsed.options["output"])
        writeError("\(ProgressLine.counted(rows.count, "group")) of \(schema.name) in \(named(location))\n")
    }

    /// Writes `rows` as `format` to the file `path` (standard output when nil), all or nothing:
    /// the output of `aggregate` and `search`.
    /// - Parameters:
    ///   - rows: the records.
    ///   - columns: the columns written, in order.
    ///   - format: JSON, NDJSON or CSV.
    ///   - path: the `--output` file, or nil.
    /// - Throws: what writing the file throws; a partial file is removed.
    static func writeRecords(
        _ rows: [[String: StorageValue]],
        columns: [String],
        format: RecordFormat,
        to path: String?
    ) throws {
        let output = try OutputFile(path)
        var writer = RecordWriter(format: format, columns: columns)
        do {
            var text = writer.header()
            for row in rows { text += writer.record(row) }
            text += writer.footer()
            try output.write(text)
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
    }

    /// The column `name` names in `schema`: the column of that name (ignoring ASCII case), or else,
    /// for `column.key…` whose first part names a column, the field at `key…` inside it; else
    /// the column `name` (which the store refuses with `.unknownColumn`).
    static func groupColumn(_ name: String, in schema: CollectionSchema) -> Column {
        if schema.column(named: name) != nil { return Column(name) }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1, !parts.contains(""), schema.column(named: parts[0]) != nil else { return Column(name) }
        return Column(name: parts[0], path: Array(parts.dropFirst()))
    }

    /// `count`, `sum(amount)`, `count(distinct city)`, … with an optional ` as NAME`.
    static func parseAggregate(_ text: String) throws -> Aggregate {
        var spec = text.trimmingCharacters(in: .whitespaces)
        var name: String?
        if let close = spec.lastIndex(of: ")"), let alias = spec.range(of: " as ", options: .backwards),
            alias.lowerBound > close
        {
            name = String(spec[alias.upperBound...]).trimmingCharacters(in: .whitespaces)
            spec = String(spec[..<alias.lowerBound]).trimmingCharacters(in: .whitespaces)
        } else if !spec.contains("("), let alias = spec.range(of: " as ") {
            name = String(spec[alias.upperBound...]).trimmingCharacters(in: .whitespaces)
            spec = String(spec[..<alias.lowerBound]).trimmingCharacters(in: .whitespaces)
        }
        if name?.isEmpty == true { throw UsageError("'\(text)': nothing after 'as'") }
        let aggregate: Aggregate
        if spec.lowercased() == "count" || spec.lowercased() == "count(*)" {
            aggregate = .count
        } else {
            guard let open = spec.firstIndex(of: "("), spec.hasSuffix(")") else {
                throw UsageError(
                    "'\(text)' is not an aggregate: count, count(COLUMN), count(distinct COLUMN), sum(COLUMN),"
                        + " avg(COLUMN), min(COLUMN) or max(COLUMN)"
                )
            }
            let function = spec[..<open].trimmingCharacters(in: .whitespaces).lowercased()
            var column = String(spec[spec.index(after: open)..<spec.index(before: spec.endIndex)])
            var distinct = false
            if function == "count", column.lowercased().hasPrefix("distinct ") {
                distinct = true
                column = String(column.dropFirst("distinct ".count))
            }
            column = column.trimmingCharacters(in: .whitespaces)
            guard !column.isEmpty else { throw UsageError("'\(text)' names no column") }
            switch function {
            case "count": aggregate = distinct ? .countDistinct(column) : .count(column)
            case "sum": aggregate = .sum(column)
            case "avg", "average": aggregate = .average(column)
            case "min", "minimum": aggregate = .minimum(column)
            case "max", "maximum": aggregate = .maximum(column)
            default:
                throw UsageError("'\(text)': unknown aggregate '\(function)' (count, sum, avg, min or max)")
            }
        }
        return name.map { aggregate.named($0) } ?? aggregate
    }
}
