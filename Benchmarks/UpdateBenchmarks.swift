import Foundation
import LMDBBackend
import SQLiteBackend
import Storage

/// `ObjectStore.update(_:set:where:)` of a tenth of the records (a range of ids, two columns
/// set), beside SQLite's own `UPDATE … WHERE` through the C API, on LMDB a raw loop that reads,
/// changes and puts back each record, and on PostgreSQL (when `STORAGE_POSTGRES_URL` names a
/// server) the same `UPDATE` through libpq, on stores holding the same records, in the same run. Each round updates another tenth, with values of its own, so every round writes.
/// Goal: ratio ≥ 0.5.
enum UpdateBenchmarks {
    static let goal = 0.5

    static func run(_ harness: inout Harness, people: [Person], directory: URL) throws {
        for observed in [false, true] {
            try measure(
                &harness,
                backend: observed ? "sqlite, observed" : "sqlite",
                people: people,
                observed: observed,
                ours: { ObjectStore(backend: try .sqlite(path: $0)) },
                raw: { path in
                    let raw = try RawSQLite(path: path)
                    return (
                        { try raw.insert($0) },
                        { try raw.update(ids: $0, score: $1, firstName: $2) }
                    )
                },
                baseline: "raw SQL through the C API, UPDATE … SET score, firstName WHERE id BETWEEN",
                suffixes: RawSQLite.suffixes,
                directory: directory
            )
        }
        try measure(
            &harness,
            backend: "lmdb",
            people: people,
            observed: false,
            ours: { ObjectStore(backend: try .lmdb(path: $0)) },
            raw: { path in
                let raw = try RawLMDB(path: path)
                return (
                    { try raw.insert($0) },
                    { try raw.update(ids: $0, score: $1, firstName: $2) }
                )
            },
            baseline: "raw loop: mdb_get, decode, change, encode, mdb_put per record, one transaction",
            suffixes: ["", "-lock"],
            directory: directory
        )
        // PostgreSQL when a server is named, as `--backends postgresql` needs.
        guard (try? RawPostgreSQL.url()) != nil else { return }
        try measure(
            &harness,
            backend: "postgresql",
            people: people,
            observed: false,
            ours: { try RawPostgreSQL.openStore(path: $0) },
            raw: { path in
                let raw = try RawPostgreSQL(path: path)
                return (
                    { try raw.copy($0) },
                    { try raw.update(ids: $0, score: $1, firstName: $2) }
                )
            },
            baseline: "raw libpq, UPDATE … SET score, firstname WHERE id BETWEEN, values bound",
            suffixes: [],
            directory: directory,
            remove: { path in
                RawPostgreSQL.dropSchema(RawPostgreSQL.schema(for: path))
                RawPostgreSQL.dropSchema(RawPostgreSQL.schema(for: path) + "_ours")
            }
        )
    }

    /// Fills our store and the raw one with `people`, then alternates our update and the raw one
    /// on the same tenth of the ids, one untimed warm-up round first; `observed`: with a change
    /// stream of the collection subscribed (never read), so that the update returns its keys.
    private static func measure(
        _ harness: inout Harness,
        backend: String,
        people: [Person],
        observed: Bool,
        ours open: (String) throws -> ObjectStore,
        raw openRaw: (String) throws -> (
            insert: ([Person]) throws -> Void, update: (ClosedRange<Int64>, Double, String) throws -> Int
        ),
        baseline: String,
        suffixes: [String],
        directory: URL,
        remove: ((String) -> Void)? = nil
    ) throws {
        progress("update \(backend)")
        let file = backend.replacingOccurrences(of: ", ", with: "-")
        let oursPath = directory.appendingPathComponent("update-ours.\(file)").path
        let rawPath = directory.appendingPathComponent("update-raw.\(file)").path
        defer {
            for path in [oursPath, rawPath] {
                for suffix in suffixes { try? FileManager.default.removeItem(atPath: path + suffix) }
                remove?(path)
            }
        }
        let store = try open(oursPath)
        defer { try? store.close() }
        try store.save(contentsOf: people)
        let stream = observed ? store.changes(of: Person.self) : nil
        defer { withExtendedLifetime(stream) {} }
        let raw = try openRaw(rawPath)
        try raw.insert(people)
        let tenth = max(1, people.count / 10)
        let clock = ContinuousClock()
        var ours: [Duration] = []
        var theirs: [Duration] = []
        for round in 0...harness.repetitions {
            let first = Int64((round % 10) * tenth + 1)
            let ids = first...(first + Int64(tenth) - 1)
            let score = Double(round) + 0.5
            let name = "updated\(round)"
            var changed = 0
            let mine = try clock.measure {
                changed = try store.update(
                    Person.self,
                    set: ["score": .real(score), "firstName": .text(name)],
                    where: Column("id") >= ids.lowerBound && Column("id") <= ids.upperBound
                )
            }
            precondition(changed == tenth, "ours changed \(changed) records, not \(tenth)")
            var rawChanged = 0
            let base = try clock.measure { rawChanged = try raw.update(ids, score, name) }
            precondition(rawChanged == tenth, "the baseline changed \(rawChanged) records, not \(tenth)")
            if round > 0 {
                ours.append(mine)
                theirs.append(base)
            }
        }
        harness.record(
            backend: backend,
            operation: .update,
            rows: tenth,
            ours: Harness.median(ours),
            baseline: baseline,
            baselineTime: Harness.median(theirs),
            goal: goal
        )
    }
}
