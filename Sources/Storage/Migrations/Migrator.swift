import Foundation

/// Versioned migrations: named steps that change a store's data and schema between app versions,
/// each run once per store, in the order they were registered (GRDB's `DatabaseMigrator`).
///
/// ```swift
/// var migrator = Migrator()
/// migrator.register("1-rename") { m in try m.renameColumn("name", to: "fullName", in: "people") }
/// migrator.register("2-drop") { m in try m.dropColumn("legacy", from: "people") }
/// let ran: [String] = try migrator.migrate(store)          // the pending ones, in order
/// let done: [String] = try migrator.appliedMigrations(in: store)
/// ```
///
/// - Each migration runs in one write transaction of its own, which also records it in the
///   store (a hidden `_migrations` collection): all or nothing, whether it throws or the process
///   is killed. The migrations before it in the same `migrate` call stay applied (each commits,
///   as GRDB's do), so a failed `migrate` can be called again once the fault is fixed and goes
///   on from the migration that failed.
/// - Applied migrations never run again. Stores, processes or machines migrating the same store
///   at once run each migration exactly once: each migration's transaction re-reads the applied
///   list after it has the store's write lock (SQLite's `BEGIN IMMEDIATE`, LMDB's and the
///   archive's writer lock, the in-memory backend's), or on PostgreSQL runs serializable (the
///   default write isolation, or repeatable read) so that a second migrator's transaction fails
///   to commit, is retried, and then finds the migration applied.
/// - A store that records a migration this migrator does not know (migrated by a newer version
///   of the app) is refused with ``StorageError/Code/schemaMismatch``, before anything runs.
public struct Migrator: Sendable {
    private var migrations: [(name: String, body: @Sendable (MigrationContext) throws -> Void)] = []
    /// The first misuse of `register`, thrown by every later call.
    private var registrationError: StorageError?

    /// A migrator with no migrations.
    public init() {}

    /// The names registered, in order.
    public var migrationNames: [String] { migrations.map(\.name) }

    /// Adds a migration after those registered before it.
    ///
    /// Registering a name twice (or an empty name) is a mistake in the app: `migrate` and
    /// `appliedMigrations` then throw ``StorageError/Code/misuse`` naming it, and run nothing.
    /// - Parameters:
    ///   - name: the migration's name, recorded in every store it is applied to; never change it
    ///     once released.
    ///   - body: the migration, given a ``MigrationContext`` (reads, writes, schema changes); what
    ///     it throws is rethrown by `migrate`, and nothing it did remains.
    public mutating func register(_ name: String, _ body: @escaping @Sendable (MigrationContext) throws -> Void) {
        if registrationError == nil {
            if name.isEmpty {
                registrationError = StorageError(.misuse, "a migration was registered with an empty name")
            } else if migrations.contains(where: { $0.name == name }) {
                registrationError = StorageError(
                    .misuse,
                    "the migration \(Identifier.quoted(name)) was registered twice: each name must be registered once"
                )
            }
        }
        migrations.append((name, body))
    }

    /// Runs the migrations not yet applied to `store`, in registration order, each in a write
    /// transaction of its own. While another process holds the store's write lock (migrating it,
    /// say) past the backend's wait, the transaction is begun again, for about ten minutes with
    /// the default waits, before `.busy` is thrown.
    /// - Parameter store: the store to migrate.
    /// - Returns: the names of the migrations this call ran, in order (none when the store was up
    ///   to date, or when other stores or processes ran them meanwhile).
    /// - Throws: what a migration throws, as it is (that migration left no trace; those before it
    ///   stay applied); ``StorageError``: `.schemaMismatch` when the store records a migration
    ///   this migrator does not know, `.misuse` for a name registered twice, `.readOnly` when a
    ///   migration is pending on a store opened read-only.
    @discardableResult
    public func migrate(_ store: ObjectStore) throws -> [String] {
        if let registrationError { throw registrationError }
        let applied = try appliedMigrations(in: store)
        try checkKnown(applied, in: store)
        let done = Set(applied)
        var ran: [String] = []
        for migration in migrations where !done.contains(migration.name) {
            let didRun = try Self.waitingForTheLock { began in
                try store.migrationTransaction(named: migration.name) { context, session in
                    began()
                    return try run(migration, context, session, in: store)
                }
            }
            if didRun { ran.append(migration.name) }
        }
        return ran
    }

    /// How many times a migration's transaction is begun again when the store's write lock stays
    /// held past the backend's wait (`.busy` before the migration began): with the default waits
    /// (10 s on SQLite and the file archive), about ten minutes.
    static let lockAttempts = 60

    /// Calls `body` until it does not fail with `.busy` before the migration began (the write
    /// lock held by another process migrating, say), at most `lockAttempts` times. `body`
    /// calls its argument once the migration's transaction has begun; an error after that is
    /// rethrown as it is.
    private static func waitingForTheLock<R>(_ body: (_ began: () -> Void) throws -> R) throws -> R {
        var attempt = 1
        while true {
            var began = false
            do {
                return try body { began = true }
            } catch let error as StorageError where error.code == .busy && !began && attempt < lockAttempts {
                attempt += 1
            }
        }
    }

    /// Runs `migration` in its transaction unless it is applied already; whether it ran.
    private func run(
        _ migration: (name: String, body: @Sendable (MigrationContext) throws -> Void),
        _ context: MigrationContext,
        _ session: Session,
        in store: ObjectStore
    ) throws -> Bool {
        // Under the write lock: the list as it is now, whoever else migrated meanwhile.
        let current = try session.appliedMigrationNames()
        try checkKnown(current, in: store)
        if current.contains(migration.name) { return false }
        try migration.body(context)
        _ = try session.save(
            one: MigrationRecord(
                id: migration.name,
                position: Int64(current.count + 1),
                appliedAt: Date()
            )
        )
        return true
    }

    /// The names of the migrations applied to `store`, in the order they were applied, whether or
    /// not this migrator knows them.
    /// - Parameter store: the store.
    /// - Returns: the names.
    /// - Throws: ``StorageError``: `.misuse` for a name registered twice, or a failure of the store.
    public func appliedMigrations(in store: ObjectStore) throws -> [String] {
        if let registrationError { throw registrationError }
        return try store.withReadSession { session in try session.appliedMigrationNames() }
    }

    private func checkKnown(_ applied: [String], in store: ObjectStore) throws {
        let known = Set(migrations.map(\.name))
        let unknown = applied.filter { !known.contains($0) }
        guard unknown.isEmpty else {
            throw StorageError(
                .schemaMismatch,
                "the store was migrated by \(unknown.map(Identifier.quoted).joined(separator: ", ")), which this"
                    + " migrator does not know (a newer version of the app migrated it?); nothing was run",
                collection: MigrationRecord.collectionName
            )
        }
    }
}

extension ObjectStore {
    /// Runs `body` in one write transaction with a ``MigrationContext`` over it, as
    /// `transaction(_:)` runs a ``StoreTransaction``.
    func migrationTransaction<R>(named name: String, _ body: (MigrationContext, Session) throws -> R) throws -> R {
        try withWriteSession { session in
            let context = MigrationContext(session: session, name: name)
            context.changeHub = changeHub
            defer { context.close() }
            return try body(context, session)
        }
    }
}
