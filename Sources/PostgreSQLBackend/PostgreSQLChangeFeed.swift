import Foundation
import Storage

/// Change observation across processes and machines.
///
/// While some store listens, every write transaction that changed records adds, just before it
/// commits, one row per collection to the store's `storage$changes` table (the keys as JSON
/// text, so a transaction of any size fits: NOTIFY's 8,000-byte payload never carries keys) and
/// sends an empty `NOTIFY` on the store's channel. It takes a transaction-scoped advisory lock
/// first, so change rows get their ids in commit order. A listener connection per backend waits
/// for the notifications and reads the rows after the last id it delivered, skipping its own
/// backend's.
///
/// Recording only while some store listens: the sequence `storage$observed` holds the number of
/// listener rows, as last counted. Every writer's change statement first takes the observer lock
/// (`observeLockKey`) shared, until its commit, and then reads the count: a sequence is read as
/// it is now, not as of the statement's snapshot. It records only when the count is not zero.
/// A listener is registered, re-registered after a lost connection, removed, or pruned as gone
/// in a transaction that holds the observer lock exclusively and sets the count before it
/// commits: a writer that read the old count has committed before a new listener reads its
/// starting point, and one that reads the count afterwards records.
///
/// Pruning: each listener records in `storage$listeners` the last id it delivered and when
/// (at least every quarter of `Configuration.changeRetention`, at most every 5 seconds), and
/// holds a session advisory lock of its own (`listenerLockSQL`) for as long as its connection
/// lives. Change rows every listener has read are deleted, the newest row always kept (a new
/// listener starts after it); a listener silent for longer than the retention whose connection
/// is gone (its lock is free) counts as gone. Listeners prune as they report, and every backend
/// prunes after every `pruneEvery`-th commit that recorded changes, so the table stays bounded.
enum PostgreSQLChangeFeed {
    /// How many commits of one backend pass between two prunings by its writer.
    static let pruneEvery = 256

    private static func key(_ text: String) -> Int64 {
        Int64(bitPattern: UInt64(PostgreSQLIdentifier.hash(text), radix: 16) ?? 0)
    }

    /// The advisory lock key that orders a listener's registration before or after a pruning,
    /// so that a pruning never deletes rows newer than the starting point of a listener it has
    /// not seen yet.
    static func pruneLockKey(for schema: String) -> Int64 { key("prune:" + schema) }

    /// The advisory lock key writers take shared before they read the listener count, and
    /// listener changes exclusively (see the type's description).
    static func observeLockKey(for schema: String) -> Int64 { key("observe:" + schema) }

    /// The advisory lock key that orders the change rows of a store.
    static func lockKey(for schema: String) -> Int64 { key("changes:" + schema) }

    /// The notification channel of a store's schema.
    static func channel(for schema: String) -> String {
        "storage_" + PostgreSQLIdentifier.hash(schema)
    }

    /// A listener's own advisory lock key, computed by the server from its origin (`$1`), so
    /// that a pruning can test the lock of every listener row.
    private static func listenerKeySQL(_ origin: String) -> String {
        "('x' || left(md5(" + origin + "), 16))::bit(64)::int8"
    }

    /// The statement a listener's connection runs once connected: tries to take its own lock for
    /// the connection's life, so that no pruning counts it as gone while it is connected.
    /// Returns whether it holds the lock.
    static let listenerLockSQL = "SELECT pg_try_advisory_lock(" + listenerKeySQL("$1::text") + ")"

