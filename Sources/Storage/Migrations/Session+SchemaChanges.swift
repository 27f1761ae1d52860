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
        return IndexDefinition(columns, unique: index.isUnique)
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
            IndexDefinition(index.columns.map { $0 == old ? newName : $0 }, unique: index.isUnique)
        }
        if let altering = try requireWriter() as? any SchemaAlteringWriteTransaction,
            try altering.renameColumn(old, to: newName, in: stored.name) != nil
        {
            forgetPrepared(stored.name)
            return
        }
        try copyRecords(of: stored, into: target, reading: stored.columns.map(\.name))
    }

    func dropColumn(_ column: String, from collection: String) throws {
        let stored = try requireStored(collection)
        let name = try requireColumn(column, of: stored, doing: "drop")
        var target = stored
        target.columns.removeAll { $0.name == name }
        target.indexes.removeAll { $0.columns.contains(name) }
        if let altering = try requireWriter() as? any SchemaAlteringWriteTransaction,
            try altering.dropColumn(name, from: stored.name) != nil
        {
            forgetPrepared(stored.name)
            return
        }
        try copyRecords(of: stored, into: target, reading: target.columns.map(\.name))
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
        if let altering = try requireWriter() as? any SchemaAlteringWriteTransaction,
            try altering.renameCollection(stored.name, to: newName) != nil
        {
            forgetPrepared(stored.name)
            forgetPrepared(newName)
            return
        }
        try copyRecords(of: stored, into: target, reading: stored.columns.map(\.name))
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
        let next = stored.hasAutoKey ? try reader.nextAutoKey(in: stored.name) : nil
        _ = try drop(collection: stored.name)
        _ = try save(converted)
        guard sameName, let made = try storedSchema(newCollection) else { return converted.count }
        let writer = try requireWriter()
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
