import Foundation
import Storage

/// The `storage` command: look inside any store, export and import records, copy a store
/// between engines and verify it.
///
/// Exit status: 0 on success, 1 on a failure (the store, the data, a verification), 2 on a usage
/// error. Data goes to standard output; errors, progress and summaries to standard error.
package enum StorageTool {
    static let overview = """
        usage: storage COMMAND [ARGUMENTS] [--json] [--help]

        Look inside any store and move data between engines.

        commands:
          info STORE                     engine, path, size on disk, collections with record counts
          schema STORE [COLLECTION]      columns, types, key, indexes, full-text index, references
          export STORE COLLECTION        records as JSON, NDJSON or CSV
          import STORE COLLECTION FILE   records from a JSON array, NDJSON or CSV file
          update STORE COLLECTION        set columns of the records a --where matches
          copy FROM TO                   copy a store (or some collections) to another, verified
          verify A B                     check that two stores hold the same data
          aggregate STORE COLLECTION AGG…  counts, sums, averages, minima, maxima per group
          search STORE COLLECTION QUERY  records matching a full-text query, best first

        STORE is sqlite:PATH, lmdb:PATH, archive:FOLDER, postgresql://… (add ?schema=NAME for a
        schema other than public), libpq key=value pairs ("host=db dbname=app", schema public),
        or a bare path whose engine is told by the file's header or the folder's marker. A
        connection string is never printed back. Run `storage COMMAND --help` for a command's
        options.

        exit status: 0 success, 1 failure, 2 usage error
        """

    static let help: [String: String] = [
        "aggregate": aggregateHelp,
        "search": searchHelp,
        "info": """
        usage: storage info STORE [--json]

        Prints the store's engine, path (and PostgreSQL schema), size on disk, and its
        collections with their record counts. --json prints one JSON object instead. The store
        is opened read-only: it must exist, and nothing is created or changed.
        """,
        "schema": """
        usage: storage schema STORE [COLLECTION] [--json]

        Prints each collection's columns with their types, its primary key, its indexes and the
        references its records hold to other collections' keys, with their delete rules (one
        collection's, when COLLECTION is given). --json prints a JSON array. The store is opened
        read-only, and named on standard error.
        """,
        "export": """
        usage: storage export STORE COLLECTION [--format json|ndjson|csv] [--where EXPR]
                              [--limit N] [--output FILE]

        Writes the collection's records, in primary-key order, to standard output or FILE
        (written whole or not at all). EXPR filters them, in the query language of Column:
          age >= 30 && name like 'A%' && email != nil
          mood in ('calm', 'busy') || !(score < 1.5)
        Blobs are written as base64 text; NaN and infinities as "NaN", "Infinity", "-Infinity".
        The store is opened read-only.
        """,
        "import": """
        usage: storage import STORE COLLECTION FILE [--format json|ndjson|csv]
                              [--primary-key KEY] [--json]

        Stores the records of FILE (a JSON array of objects, one JSON object per line, or CSV
        with a header line; told by the extension or the first character) in COLLECTION, in
        one transaction: all of them or, on an error, none. Column types are inferred; the
        key is `id` when every record has one, otherwise an auto-assigned key. --primary-key
        requires every record to have KEY (and the collection, if it exists, to be keyed by it).
        """,
        "update": updateHelp,
        "copy": """
        usage: storage copy FROM TO [--collections A,B] [--merge | --replace] [--no-verify]
                            [--batch-size N] [--json]

        Copies every collection of FROM (or those named) to TO, with schemas, indexes, values
        exactly as stored, auto keys and settings, in batches, then verifies both sides.
        A collection of TO that holds records is refused unless --merge (upsert: run an
        interrupted copy again with --merge to complete it) or --replace is given.
        """,
        "verify": """
        usage: storage verify A B [--collections A,B] [--json]

        Checks that B holds the collections of A (or those named) with the same records
        (counts and a digest of each collection's canonical records); on a difference, names
        the collection and a key and exits with status 1. Other collections of B (a copy's
        destination may hold more) are counted in the summary, not compared. Both stores are
        opened read-only.
        """,
    ]

    /// Runs the command in `arguments` (without the program's name) and returns the exit status.
    package static func run(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            writeError(overview + "\n")
            return 2
        }
        if command == "--help" || command == "-h" || command == "help" {
            write(overview + "\n")
            return 0
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "info": try info(rest)
            case "schema": try schema(rest)
            case "export": try export(rest)
            case "import": try importRecords(rest)
            case "update": try update(rest)
            case "copy": try copy(rest)
            case "verify": try verify(rest)
            case "aggregate": try aggregate(rest)
            case "search": try search(rest)
            default: throw UsageError("unknown command '\(command)'")
            }
            return 0
        } catch let error as HelpRequested {
            write(help[error.command, default: overview] + "\n")
            return 0
        } catch let error as Reported {
            return error.status
        } catch {
            let helpCommand = help[command] == nil ? "storage --help" : "storage \(command) --help"
            let failure = CommandFailure(error, command: command, helpCommand: helpCommand)
            writeError(failure.report(json: rest.contains("--json")))
            return failure.status
        }
    }

    // MARK: Commands

    static func info(_ arguments: [String]) throws {
        let parsed = try parse(arguments, "info", options: [], flags: ["json"])
        let (location, store) = try openExisting(try parsed.positionals(["STORE"], required: 1)[0])
        defer { try? store.close() }
        var collections: [(String, Int)] = []
        for name in try store.collectionNames() {
            collections.append((name, try store.count(in: name)))
        }
        let size = location.sizeOnDisk()
        if parsed.flags.contains("json") {
            var object: [String: Any] = [
                "engine": location.engine,
                "path": location.path,
                "collections": collections.map { ["name": $0.0, "records": $0.1] },
            ]
            object["size"] = size.map { $0 as Any } ?? NSNull()
            if let schema = location.postgreSQLSchema { object["schema"] = schema }
            try writeJSON(object)
            return
        }
        var text = "engine: \(location.engine)\npath: \(location.path)\n"
        if let schema = location.postgreSQLSchema { text += "schema: \(schema)\n" }
        text += "size on disk: " + (size.map { "\(ProgressLine.grouped($0)) bytes" } ?? "n/a (a server)") + "\n"
        text += "collections: \(collections.count)\n"
        let width = collections.map(\.0.count).max() ?? 0
        for (name, count) in collections {
            text +=
                "  " + name.padding(toLength: width, withPad: " ", startingAt: 0)
                + "  \(ProgressLine.counted(count, "record"))\n"
        }
        write(text)
    }

    static func schema(_ arguments: [String]) throws {
        let parsed = try parse(arguments, "schema", options: [], flags: ["json"])
        let positionals = try parsed.positionals(["STORE", "COLLECTION"], required: 1)
        let (location, store) = try openExisting(positionals[0])
        defer { try? store.close() }
        var schemas: [CollectionSchema] = []
        if positionals.count > 1 {
            guard let schema = try store.schema(of: positionals[1]) else {
                throw StorageError(.unknownCollection, "no collection '\(positionals[1])'", collection: positionals[1])
            }
            schemas = [schema]
        } else {
            schemas = try store.collectionNames().compactMap { try store.schema(of: $0) }
        }
        var references: [String: [Reference]] = [:]
        var searched: [String: [String]] = [:]
        for schema in schemas {
            references[schema.name] = try store.references(of: schema.name)
            searched[schema.name] = try store.fullTextIndex(of: schema.name)?.columns
        }
        if parsed.flags.contains("json") {
            try writeJSON(
                schemas.map { schema in
                    [
                        "collection": schema.name,
                        "primaryKey": schema.primaryKey,
                        "autoKey": schema.hasAutoKey,
                        "columns": schema.columns.map { ["name": $0.name, "type": $0.type.rawValue] },
                        "indexes": schema.indexes.map { ["columns": $0.columns, "unique": $0.isUnique] },
                        "references": (references[schema.name] ?? []).map {
                            ["column": $0.column, "collection": $0.targetCollection, "onDelete": $0.onDelete.rawValue]
                        },
                        "fullText": searched[schema.name] as Any? ?? NSNull(),
                    ] as [String: Any]
                }
            )
            return
        }
        var text = ""
        for schema in schemas {
            text += "\(schema.name)  (key: \(schema.primaryKey)\(schema.hasAutoKey ? ", auto-assigned" : ""))\n"
            let width = schema.columns.map(\.name.count).max() ?? 0
            for column in schema.columns {
                text +=
                    "  " + column.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                    + column.type.rawValue + (column.name == schema.primaryKey ? "  primary key" : "") + "\n"
            }
            for index in schema.indexes {
                text +=
                    "  " + (index.isUnique ? "unique index" : "index") + " ("
                    + index.columns.joined(separator: ", ") + ")\n"
            }
            if let fields = searched[schema.name] {
                text += "  full-text index (" + fields.joined(separator: ", ") + ")\n"
            }
            for reference in references[schema.name] ?? [] {
                text +=
                    "  reference \(reference.column) -> \(reference.targetCollection)"
                    + " (on delete: \(reference.onDelete.rawValue))\n"
            }
        }
        write(text)
        writeError("read \(named(location))\n")
    }

    static func export(_ arguments: [String]) throws {
        let parsed = try parse(arguments, "export", options: ["format", "where", "limit", "output"], flags: [])
        let positionals = try parsed.positionals(["STORE", "COLLECTION"], required: 2)
        let format = try recordFormat(parsed.options["format"]) ?? .json
        let predicate = try parsed.options["where"].map(WhereExpression.parse)
        let limit = try parsed.integer("limit")
        let (location, store) = try openExisting(positionals[0])
        defer { try? store.close() }
        let collection = positionals[1]
        guard let schema = try store.schema(of: collection) else {
            throw StorageError(.unknownCollection, "no collection '\(collection)'", collection: collection)
        }
        let matching = try store.count(in: schema.name, where: predicate)
        let total = limit.map { min($0, matching) } ?? matching
        let output = try OutputFile(parsed.options["output"])
        var writer = RecordWriter(format: format, columns: schema.columns.map(\.name))
        let progress = ProgressLine(drawn: !output.isTerminal)
        do {
            try output.write(writer.header())
            var last: StorageValue?
            var written = 0
            while written < total {
                var batchPredicate = predicate
                if let last {
                    let after = StoragePredicate.compare(schema.primaryKey, .greater, last)
                    batchPredicate = batchPredicate.map { .and($0, after) } ?? after
                }
                let batch = try store.fetchDictionaries(
                    from: schema.name,
                    where: batchPredicate,
                    orderBy: [.ascending(schema.primaryKey)],
                    limit: min(1_000, total - written)
                )
                if batch.isEmpty { break }
                var chunk = ""
                for record in batch { chunk += writer.record(record) }
                try output.write(chunk)
                written += batch.count
                last = batch.last?[schema.primaryKey]
                progress.update("exporting \(schema.name)", records: written, total: total)
            }
            try output.write(writer.footer())
            try output.commit()
            progress.finish(
                "exported \(ProgressLine.counted(written, "record")) of \(schema.name) from \(named(location))"
            )
        } catch {
            output.discard()
            progress.finish(nil)
            throw error
        }
    }

    static func importRecords(_ arguments: [String]) throws {
        let parsed = try parse(arguments, "import", options: ["format", "primary-key"], flags: ["json"])
        let positionals = try parsed.positionals(["STORE", "COLLECTION", "FILE"], required: 3)
        let collection = positionals[1]
        let path = positionals[2]
        if path != "-" { try FileProblem.checkReadable(path) }
        // A file is streamed by the store's imports (read twice, a chunk at a time); standard
        // input is read whole.
        let fileURL = path == "-" ? nil : URL(fileURLWithPath: path)
        let data = fileURL == nil ? FileHandle.standardInput.readDataToEndOfFile() : Data()
        let format =
            try recordFormat(parsed.options["format"]) ?? RecordFormat.detect(path: path, data: head(fileURL) ?? data)
        let key = parsed.options["primary-key"]
        let progress = ProgressLine()
        let reading = { (step: StoreCopyProgress) in
            progress.update("reading \(step.collection)", records: step.records, total: nil)
        }
        let importing = { (step: StoreCopyProgress) in
            progress.update("importing into \(step.collection)", records: step.records, total: step.total)
        }
        // Everything is read and checked before the store is opened: bad input writes nothing.
        var csvPlan: CSVImport?
        var jsonPlan: ObjectStore.JSONImportPlan?
        switch format {
        case .csv:
            csvPlan = try ObjectStore.checkCSV(
                file: fileURL,
                data: data,
                into: collection,
                primaryKey: key,
                progress: reading
            )
        case .json, .ndjson:
            let plan = try ObjectStore.checkJSON(
                fileURL.map { .file($0) } ?? .data(data),
                lines: format == .ndjson,
                into: collection,
                watching: key,
                progress: reading
            )
            if let key, let record = plan.firstRecord(lacking: key) {
                throw InputError("record \(record + 1) of '\(path)' has no '\(key)', the primary key asked for")
            }
            jsonPlan = plan
        }
        let location = try StoreLocation.parse(positionals[0], mustExist: false)
        let store = try location.open()
        defer { try? store.close() }
        if let key, let existing = try store.schema(of: collection), existing.primaryKey != key {
            throw StorageError(
                .schemaMismatch,
                "collection '\(existing.name)' is keyed by '\(existing.primaryKey)', not '\(key)'",
                collection: existing.name
            )
        }
        // One transaction: the store reads the input again, checks it and stores every record.
        let count =
            try jsonPlan.map { try store.insert(json: $0, primaryKey: key, progress: importing) }
            ?? store.insert(csv: fileURL, data: data, plan: csvPlan!, primaryKey: key, progress: importing)
        progress.finish("imported \(ProgressLine.counted(count, "record")) into \(collection)")
        if parsed.flags.contains("json") { try writeJSON(["collection": collection, "records": count]) }
    }

    /// The first bytes of the file at `url` (to tell its format), or nil.
    static func head(_ url: URL?) -> Data? {
        guard let url, let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        return try? handle.read(upToCount: 4_096)
    }

    static func copy(_ arguments: [String]) throws {
        let parsed = try parse(
            arguments,
            "copy",
            options: ["collections", "batch-size"],
            flags: ["merge", "replace", "no-verify", "json"]
        )
        let positionals = try parsed.positionals(["FROM", "TO"], required: 2)
        if parsed.flags.contains("merge") && parsed.flags.contains("replace") {
            throw UsageError("--merge and --replace cannot be given together")
        }
        let mode: StoreCopyMode =
            parsed.flags.contains("merge") ? .merge : parsed.flags.contains("replace") ? .replace : .refuse
        let batchSize = try parsed.integer("batch-size") ?? 10_000
        guard batchSize >= 1 else { throw UsageError("--batch-size needs at least 1") }
        let collections = parsed.options["collections"].map {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let (fromLocation, from) = try openExisting(positionals[0])
        defer { try? from.close() }
        let toLocation = try StoreLocation.parse(positionals[1], mustExist: false)
        guard toLocation != fromLocation else { throw UsageError("FROM and TO are the same store") }
        let to = try toLocation.open()
        defer { try? to.close() }
        let progress = ProgressLine()
        let report: StoreCopyReport
        do {
            report = try from.copy(
                to: to,
                collections: collections,
                mode: mode,
                verifying: !parsed.flags.contains("no-verify"),
                batchSize: batchSize
            ) { step in
                progress.update("\(step.phase.rawValue) \(step.collection)", records: step.records, total: step.total)
            }
        } catch {
            progress.finish(nil)
            throw error
        }
        let verified = report.collections.allSatisfy(\.verified)
        progress.finish(
            "copied \(ProgressLine.counted(report.records, "record")) in "
                + ProgressLine.counted(report.collections.count, "collection")
                + " from \(fromLocation) to \(toLocation)" + (verified ? ", verified" : ", not verified")
                + String(format: " (%.1f s)", progress.elapsed)
        )
        if parsed.flags.contains("json") {
            try writeJSON([
                "records": report.records,
                "collections": report.collections.map {
                    ["name": $0.name, "records": $0.records, "verified": $0.verified] as [String: Any]
                },
            ])
        }
    }

    static func verify(_ arguments: [String]) throws {
        let parsed = try parse(arguments, "verify", options: ["collections"], flags: ["json"])
        let positionals = try parsed.positionals(["A", "B"], required: 2)
        let collections = parsed.options["collections"].map {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let (aLocation, a) = try openExisting(positionals[0])
        defer { try? a.close() }
        let (bLocation, b) = try openExisting(positionals[1])
        defer { try? b.close() }
        let progress = ProgressLine()
        let json = parsed.flags.contains("json")
        // By default the collections of A (the source of a copy) are compared: B may hold
        // others, which are named in the summary.
        let compared = try collections ?? a.collectionNames()
        let folded = Set(compared.map(Identifier.folded))
        let others =
            collections != nil ? [] : try b.collectionNames().filter { !folded.contains(Identifier.folded($0)) }
        do {
            let counts = try a.verify(against: b, collections: compared) { step in
                progress.update("verifying \(step.collection)", records: step.records, total: nil)
            }
            let records = counts.values.reduce(0, +)
            progress.finish(
                "\(named(aLocation)) and \(named(bLocation)) hold the same data: "
                    + "\(ProgressLine.counted(records, "record")) in \(ProgressLine.counted(counts.count, "collection"))"
                    + (others.isEmpty
                        ? "" : "; B also holds \(ProgressLine.counted(others.count, "other collection")), not compared")
            )
            if json {
                try writeJSON([
                    "same": true, "records": records,
                    "collections": counts.keys.sorted().map { ["name": $0, "records": counts[$0]!] as [String: Any] },
                ])
            }
        } catch let error as StorageError where error.code == .verificationFailed {
            progress.finish(nil)
            writeError("storage: \(named(aLocation)) and \(named(bLocation)) differ: \(error.message)\n")
            if json {
                var object: [String: Any] = ["same": false, "message": error.message]
                object["collection"] = error.collection ?? NSNull()
                object["key"] = error.key.map { RecordWriter.json($0) } ?? NSNull()
                try writeJSON(object)
            }
            throw Reported(status: 1)
        }
    }

    // MARK: Helpers

    /// The arguments of `command`, or `HelpRequested` when they ask for its help.
    static func parse(
        _ arguments: [String],
        _ command: String,
        options: Set<String>,
        flags: Set<String>
    ) throws
        -> Arguments
    {
        let parsed = try Arguments(parsing: arguments, options: options, flags: flags.union(["help"]))
        if parsed.flags.contains("help") { throw HelpRequested(command: command) }
        return parsed
    }

    static func recordFormat(_ name: String?) throws -> RecordFormat? {
        guard let name else { return nil }
        guard let format = RecordFormat(rawValue: name.lowercased()) else {
            throw UsageError("unknown format '\(name)': use json, ndjson or csv")
        }
        return format
    }

    /// Opens a store that must exist already, read-only: a read never creates nor changes one
    /// (a misspelt PostgreSQL schema is an error, not a new empty store).
    static func openExisting(_ text: String) throws -> (StoreLocation, ObjectStore) {
        let location = try StoreLocation.parse(text, mustExist: true)
        return (location, try location.open(readOnly: true))
    }

    /// The store as the commands name what they read: its location, and for PostgreSQL the
    /// schema (`postgresql:postgresql://app@db1/app, schema public`).
    static func named(_ location: StoreLocation) -> String {
        guard let schema = location.postgreSQLSchema else { return location.description }
        return location.description + ", schema " + schema
    }

    static func writeJSON(_ object: Any) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

/// `--help` was given: print the command's help, exit 0.
struct HelpRequested: Error {
    var command: String
}

/// A failure already reported on standard error: exit with `status`.
struct Reported: Error {
    var status: Int32
}

/// Where `export` writes: standard output, or a file written beside its final place and moved
/// there only when complete, so a failed export leaves nothing half-written.
final class OutputFile {
    private let handle: FileHandle
    private let final: String?
    private let temporary: String?

    /// Whether the records go to a terminal (standard output, not redirected).
    var isTerminal: Bool { final == nil && isatty(STDOUT_FILENO) != 0 }

    init(_ path: String?) throws {
        guard let path, path != "-" else {
            handle = FileHandle.standardOutput
            final = nil
            temporary = nil
            return
        }
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = (directory.isEmpty ? "." : directory) + "/.storage-export-\(UUID().uuidString)"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard descriptor >= 0 else {
            throw InputError("cannot write '\(path)': \(FileProblem.reason(errno: errno))", code: "io")
        }
        self.handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        self.final = path
        self.temporary = temporary
    }

    func write(_ text: String) throws {
        try handle.write(contentsOf: Data(text.utf8))
    }

    func commit() throws {
        guard let final, let temporary else { return }
        try handle.synchronize()
        try handle.close()
        if rename(temporary, final) != 0 {
            let problem = FileProblem.reason(errno: errno)
            discard()
            throw InputError("cannot write '\(final)': \(problem)", code: "io")
        }
    }

    func discard() {
        guard let temporary else { return }
        try? handle.close()
        try? FileManager.default.removeItem(atPath: temporary)
    }
}

extension StoreLocation {
    /// The PostgreSQL schema the store's tables are in, or `nil` for a store in files.
    var postgreSQLSchema: String? {
        guard case .postgresql(_, let schema) = self else { return nil }
        return schema
    }
}
