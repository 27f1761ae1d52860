internal import CPostgreSQL
import Foundation
import Storage

/// What a writer of one layout needs: the column definitions, the key's position and its
/// statements. Made once per cached schema and layout (see `PostgreSQLSchemaCache`), not per
/// transaction.
final class PostgreSQLWriterPlan: Sendable {
    let collection: String
    /// `collection` folded (`Identifier.folded`), made once for the change set's records.
    let folded: String
    let columns: [ColumnDefinition]
    let keyIndex: Int
    let hasAutoKey: Bool
    /// `COPY <table> (<columns>) FROM STDIN (FORMAT binary)`.
    let directCopySQL: String
    /// The statements that create the staging table when missing and empty it.
    let stagingSQL: String
    /// `COPY <staging table> FROM STDIN (FORMAT binary)`.
    let stagingCopySQL: String
    /// The merge of the staging table into the collection's table.
    let mergeSQL: String
    /// The upsert of one record, its values as parameters: a batch of one needs no `COPY`.
    let upsertOneSQL: String
    /// The upsert of one record and its change record in one statement (see
    /// `PostgreSQLChangeFeed.saveOneSQL`): a transaction of one saved record, run on its own.
    let saveOneSQL: String
    /// The upsert of one record checked for listeners (see
    /// `PostgreSQLChangeFeed.saveOneUnobservedSQL`), for when no store listened at the last save;
    /// `nil` for a collection of the key alone.
    let saveOneUnobservedSQL: String?
    /// `saveOneSQL` and `saveOneUnobservedSQL` that also check that the store has no registry
    /// of full-text indexes, and that the registry has no record of the collection
    /// (`PostgreSQLSearchRegistryAppeared.Check`), for a transaction that answered so from the
    /// cache.
    let noRegistrySaveOneSQL: String
    let noRegistrySaveOneUnobservedSQL: String?
    let unindexedSaveOneSQL: String
    let unindexedSaveOneUnobservedSQL: String?

    /// - Throws: `.unknownColumn` for a column the schema lacks, `.invalidKey` when `columns`
    ///   lacks the primary key.
    init(
        catalog: PostgreSQLCatalog,
        schema: CollectionSchema,
        collection: String,
        columns: [String]
    ) throws {
        self.collection = collection
        folded = Identifier.folded(collection)
        let compiler = PostgreSQLQueryCompiler(schema: schema)
        self.columns = try columns.map { name in
            guard let definition = compiler.definition(of: name) else {
                throw StorageError(
                    .unknownColumn,
                    "the collection has no column \(Identifier.quoted(name))",
                    collection: collection,
                    column: name
                )
            }
            return definition
        }
        guard
            let keyIndex = columns.firstIndex(where: { Identifier.folded($0) == Identifier.folded(schema.primaryKey) })
        else {
            throw StorageError(
                .invalidKey,
                "a writer's columns must include the primary key \(Identifier.quoted(schema.primaryKey))",
                collection: collection,
                column: schema.primaryKey
            )
        }
        self.keyIndex = keyIndex
        hasAutoKey = schema.hasAutoKey
        let table = catalog.table(of: collection)
        let quoted = self.columns.map { PostgreSQLIdentifier.quoted($0.name) }
        directCopySQL = "COPY " + table + " (" + quoted.joined(separator: ", ") + ") FROM STDIN (FORMAT binary)"
        // The staging table's name and columns come from the column types only: no name of the
        // collection's reaches it.
        let types = self.columns.map { PostgreSQLType.sqlName(of: $0.type) }
        let staging =
            "pg_temp."
            + PostgreSQLIdentifier.quote("storage$stage_" + PostgreSQLIdentifier.hash(types.joined(separator: ",")))
        let stagingColumns = types.indices.map { "c\($0 + 1)" }
        stagingSQL =
            "CREATE TEMPORARY TABLE IF NOT EXISTS " + staging + " ("
            + zip(stagingColumns, types).map { $0 + " " + $1 }.joined(separator: ", ") + "); TRUNCATE " + staging
        stagingCopySQL = "COPY " + staging + " FROM STDIN (FORMAT binary)"
        // Columns the writer does not name keep their values, as in every backend.
        let updates = quoted.enumerated().compactMap { offset, column in
            offset == keyIndex ? nil : column + " = excluded." + column
        }
        let conflict =
            " ON CONFLICT (" + quoted[keyIndex] + ") "
            + (updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + updates.joined(separator: ", "))
        mergeSQL =
            "INSERT INTO " + table + " (" + quoted.joined(separator: ", ") + ") SELECT "
            + stagingColumns.joined(separator: ", ") + " FROM " + staging + conflict
        let placeholders = types.enumerated().map { "$\($0.offset + 1)::" + $0.element }
        let upsert =
            "INSERT INTO " + table + " (" + quoted.joined(separator: ", ") + ") VALUES ("
            + placeholders.joined(separator: ", ") + ")" + conflict
        upsertOneSQL = upsert
        // The single save's statement, observed and not, with the check of `checked` (a
        // condition on the store's full-text registry, or none).
        let saveOne = { (checked: String?) in
            (
                observed: PostgreSQLChangeFeed.saveOneSQL(
                    catalog,
                    upsert: upsert,
                    parameters: types.count,
                    checked: checked
                ),
                unobserved: PostgreSQLChangeFeed.saveOneUnobservedSQL(
                    catalog,
                    upsert: upsert,
                    returnsRow: !updates.isEmpty,
                    checked: checked
                )
            )
        }
        (saveOneSQL, saveOneUnobservedSQL) = saveOne(nil)
        (noRegistrySaveOneSQL, noRegistrySaveOneUnobservedSQL) = saveOne(
            PostgreSQLSearchRegistryAppeared.noRegistryCondition(catalog)
        )
        (unindexedSaveOneSQL, unindexedSaveOneUnobservedSQL) = saveOne(
            PostgreSQLSearchRegistryAppeared.unindexedCondition(catalog, folded: folded)
        )
    }

}
