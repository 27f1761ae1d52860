import Foundation

/// The schema changes of a ``MigrationContext``: checked here, then done in place by a backend
/// transaction that adopts ``SchemaAlteringWriteTransaction``, or else by copying the
/// collection's records into the changed collection.
extension Session {
    /// Forgets what this session prepared for `collection` (any spelling): its schema changed.
    func forgetPrepared(_ collection: String) {
        let folded = Identifier.folded(collection)
        for name in prepared.keys where Identifier.folded(name) == folded { prepared[name] = nil }
    }

    /// The stored schema of `collection`, which must exist.
    private func requireStored(_ collection: String) throws -> CollectionSchema {
        try Identifier.validateCollection(collection)
        guard let stored = try storedSchema(collection) else {
            throw StorageError(
                .schemaMismatch,
                "there is no collection \(Identifier.quoted(collection)) to change",
                collection: collection
            )
        }
        return stored
    }

    /// The stored spelling of `column` in `stored`, which must be a column other than the key.
    private func requireColumn(_ column: String, of stored: CollectionSchema, doing change: String) throws -> String {
        let folded = Identifier.folded(column)
        guard let found = stored.columns.first(where: { Identifier.folded($0.name) == folded }) else {
            throw StorageError(
                .unknownColumn,
                "no column \(Identifier.quoted(column)) to \(change)",
                collection: stored.name,
                column: column
            )
        }
        guard found.name != stored.primaryKey else {
            throw StorageError(
                .schemaMismatch,
                "the primary key \(Identifier.quoted(found.name)) cannot be \(change == "drop" ? "dropped" : "renamed")",
                collection: stored.name,
                column: found.name
            )
        }
        return found.name
    }

    /// `index` with its columns spelt as `stored` spells them.
    private func resolve(_ index: IndexDefinition, in stored: CollectionSchema) throws -> IndexDefinition {
        let columns = try index.columns.map { column -> String in
            let folded = Identifier.folded(column)
            guard let found = stored.columns.first(where: { Identifier.folded($0.name) == folded }) else {
                throw StorageError(
                    .unknownColumn,
                    "an index names \(Identifier.quoted(column)), which the collection has not",
                    collection: stored.name,
                    column: column
                )
            }
            return found.name
        }
        guard !columns.isEmpty else {
            throw StorageError(.schemaMismatch, "an index needs at least one column", collection: stored.name)
        }
        var resolved = index
        resolved.columns = columns
        return resolved
    }

    func renameColumn(_ column: String, to newName: String, in collection: String) throws {
        let stored = try requireStored(collection)
        let old = try requireColumn(column, of: stored, doing: "rename")
        try Identifier.validateColumn(newName, in: stored.name)
        if newName == old { return }
        let folded = Identifier.folded(newName)
        if let clash = stored.columns.first(where: { $0.name != old && Identifier.folded($0.name) == folded }) {
            throw StorageError(
                .schemaMismatch,
                "cannot rename \(Identifier.quoted(old)) to \(Identifier.quoted(newName)): the collection has a column"
                    + " \(Identifier.quoted(clash.name))",
                collection: stored.name,
                column: newName
            )
        }
        var target = stored
        for position in target.columns.indices where target.columns[position].name == old {
            target.columns[position].name = newName
        }
        target.indexes = stored.indexes.map { index in
            var renamed = index
            renamed.columns = index.columns.map { $0 == old ? newName : $0 }
            return renamed
        }
        try rewriteReferences { rule in
            guard Identifier.folded(rule.collection) == Identifier.folded(stored.name), rule.column == old else {
                return rule
            }
            return ReferenceRecord(collection: rule.collection, column: newName, target: rule.target, rule: rule.rule)
        }
        let search = try searchEntry(stored.name)
        if let altering = try requireWriter() as? any SchemaAlteringWriteTransaction,
            try altering.renameColumn(old, to: newName, in: stored.name) != nil
        {
            forgetPrepared(stored.name)
        } else {
            try copyRecords(of: stored, into: target, reading: stored.columns.map(\.name))
        }
        try follow(search, from: stored.name, to: stored.name) { $0 == old ? newName : $0 }
    }

    func dropColumn(_ column: String, from collection: String) throws {
        let stored = try requireStored(collection)
        let name = try requireColumn(column, of: stored, doing: "drop")
        var target = stored
        target.columns.removeAll { $0.name == name }
        target.indexes.removeAll { $0.columns.contains(name) }
        try rewriteReferences { rule in
            Identifier.folded(rule.collection) == Identifier.folded(stored.name) && rule.column == name ? nil : rule
        }
        let search = try searchEntry(stored.name)
        if let altering = try requireWriter() as? any SchemaAlteringWriteTransaction,
            try altering.dropColumn(name, from: stored.name) != nil
        {
            forgetPrepared(stored.name)
        } else {
            try copyRecords(of: stored, into: target, reading: target.columns.map(\.name))
        }
        try follow(search, from: stored.name, to: stored.name) { $0 == name ? nil : $0 }
    }

