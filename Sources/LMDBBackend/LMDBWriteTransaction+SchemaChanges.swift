internal import CLMDB
import Storage

/// Schema changes as catalog changes: a record holds its values by field id, never by name
/// (`LMDBCollection.Field`), and an index its entries in a database of its own, so renaming a
/// column rewrites one metadata entry whatever the size of the collection, dropping a column
/// removes its field from the catalog (its values stay in the records, unread, until each record
/// is next written: disk space, not time), and dropping an index empties its database. Renaming a
/// collection is left to the copy: its databases are named after its name, which a collection
/// made later under the old name would take again.
extension LMDBWriteTransaction: SchemaAlteringWriteTransaction {
    func renameColumn(_ column: String, to newName: String, in collection: String) throws -> CollectionSchema? {
        try checkActive()
        guard var stored = try info(of: collection)?.collection,
            let position = stored.fields.firstIndex(where: { $0.name == column })
        else { return nil }
        stored.fields[position].name = newName
        for index in stored.indexes.indices {
            stored.indexes[index].columns = stored.indexes[index].columns.map { $0 == column ? newName : $0 }
        }
        try save(stored)
        return stored.schema
    }

    func dropColumn(_ column: String, from collection: String) throws -> CollectionSchema? {
        try checkActive()
        guard var stored = try info(of: collection)?.collection,
            stored.fields.contains(where: { $0.name == column })
        else { return nil }
        for index in stored.indexes where index.columns.contains(column) {
            try emptyDatabase(index.database, collection: stored.name)
        }
        stored.indexes.removeAll { $0.columns.contains(column) }
        stored.fields.removeAll { $0.name == column }
        try save(stored)
        return stored.schema
    }

    func renameCollection(_ collection: String, to newName: String) throws -> CollectionSchema? {
        nil
    }

    func dropIndex(_ index: IndexDefinition, from collection: String) throws -> CollectionSchema? {
        try checkActive()
        guard var stored = try info(of: collection)?.collection else { return nil }
        for found in stored.indexes where found.columns == index.columns && found.isUnique == index.isUnique {
            try emptyDatabase(found.database, collection: stored.name)
        }
        stored.indexes.removeAll { $0.columns == index.columns && $0.isUnique == index.isUnique }
        try save(stored)
        return stored.schema
    }

    /// Empties a database rather than deleting it: deleting closes its handle, which other
    /// transactions of the process share (as `dropCollection` does).
    private func emptyDatabase(_ database: String, collection: String) throws {
        let dbi = try handle(database, collection: collection)
        try check(mdb_drop(txn, dbi, 0), "cannot empty a database", collection: collection)
    }
}
