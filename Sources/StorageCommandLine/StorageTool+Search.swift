import Foundation
import Storage

/// `storage search`: the records of a collection matching a full-text query, best first, with
/// `ObjectStore.search(in:matching:where:limit:)`.
extension StorageTool {
    static let searchHelp = """
        usage: storage search STORE COLLECTION QUERY [--where EXPR] [--limit N]
                              [--format json|ndjson|csv] [--output FILE]

        Writes the records of COLLECTION whose full-text index matches QUERY, best first
        (BM25, ties by primary key), at most N of them (20 unless --limit is given). QUERY:
        words (all must match), "a phrase", prefix*, a OR b, -excluded:
          storage search app.sqlite films 'star wars -trek'
        EXPR filters the records first, in the query language of --where in export. The
        collection needs a full-text index (IndexDefinition.fullText in its type). The store
        is opened read-only.
        """

    static func search(_ arguments: [String]) throws {
        let parsed = try parse(arguments, "search", options: ["where", "limit", "format", "output"], flags: [])
        let positionals = try parsed.positionals(["STORE", "COLLECTION", "QUERY"], required: 3)
        let format = try recordFormat(parsed.options["format"]) ?? .json
        let predicate = try parsed.options["where"].map(WhereExpression.parse)
        let limit = try parsed.integer("limit") ?? 20
        let (location, store) = try openExisting(positionals[0])
        defer { try? store.close() }
        let collection = positionals[1]
        guard let schema = try store.schema(of: collection) else {
            throw StorageError(.unknownCollection, "no collection '\(collection)'", collection: collection)
        }
        let rows = try store.search(in: schema.name, matching: positionals[2], where: predicate, limit: limit)
        try writeRecords(rows, columns: schema.columns.map(\.name), format: format, to: parsed.options["output"])
        writeError("\(ProgressLine.counted(rows.count, "record")) of \(schema.name) in \(named(location))\n")
    }
}
