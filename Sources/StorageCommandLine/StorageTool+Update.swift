import Foundation
import Storage

extension StorageTool {
    static let updateHelp = """
        usage: storage update STORE COLLECTION --set ASSIGNMENTS [--where EXPR] [--read-only]
                              [--json]

        Sets columns of the records of COLLECTION that EXPR matches (every record without
        --where), in one transaction: all of them or, on an error, none. ASSIGNMENTS are
        column = value pairs separated by commas, with the values of --where:
          city = 'moved', price = 2.25, note = nil, paid = true
        A value must fit the stored column's type, the primary key cannot be set, and every
        column must exist. Prints how many records changed on standard error (--json: a JSON
        object on standard output). --read-only opens the store read-only, where the update is
        refused and nothing is written.
        """

    static func update(_ arguments: [String]) throws {
        let parsed = try parse(arguments, "update", options: ["set", "where"], flags: ["read-only", "json"])
        let positionals = try parsed.positionals(["STORE", "COLLECTION"], required: 2)
        guard let setText = parsed.options["set"] else { throw UsageError("update needs --set ASSIGNMENTS") }
        // Both expressions are parsed before the store is opened: a typo writes nothing.
        let assignments = try SetExpression.parse(setText)
        let predicate = try parsed.options["where"].map(WhereExpression.parse)
        let location = try StoreLocation.parse(positionals[0], mustExist: true)
        let store = try location.open(readOnly: parsed.flags.contains("read-only"))
        defer { try? store.close() }
        let collection = positionals[1]
        guard let schema = try store.schema(of: collection) else {
            throw StorageError(.unknownCollection, "no collection '\(collection)'", collection: collection)
        }
        let count = try store.update(in: schema.name, set: assignments, where: predicate)
        ProgressLine().finish(
            "updated \(ProgressLine.counted(count, "record")) of \(schema.name) in \(named(location))"
        )
        if parsed.flags.contains("json") { try writeJSON(["collection": schema.name, "records": count]) }
    }
}