    /// How often a listener reports its position (and prunes): a quarter of the retention,
    /// between 20 milliseconds and 5 seconds.
    static func reportInterval(retention: Duration) -> Duration {
        min(max(retention / 4, .milliseconds(20)), .seconds(5))
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let components = duration.components
        return max(1, components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
    }

    /// The statement that records a listener's position: `$1` its origin, `$2` the last id it
    /// delivered, or null for a new listener, which starts after the newest row.
    static func reportSQL(_ catalog: PostgreSQLCatalog) -> String {
        "INSERT INTO " + catalog.listenersTable + " (origin, last_seen, seen_at)"
            + " SELECT $1::text, coalesce($2::int8, (SELECT max(id) FROM " + catalog.changesTable + "), 0), now()"
            + " ON CONFLICT (origin) DO UPDATE SET last_seen = excluded.last_seen, seen_at = excluded.seen_at"
            + " RETURNING last_seen"
    }

    /// Runs `change` in a `READ COMMITTED` transaction holding `locks` (the observer lock last)
    /// exclusively, then sets the listener count to the rows of the listener table, and commits.
    /// The observer lock waits for the writers that read the count before it and have not
    /// committed yet.
    private static func changingListeners<Result>(
        on connection: PostgreSQLConnection,
        catalog: PostgreSQLCatalog,
        locks: [Int64],
        context: String,
        _ change: () throws -> Result
    ) throws -> Result {
        do {
            try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            for lock in locks {
                _ = try connection.query(
                    "SELECT pg_advisory_xact_lock($1::int8)",
                    PostgreSQLParameters([.integer(lock)]),
                    context
                )
            }
            let result = try change()
            try recount(on: connection, catalog: catalog, context: context)
            try connection.execute("COMMIT")
            return result
        } catch {
            if !connection.isBroken && connection.isInTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// Sets the listener count to the rows of the listener table. Its caller holds the observer
    /// lock exclusively.
    static func recount(on connection: PostgreSQLConnection, catalog: PostgreSQLCatalog, context: String) throws {
        _ = try connection.query(
            "SELECT setval($1::text::regclass, (SELECT count(*) FROM " + catalog.listenersTable + "), true)",
            PostgreSQLParameters([.text(catalog.observedSequence)]),
            context
        )
    }

    /// Registers a listener under the pruning lock (see `pruneLockKey`) and the observer lock:
    /// a new one (`lastSeen` nil) starts after the newest change row; one back after a lost
    /// connection goes on from `lastSeen`.
    /// - Returns: the id after which it reads.
    static func register(
        origin: String,
        lastSeen: Int64?,
        on connection: PostgreSQLConnection,
        catalog: PostgreSQLCatalog,
        pruneLockKey: Int64,
        observeLockKey: Int64
    ) throws -> Int64 {
        let context = "cannot register a change listener"
        // The pruning lock before the observer lock, as a pruning takes them.
        return try changingListeners(
            on: connection,
            catalog: catalog,
            locks: [pruneLockKey, observeLockKey],
            context: context
        ) {
            let result = try connection.query(
                reportSQL(catalog),
                PostgreSQLParameters([.text(origin), lastSeen.map(StorageValue.integer) ?? .null]),
                context
            )
            guard case .integer(let id)? = result.firstValue else { return 0 }
            return id
        }
    }

    /// Removes the listener `origin` (its store closed) and lowers the count.
    static func unregister(
        origin: String,
        on connection: PostgreSQLConnection,
        catalog: PostgreSQLCatalog,
        observeLockKey: Int64
    ) throws {
        let context = "cannot remove a change listener"
        try changingListeners(on: connection, catalog: catalog, locks: [observeLockKey], context: context) {
            _ = try connection.query(
                "DELETE FROM " + catalog.listenersTable + " WHERE origin = $1::text",
                PostgreSQLParameters([.text(origin)]),
                context
            )
        }
    }

    /// Records that the listener `origin` has delivered every change up to `lastSeen`.
    static func report(
        origin: String,
        lastSeen: Int64,
        on connection: PostgreSQLConnection,
        catalog: PostgreSQLCatalog
    ) throws {
        _ = try connection.query(
            reportSQL(catalog),
            PostgreSQLParameters([.text(origin), .integer(lastSeen)]),
            "cannot record a change listener's position"
        )
    }

    /// Deletes the listeners gone (silent for longer than `retention`, and their connection
    /// closed: their lock is free) and lowers the count, then deletes the change rows every
    /// remaining listener has read (all but the newest when none remains). Skipped when another
    /// connection is pruning or registering a listener. Must run outside a transaction.
    static func prune(
        on connection: PostgreSQLConnection,
        catalog: PostgreSQLCatalog,
        lockKey: Int64,
        observeLockKey: Int64,
        retention: Duration
    ) throws {
        let context = "cannot prune the store's changes"
        do {
            try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            let locked = try connection.query(
                "SELECT pg_try_advisory_xact_lock($1::int8)",
                PostgreSQLParameters([.integer(lockKey)]),
                context
            )
            if locked.firstValue == .integer(1) {
                let gone = try connection.query(
                    "DELETE FROM " + catalog.listenersTable
                        + " WHERE seen_at < now() - $1::int8 * interval '1 millisecond' AND pg_try_advisory_xact_lock("
                        + listenerKeySQL("origin") + ")",
                    PostgreSQLParameters([.integer(milliseconds(retention))]),
                    context
                )
                if gone.affectedRows > 0 {
                    _ = try connection.query(
                        "SELECT pg_advisory_xact_lock($1::int8)",
                        PostgreSQLParameters([.integer(observeLockKey)]),
                        context
                    )
                    try recount(on: connection, catalog: catalog, context: context)
                }
                // Statements after the lock's, each with its own snapshot (read committed), so
                // they see every listener registered before the lock was taken.
                _ = try connection.query(
                    "DELETE FROM " + catalog.changesTable + " WHERE id < (SELECT max(id) FROM " + catalog.changesTable
                        + ") AND id <= coalesce((SELECT min(last_seen) FROM " + catalog.listenersTable
                        + "), (SELECT max(id) FROM " + catalog.changesTable + "))",
                    PostgreSQLParameters(),
                    context
                )
            }
            try connection.execute("COMMIT")
        } catch {
            if !connection.isBroken && connection.isInTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// The listener count, as one expression of a change statement: takes the observer lock
    /// shared, then reads the count (1 when never set). `COALESCE` evaluates its arguments from
    /// the left and stops at the first that is not null (as PostgreSQL documents), so the `CASE`
    /// takes the lock (and yields null) before the count is read. The lock key and the sequence
    /// are constants of the statement, not parameters: PostgreSQL resolves the sequence's name
    /// once, when it plans the prepared statement (and plans it again if the sequence is made
    /// anew).
    ///
    /// One expression, without a subquery: every plan node and function call of a statement is
    /// set up again at each execution, and a subquery would nearly treble the server's work of a
    /// single save (docs/BENCHMARKS.md).
    private static func listenerCount(_ catalog: PostgreSQLCatalog) -> String {
        "coalesce(CASE WHEN pg_advisory_xact_lock_shared((" + String(catalog.observeLockKey)
            + ")::int8) IS NULL THEN 1 END, pg_sequence_last_value("
            + PostgreSQLIdentifier.literal(catalog.observedSequence) + "::regclass), 1)"
    }

    /// The condition under which a change statement inserts its rows: `CASE` tests its conditions
    /// in order (as PostgreSQL documents), so `first` (a test of the row, which makes PostgreSQL
    /// evaluate the condition row by row, after what produces the rows) comes first, then the
    /// listener count (`listenerCount`), and only when some store listens the change lock
    /// (before the row gets its id, so ids follow commit order) and the notification, whose
    /// payload is the origin (`origin`, a parameter), so that a backend's own listener need not
    /// read the rows of its own commits.
    private static func recordsWhen(_ catalog: PostgreSQLCatalog, first: String, origin: String) -> String {
        "CASE WHEN " + first + " THEN false WHEN " + listenerCount(catalog) + " = 0 THEN false"
            + " WHEN pg_advisory_xact_lock((" + String(catalog.changeLockKey) + ")::int8) IS NULL THEN false"
            + " WHEN pg_notify(" + PostgreSQLIdentifier.literal(catalog.channel) + ", " + origin
            + ") IS NULL THEN false ELSE true END"
    }

    /// The statement that records a transaction's changes and notifies the listeners while some
    /// store listens (see the type's description): takes the locks, inserts the rows, notifies,
    /// in one round trip; inserts nothing when no store listens (`recordsWhen`). Parameters:
    /// origin, collections, upserted, deleted.
    static func publishSQL(_ catalog: PostgreSQLCatalog) -> String {
        "INSERT INTO " + catalog.changesTable + " (origin, collection, upserted, deleted)"
            + " SELECT $1::text, c, u, d FROM unnest($2::text[], $3::text[], $4::text[]) AS t(c, u, d) WHERE "
            + recordsWhen(catalog, first: "c IS NULL", origin: "$1::text")
    }

    /// One statement that upserts one record (`upsert`, whose values are `$1`…`$parameters`) and,
    /// while some store listens, records the change, for a transaction of one saved record run
    /// on its own: a data-modifying `WITH` runs the upsert, and the change row (from the upsert's
    /// row count, so after it) is inserted under `recordsWhen`'s condition: the observer lock and
    /// the count, then `pg_advisory_xact_lock` (so change rows get their ids in commit order) and
    /// `pg_notify`. The locks are taken only after the upsert has run: a save waiting for a row
    /// lock never holds the change lock, which every other writer needs to commit. Inserts no
    /// change row (the affected rows are 0) when no store listens.
    ///
    /// Its parameters after the record's: the origin (text), the collection as named (text), the
    /// upserted key as `encode` writes it (text).
    ///
    /// `checked`: a condition (`PostgreSQLSearchRegistryAppeared`) the upsert's `RETURNING` also
    /// divides by zero without, for a transaction that answered a question about the store's
    /// full-text indexes from the cache.
    static func saveOneSQL(
        _ catalog: PostgreSQLCatalog,
        upsert: String,
        parameters: Int,
        checked: String? = nil
    ) -> String {
        let origin = "$\(parameters + 1)::text"
        let collection = "$\(parameters + 2)::text"
        let upserted = "$\(parameters + 3)::text"
        let returning = checked.map { "1 / (" + $0 + ")::int" } ?? "1"
        return "WITH w AS (" + upsert + " RETURNING " + returning + ") INSERT INTO " + catalog.changesTable
            + " (origin, collection, upserted, deleted) SELECT " + origin + ", " + collection + ", " + upserted
            + ", '[]' FROM (SELECT count(*) AS n FROM w) AS s WHERE "
            + recordsWhen(catalog, first: "s.n < 0", origin: origin)
    }

    /// The upsert of one record (`upsert`, whose values are its only parameters) for when no
    /// store listened at the last save: the upsert alone, whose `RETURNING` reads the listener
    /// count (`listenerCount`: the observer lock taken shared first) and divides by zero when it
    /// is not zero. That error (SQLSTATE 22012, `listenersAppeared`) rolls the statement back, the
    /// connection throws `PostgreSQLListenersAppeared` for it, and the caller runs `saveOneSQL`.
    /// `nil` for an upsert that returns no row on a conflict (`DO NOTHING`): its check would not
    /// run. `checked`: it also divides by zero without that condition (see `saveOneSQL`); the
    /// caller then runs the checked `saveOneSQL`, which tells the two apart.
    static func saveOneUnobservedSQL(
        _ catalog: PostgreSQLCatalog,
        upsert: String,
        returnsRow: Bool,
        checked: String? = nil
    ) -> String? {
        guard returnsRow else { return nil }
        guard let checked else { return upsert + " RETURNING 1 / (" + listenerCount(catalog) + " = 0)::int" }
        return upsert + " RETURNING 1 / ((" + listenerCount(catalog) + " = 0) AND " + checked + ")::int"
    }

    /// The check a longer transaction sends before its `COMMIT`, instead of its change record,
    /// while no store listened at the last write (`PostgreSQLStorageBackend.write(_:)`): the
    /// listener count read as `saveOneUnobservedSQL` reads it (the observer lock taken shared
    /// first, held to the commit), divided by zero when a store listens. Its error
    /// (`listenersAppeared`) rolls the transaction back, and the backend runs it again with its
    /// change record. The keys of a bulk load are then neither encoded nor sent (a profile of a
    /// 100,000-record insert showed their JSON as 7 % of the client's instructions).
    static func listenersCheckSQL(_ catalog: PostgreSQLCatalog) -> String {
        "SELECT 1 / (" + listenerCount(catalog) + " = 0)::int"
    }

    /// The SQLSTATE of `saveOneUnobservedSQL` and `listenersCheckSQL` when a store listens,
    /// which the connection turns into `PostgreSQLListenersAppeared` for that statement (neither
    /// has another division).
    static let listenersAppeared = PostgreSQLError.Code.divisionByZero

    /// Keys as JSON text: each a tagged string (`i:`, `r:`, `t:`, `b:`), so every key type
    /// comes back exactly. Written byte by byte (a transaction may record a million keys).
    static func encode(_ keys: [StorageValue]) -> String {
        var json: [UInt8] = [UInt8(ascii: "[")]
        json.reserveCapacity(keys.count * 12 + 2)
        for (index, key) in keys.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json.append(UInt8(ascii: "\""))
            switch key {
            case .null: json.append(contentsOf: "n:".utf8)
            case .integer(let value):
                json.append(UInt8(ascii: "i"))
                json.append(UInt8(ascii: ":"))
                appendDecimal(value, to: &json)
            case .real(let value): json.append(contentsOf: ("r:" + String(value.bitPattern)).utf8)
            case .text(let value):
                json.append(contentsOf: "t:".utf8)
                appendEscaped(value, to: &json)
            case .blob(let value): json.append(contentsOf: ("b:" + value.base64EncodedString()).utf8)
            }
            json.append(UInt8(ascii: "\""))
        }
        json.append(UInt8(ascii: "]"))
        return String(decoding: json, as: UTF8.self)
    }

    /// Appends the decimal digits of `value` (as `String(value)` writes them), without making
    /// a string per key.
    private static func appendDecimal(_ value: Int64, to json: inout [UInt8]) {
        if value < 0 { json.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var divisor: UInt64 = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            json.append(UInt8(ascii: "0") + UInt8(magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        }
    }

    /// Appends `text` as the inside of a JSON string: quotes, backslashes and control
    /// characters escaped, everything else as its UTF-8 bytes.
    private static func appendEscaped(_ text: String, to json: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                json.append(UInt8(ascii: "\\"))
                json.append(byte)
            case 0..<0x20:
                json.append(contentsOf: "\\u00".utf8)
                json.append(hex[Int(byte >> 4)])
                json.append(hex[Int(byte & 15)])
            default:
                json.append(byte)
            }
        }
    }

    static func decode(_ text: String) -> [StorageValue] {
        guard let tagged = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String] else { return [] }
        return tagged.compactMap { item in
            let body = String(item.dropFirst(2))
            switch item.prefix(2) {
            case "i:": return Int64(body).map(StorageValue.integer)
            case "r:": return UInt64(body).map { .real(Double(bitPattern: $0)) }
            case "t:": return .text(body)
            case "b:": return Data(base64Encoded: body).map(StorageValue.blob)
            default: return .null
            }
        }
    }
}