    func renameCollection(_ collection: String, to newName: String) throws {
        let stored = try requireStored(collection)
        try Identifier.validateCollection(newName)
        if newName == stored.name { return }
        if Identifier.folded(newName) != Identifier.folded(stored.name), let clash = try storedSchema(newName) {
            throw StorageError(
                .schemaMismatch,
                "cannot rename \(Identifier.quoted(stored.name)) to \(Identifier.quoted(newName)): the store has a"
                    + " collection \(Identifier.quoted(clash.name))",
                collection: newName
            )
        }
        var target = stored
        target.name = newName
        let folded = Identifier.folded(stored.name)
        try rewriteReferences { rule in
            let from = Identifier.folded(rule.collection) == folded ? newName : rule.collection
            let to = Identifier.folded(rule.target) == folded ? newName : rule.target
            return ReferenceRecord(collection: from, column: rule.column, target: to, rule: rule.rule)
        }
        let search = try searchEntry(stored.name)
        if let altering = try requireWriter() as? any SchemaAlteringWriteTransaction,
            try altering.renameCollection(stored.name, to: newName) != nil
        {
            forgetPrepared(stored.name)
            forgetPrepared(newName)
        } else {
            try copyRecords(of: stored, into: target, reading: stored.columns.map(\.name))
        }
        try follow(search, from: stored.name, to: newName) { $0 }
    }

    /// Moves the full-text index `search` (of `collection`, before a schema change) to what the
    /// change made: `newCollection`'s, over the fields `field` maps the old ones to (nil: gone),
    /// rebuilt from the records as they are now; none when no field is left.
    private func follow(
        _ search: SearchIndexEntry?,
        from collection: String,
        to newCollection: String,
        fields field: (String) -> String?
    ) throws {
        guard let search else { return }
        let fields = search.fields.compactMap(field)
        try dropSearchIndex(of: collection)
        if !fields.isEmpty { try rebuildSearchIndex(of: newCollection, fields: fields) }
    }

    func addIndex(_ index: IndexDefinition, to collection: String) throws -> Bool {
        let stored = try requireStored(collection)
        let resolved = try resolve(index, in: stored)
        if stored.indexes.contains(resolved) { return false }
        var target = stored
        target.indexes.append(resolved)
        _ = try prepare(target)
        return true
    }

    func dropIndex(_ index: IndexDefinition, from collection: String) throws -> Bool {
        let stored = try requireStored(collection)
        let resolved = try resolve(index, in: stored)
        guard stored.indexes.contains(resolved) else { return false }
        if let altering = try requireWriter() as? any SchemaAlteringWriteTransaction,
            try altering.dropIndex(resolved, from: stored.name) != nil
        {
            forgetPrepared(stored.name)
            return true
        }
        var target = stored
        target.indexes.removeAll { $0 == resolved }
        try copyRecords(of: stored, into: target, reading: stored.columns.map(\.name))
        return true
    }

    func addReference(_ reference: Reference, to collection: String) throws -> Bool {
        let stored = try requireStored(collection)
        let folded = Identifier.folded(reference.column)
        guard let column = stored.columns.first(where: { Identifier.folded($0.name) == folded })?.name else {
            throw StorageError(
                .unknownColumn,
                "no column \(Identifier.quoted(reference.column)) to make a reference",
                collection: stored.name,
                column: reference.column
            )
        }
        try Identifier.validateCollection(reference.targetCollection)
        let record = ReferenceRecord(
            collection: stored.name,
            column: column,
            target: reference.targetCollection,
            rule: reference.onDelete
        )
        let registry = try storedReferences()
        if registry.contains(record) { return false }
        // Every value stored in the column must name a record of the target already: read them
        // all first (a read inside a scan is not allowed on every engine), then look each up.
        var values: [(key: StorageValue, value: StorageValue)] = []
        var seen: Set<StorageValue> = []
        try reader.scan(ScanRequest(collection: stored.name, columns: [stored.primaryKey, column])) { row in
            let value = row.value(at: 1)
            if !value.isNull, seen.insert(value).inserted { values.append((row.value(at: 0), value)) }
            return true
        }
        let toItself = Identifier.folded(reference.targetCollection) == Identifier.folded(stored.name)
        for (key, value) in values where !(toItself && key == value) {
            if try !exists(value, in: reference.targetCollection) {
                throw StorageError(
                    .constraintViolation,
                    "cannot add the reference: the record \(key) holds \(value) in column"
                        + " \(Identifier.quoted(column)), but collection"
                        + " \(Identifier.quoted(reference.targetCollection)) has no record with that key",
                    collection: stored.name,
                    column: column,
                    key: key
                )
            }
        }
        try rewriteReferences { $0.id == record.id ? nil : $0 }
        _ = try save([record])
        if !stored.indexes.contains(where: { $0.columns.first == column && $0.path.isEmpty }) {
            _ = try addIndex(IndexDefinition([column]), to: stored.name)
        }
        return true
    }

