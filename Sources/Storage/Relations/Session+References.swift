/// What a session learnt of the store's references: the registry as it read it (kept while the
/// session does not write it) and the collections whose references it has registered.
struct RelationState {
    /// Every stored reference, as the registry held it when read.
    var registry: [ReferenceRecord]?
    /// The folded names of the collections whose references this session checked or wrote.
    var registered: Set<String> = []
}

/// References: the registry kept in `_references`, the check of a save's references, and the
/// delete rules (restrict, cascade, set null) applied by every delete, in the Store layer so that
/// every backend (external ones too) gives the same answers.
extension Session {
    // MARK: The registry

    /// Every reference stored in the registry, read once a session.
    func storedReferences() throws -> [ReferenceRecord] {
        if let known = relations?.registry { return known }
        var records: [ReferenceRecord] = []
        if try storedSchema(ReferenceRecord.collectionName) != nil {
            records = try fetchAll(ReferenceRecord.self, where: nil, orderBy: [], limit: nil)
        }
        if relations == nil { relations = RelationState() }
        relations?.registry = records
        return records
    }

    /// Writes the references of `info`'s type to the registry when they are not there as the
    /// type declares them (once a session for each collection), replacing the ones stored for its
    /// collection before.
    func registerReferences(of info: ModelInfo) throws {
        let folded = Identifier.folded(info.collection)
        if relations?.registered.contains(folded) == true { return }
        for reference in info.references {
            try Identifier.validateCollection(reference.targetCollection)
        }
        let wanted = Set(info.references.map { ReferenceRecord(collection: info.collection, reference: $0) })
        let stored = try storedReferences().filter { Identifier.folded($0.collection) == folded }
        if Set(stored) != wanted {
            let stale = stored.filter { !wanted.contains($0) }.map { StorageValue.text($0.id) }
            if !stale.isEmpty {
                _ = try deleteRecords(stale, from: ReferenceRecord.collectionName)
            }
            _ = try save(wanted.sorted { $0.id < $1.id })
            relations?.registry = nil
        }
        if relations == nil { relations = RelationState() }
        relations?.registered.insert(folded)
    }

    /// Removes the registry's references from `collection` (dropped).
    func unregisterReferences(from collection: String) throws {
        let folded = Identifier.folded(collection)
        let stale = try storedReferences().filter { Identifier.folded($0.collection) == folded }
        guard !stale.isEmpty else { return }
        _ = try deleteRecords(stale.map { .text($0.id) }, from: ReferenceRecord.collectionName)
        relations?.registry = nil
        relations?.registered.remove(folded)
    }

    /// The stored references whose target is `collection`.
    func references(targeting collection: String) throws -> [ReferenceRecord] {
        let folded = Identifier.folded(collection)
        return try storedReferences().filter { Identifier.folded($0.target) == folded }
    }

    // MARK: Saves

    /// Throws `.constraintViolation` when a non-null reference of `record` names no record of
    /// its target collection, as stored in this transaction (so a target saved earlier in it
    /// counts); a record referencing itself is allowed.
    func checkReferences(of record: [StorageValue], key: StorageValue, plan: WritePlan) throws {
        for slot in plan.referenceSlots {
            let value = record[slot.index]
            if value.isNull { continue }
            if Identifier.folded(slot.target) == plan.foldedCollection, value == key { continue }
            if try !exists(value, in: slot.target) {
                throw StorageError(
                    .constraintViolation,
                    "\(plan.info.typeName) references \(value) in column \(Identifier.quoted(slot.column)),"
                        + " but collection \(Identifier.quoted(slot.target)) has no record with that key",
                    collection: plan.info.collection,
                    column: slot.column,
                    key: key.isNull ? value : key
                )
            }
        }
    }

    /// The stored references from `collection` as slots of a record laid out as `columns`: for
    /// the untyped writes (dictionaries, CSV), which check them as a typed save does. Empty when
    /// the collection has none, or the store keeps no references at all.
    func referenceSlots(of collection: String, columns: [String]) throws -> [WritePlan.ReferenceSlot] {
        let folded = Identifier.folded(collection)
        return try storedReferences().filter { Identifier.folded($0.collection) == folded }.compactMap { rule in
            columns.firstIndex(of: rule.column).map {
                WritePlan.ReferenceSlot(index: $0, column: rule.column, target: rule.target)
            }
        }
    }

    /// `checkReferences(of:key:plan:)` for a record of an untyped write.
    func checkReferences(
        of record: [StorageValue],
        key: StorageValue,
        slots: [WritePlan.ReferenceSlot],
        in collection: String
    ) throws {
        let folded = Identifier.folded(collection)
        for slot in slots {
            let value = record[slot.index]
            if value.isNull { continue }
            if Identifier.folded(slot.target) == folded, value == key { continue }
            if try !exists(value, in: slot.target) {
                throw StorageError(
                    .constraintViolation,
                    "a record references \(value) in column \(Identifier.quoted(slot.column)), but collection"
                        + " \(Identifier.quoted(slot.target)) has no record with that key; nothing was written",
                    collection: collection,
                    column: slot.column,
                    key: key.isNull ? value : key
                )
            }
        }
    }

    /// Whether `collection` holds a record whose primary key is `key` (converted with the key
    /// column's affinity).
    func exists(_ key: StorageValue, in collection: String) throws -> Bool {
        guard let stored = try storedSchema(collection) else { return false }
        let plan = catalog.readPlan(for: stored)
        return try reader.get(stored.name, key: key.applyingAffinity(plan.keyType), columns: [stored.primaryKey]) {
            _ in
        }
    }

