import Foundation

/// What a store knows of the types and collections it has seen, kept from call to call: each
/// type's ``ModelInfo`` (its collection, key and layout), its ``WritePlan``, the ``ReadPlan`` of
/// each stored schema, and each type's ``TypeReadPlan`` for key look-ups (GRDB's schema cache
/// plays this part). One per ``ObjectStore``; a ``Session`` reads and fills it, and knows nothing
/// else of the store.
///
/// Every entry is valid as long as what it was made from: a plan is used only after checking it
/// against the stored schema of the transaction at hand, so a stale entry costs a new plan, never
/// a wrong read.
final class ModelCatalog: Sendable {
    private let models = Locked<[ObjectIdentifier: ModelInfo]>([:])
    private let readPlans = Locked<[String: ReadPlan]>([:])
    /// The write plans of the types saved so far, each valid while its collection's stored schema
    /// is the one it was checked against (see ``WritePlan``).
    private let writePlans = Locked<[ObjectIdentifier: WritePlan]>([:])
    /// What a key look-up of a type needs (its collection, its name and the read plan it used
    /// last), by the type's identity: one lock and one hash of an identity a look-up (see
    /// ``TypeReadPlan``).
    private let typeReadPlans = Locked<[ObjectIdentifier: TypeReadPlan]>([:])
    /// The entry of `typeReadPlans` used last, found without the lock (the lock and the hash
    /// cost more than the rest of a look-up's bookkeeping: docs/BENCHMARKS.md). It may hold an
    /// older plan of a type than the dictionary; a look-up checks the plan's schema anyway.
    private let lastTypeReadPlan = AtomicSlot<TypeReadPlan>()

    /// What the store knows of `type`, learnt on first use.
    /// - Throws: ``StorageError`` when the type cannot be stored (its collection name is invalid).
    func info<T>(for type: T.Type) throws -> ModelInfo {
        let id = ObjectIdentifier(type)
        if let known = models.withLock({ $0[id] }) { return known }
        let info = try ModelInfo(for: type)
        models.withLock { $0[id] = $0[id] ?? info }
        return info
    }

    /// Remembers the columns a save of `type` found, for its later saves.
    func rememberLayout<T>(_ layout: [ColumnDefinition], for type: T.Type) {
        let id = ObjectIdentifier(type)
        models.withLock { $0[id]?.layout = layout }
    }

    /// The write plan last made for `type`, to be used only if the stored schema of its collection
    /// is still `plan.stored`.
    func writePlan<T>(for type: T.Type) -> WritePlan? {
        let id = ObjectIdentifier(type)
        return writePlans.withLock { $0[id] }
    }

    /// Keeps `plan` for the next saves of `type`, replacing the one before.
    func keepWritePlan<T>(_ plan: WritePlan, for type: T.Type) {
        let id = ObjectIdentifier(type)
        writePlans.withLock { $0[id] = plan }
    }

    /// The read plan for a stored schema, reused while the schema stays the same.
    func readPlan(for stored: CollectionSchema) -> ReadPlan {
        if let plan = readPlans.withLock({ $0[stored.name] }), plan.schema == stored { return plan }
        let plan = ReadPlan(stored)
        readPlans.withLock { $0[stored.name] = plan }
        return plan
    }

    /// The look-up plan `type` read with last, if any: its collection is always right, its read
    /// plan only while `plan.schema` is the stored schema.
    func typeReadPlan<T>(for type: T.Type) -> TypeReadPlan? {
        let id = ObjectIdentifier(type)
        if let last = lastTypeReadPlan.peek(where: { $0.type == id }) { return last }
        guard let found = typeReadPlans.withLock({ $0[id] }) else { return nil }
        lastTypeReadPlan.replace(with: found)
        return found
    }

    /// A look-up plan for `type` over `stored`, kept for the next look-ups of the type.
    func makeTypeReadPlan<T>(for type: T.Type, info: ModelInfo, stored: CollectionSchema) -> TypeReadPlan {
        let id = ObjectIdentifier(type)
        let made = TypeReadPlan(
            type: id,
            collection: info.collection,
            typeName: info.typeName,
            plan: readPlan(for: stored)
        )
        typeReadPlans.withLock { $0[id] = made }
        lastTypeReadPlan.replace(with: made)
        return made
    }
}