    /// Rewrites the store's reference registry: each stored reference becomes what `change`
    /// makes of it (nil: removed), in this transaction. The session reads the registry again
    /// afterwards, and checks each model's references again on its next save.
    private func rewriteReferences(_ change: (ReferenceRecord) throws -> ReferenceRecord?) throws {
        let registry = try storedReferences()
        var stale: [StorageValue] = []
        var written: [ReferenceRecord] = []
        for rule in registry {
            let changed = try change(rule)
            if changed == rule { continue }
            stale.append(.text(rule.id))
            if let changed { written.append(changed) }
        }
        guard !stale.isEmpty else { return }
        _ = try deleteRecords(stale, from: ReferenceRecord.collectionName)
        if !written.isEmpty { _ = try save(written) }
        relations = nil
    }

    /// The generic path of a schema change: reads every record of `stored` (the columns
    /// `reading`, one per column of `target`), removes the collection, makes `target` and writes
    /// the records into it, carrying the auto-key sequence over. Every record is held in memory
    /// once; the cost is a full read and a full write of the collection and its indexes.
    private func copyRecords(of stored: CollectionSchema, into target: CollectionSchema, reading: [String]) throws {
        let writer = try requireWriter()
        var records: [[StorageValue]] = []
        try reader.scan(ScanRequest(collection: stored.name, columns: reading)) { row in
            records.append((0..<reading.count).map { row.value(at: $0) })
            return true
        }
        let next = stored.hasAutoKey ? try reader.nextAutoKey(in: stored.name) : nil
        let sameName = Identifier.folded(stored.name) == Identifier.folded(target.name)
        if sameName {
            try writer.dropCollection(stored.name)
            forgetPrepared(stored.name)
        }
        _ = try writer.prepareCollection(target)
        let put = try writer.makeWriter(for: target.name, columns: target.columns.map(\.name))
        try put.expectRecords(records.count)
        for record in records {
            try put.put(record)
        }
        if let next { try writer.raiseNextAutoKey(in: target.name, to: next) }
        if !sameName {
            try writer.dropCollection(stored.name)
            forgetPrepared(stored.name)
        }
        forgetPrepared(target.name)
    }

    func transform<Old: Decodable, New: Encodable>(
        _ old: Old.Type,
        to new: New.Type,
        _ body: (Old) throws -> New
    ) throws -> Int {
        let oldCollection = try catalog.info(for: Old.self).collection
        guard let stored = try storedSchema(oldCollection) else { return 0 }
        var converted: [New] = []
        converted.reserveCapacity(try count(in: stored.name, where: nil))
        try scan(Old.self, where: nil, orderBy: [], limit: nil) { value in
            converted.append(try body(value))
            return true
        }
        let newCollection = try catalog.info(for: New.self).collection
        let sameName = Identifier.folded(newCollection) == Identifier.folded(stored.name)
        let referencing = try references(targeting: stored.name)
        if stored.hasAutoKey, let rule = referencing.first {
            throw StorageError(
                .schemaMismatch,
                "cannot transform collection \(Identifier.quoted(stored.name)): its keys are assigned by the store, so"
                    + " its records would get new keys, and column \(Identifier.quoted(rule.column)) of"
                    + " \(Identifier.quoted(rule.collection)) references them",
                collection: stored.name
            )
        }
        let next = stored.hasAutoKey ? try reader.nextAutoKey(in: stored.name) : nil
        // Not `drop(collection:)`: the records are replaced, not deleted, so no delete rule
        // applies to the collections that reference them.
        let writer = try requireWriter()
        let removed = try writer.deleteAll(from: stored.name, where: nil)
        // The new records are indexed as `New` declares, when saved.
        try dropSearchIndex(of: stored.name)
        try writer.dropCollection(stored.name)
        forgetPrepared(stored.name)
        if !removed.isEmpty { noteChange(.delete(removed), in: stored.name) }
        let folded = Identifier.folded(stored.name)
        try rewriteReferences { rule in
            // The old type's references go (the new one registers its own when saved); the ones
            // to the collection follow its records.
            if Identifier.folded(rule.collection) == folded { return nil }
            guard Identifier.folded(rule.target) == folded else { return rule }
            return ReferenceRecord(
                collection: rule.collection,
                column: rule.column,
                target: newCollection,
                rule: rule.rule
            )
        }
        _ = try save(converted)
        guard sameName, let made = try storedSchema(newCollection) else { return converted.count }
        if let next, made.hasAutoKey { try writer.raiseNextAutoKey(in: made.name, to: next) }
        // The indexes added to the old collection (by a migration) that the new records can hold.
        let kept = stored.indexes.filter { index in
            !made.indexes.contains(index) && index.columns.allSatisfy { made.column(named: $0) != nil }
        }
        if !kept.isEmpty {
            var target = made
            target.indexes += kept
            _ = try prepare(target)
        }
        return converted.count
    }
}