    // MARK: Deletes

    /// Deletes the records of `collection` whose keys are `keys` (stored keys, all present),
    /// with no rule applied: one statement per collection, the keys noted as a change.
    func deleteRecords(_ keys: [StorageValue], from collection: String) throws -> [StorageValue] {
        guard !keys.isEmpty, let stored = try storedSchema(collection) else { return [] }
        let deleted = try requireWriter().deleteAll(from: stored.name, where: .in(stored.primaryKey, keys))
        if !deleted.isEmpty {
            try unindexRecords(deleted, in: stored.name)
            noteChange(.delete(deleted), in: stored.name)
        }
        return deleted
    }

    /// The keys of `stored`'s records matching `predicate` (already checked: a request's).
    func keys(of stored: CollectionSchema, where predicate: StoragePredicate?) throws -> [StorageValue] {
        var keys: [StorageValue] = []
        try reader.scan(ScanRequest(collection: stored.name, columns: [stored.primaryKey], predicate: predicate)) {
            keys.append($0.value(at: 0))
            return true
        }
        return keys
    }

    /// Deletes `keys` of `stored` (present, as stored) and applies the delete rules of every
    /// reference to them, transitively: the records of a cascade are deleted in turn (a cycle
    /// ends where a record is already being deleted), a set-null column is emptied, and a
    /// restrict refuses the whole delete with `.constraintViolation` while a record that is not
    /// deleted references one that is. Nothing is written before every rule was checked.
    /// - Returns: the keys deleted from `stored` itself.
    func deleteApplyingReferences(_ keys: [StorageValue], of stored: CollectionSchema) throws -> [StorageValue] {
        var plan = DeletePlan()
        plan.add(keys, of: stored)
        var pending = [(stored, keys)]
        var restricted: [(ReferenceRecord, CollectionSchema, StorageValue, StorageValue)] = []
        var nulled: [(ReferenceRecord, CollectionSchema, StorageValue)] = []
        while let (target, targetKeys) = pending.popLast() {
            for rule in try references(targeting: target.name) {
                guard let referencing = try storedSchema(rule.collection),
                    referencing.column(named: rule.column)?.name == rule.column
                else { continue }
                let columnType = catalog.readPlan(for: referencing).types[rule.column] ?? .untyped
                let request = ScanRequest(
                    collection: referencing.name,
                    columns: [referencing.primaryKey, rule.column],
                    predicate: .in(rule.column, targetKeys.map { $0.applyingAffinity(columnType) })
                )
                var found: [(StorageValue, StorageValue)] = []
                try reader.scan(request) { row in
                    found.append((row.value(at: 0), row.value(at: 1)))
                    return true
                }
                switch rule.rule {
                case .cascade:
                    let added = plan.add(found.map(\.0), of: referencing)
                    if !added.isEmpty { pending.append((referencing, added)) }
                case .restrict:
                    restricted += found.map { (rule, referencing, $0.0, $0.1) }
                case .setNull:
                    nulled += found.map { (rule, referencing, $0.0) }
                }
            }
        }
        for (rule, referencing, key, value) in restricted where !plan.contains(key, of: referencing) {
            throw StorageError(
                .constraintViolation,
                "the record \(value) of \(Identifier.quoted(rule.target)) cannot be deleted: record \(key) of"
                    + " \(Identifier.quoted(referencing.name)) references it in column"
                    + " \(Identifier.quoted(rule.column)) (onDelete: .restrict); nothing was deleted",
                collection: referencing.name,
                column: rule.column,
                key: key
            )
        }
        var setNull: [String: (ReferenceRecord, CollectionSchema, [StorageValue])] = [:]
        for (rule, referencing, key) in nulled where !plan.contains(key, of: referencing) {
            setNull[rule.id, default: (rule, referencing, [])].2.append(key)
        }
        for (_, (rule, referencing, keys)) in setNull.sorted(by: { $0.key < $1.key }) {
            _ = try update(
                in: referencing.name,
                set: [rule.column: .null],
                where: .in(referencing.primaryKey, keys),
                observed: true
            )
        }
        var deletedHere: [StorageValue] = []
        for (schema, keys) in plan.collections {
            let deleted = try deleteRecords(keys, from: schema.name)
            if Identifier.folded(schema.name) == Identifier.folded(stored.name) { deletedHere = deleted }
        }
        return deletedHere
    }
}

/// The records a delete removes, by collection, in the order they were found.
struct DeletePlan {
    private var order: [String] = []
    private var schemas: [String: CollectionSchema] = [:]
    private var keys: [String: [StorageValue]] = [:]
    private var seen: [String: Set<StorageValue>] = [:]

    /// Adds `new` keys of `schema`'s collection; returns those not already in the plan.
    @discardableResult
    mutating func add(_ new: [StorageValue], of schema: CollectionSchema) -> [StorageValue] {
        let folded = Identifier.folded(schema.name)
        if schemas[folded] == nil {
            order.append(folded)
            schemas[folded] = schema
        }
        var added: [StorageValue] = []
        for key in new where seen[folded, default: []].insert(key).inserted {
            added.append(key)
        }
        keys[folded, default: []] += added
        return added
    }

    func contains(_ key: StorageValue, of schema: CollectionSchema) -> Bool {
        seen[Identifier.folded(schema.name)]?.contains(key) == true
    }

    /// Each collection with its keys, in the order the collections were reached.
    var collections: [(CollectionSchema, [StorageValue])] {
        order.map { (schemas[$0]!, keys[$0] ?? []) }
    }
}
