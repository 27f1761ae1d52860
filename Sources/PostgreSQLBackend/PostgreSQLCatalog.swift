import Foundation
import Storage

/// The store's catalog: a table `storage$catalog` in the store's schema with one row per
/// collection, holding the schema as declared (names in their declared spelling, the declared
/// column types, the primary key and the indexes). PostgreSQL's own catalog knows only the
/// folded identifiers and its own types.
struct PostgreSQLCatalog {
    /// The quoted PostgreSQL schema the store lives in.
    let schemaName: String
    /// The advisory lock writers hold shared and listener changes exclusively
    /// (`PostgreSQLChangeFeed.observeLockKey(for:)`).
    let observeLockKey: Int64
    /// The advisory lock that orders the change rows (`PostgreSQLChangeFeed.lockKey(for:)`).
    let changeLockKey: Int64
    /// The store's notification channel (`PostgreSQLChangeFeed.channel(for:)`).
    let channel: String

    /// The catalog of the store in `schema` (as configured, not quoted).
    init(schema: String) {
        schemaName = PostgreSQLIdentifier.quote(schema)
        observeLockKey = PostgreSQLChangeFeed.observeLockKey(for: schema)
        changeLockKey = PostgreSQLChangeFeed.lockKey(for: schema)
        channel = PostgreSQLChangeFeed.channel(for: schema)
    }

    var table: String { schemaName + "." + PostgreSQLIdentifier.quote("storage$catalog") }

    /// The table of committed changes other processes read (see `PostgreSQLChangeFeed`).
    var changesTable: String { schemaName + "." + PostgreSQLIdentifier.quote("storage$changes") }

    /// The listeners of the change table: how far each has read, and when it last said so (see
    /// `PostgreSQLChangeFeed`).
    var listenersTable: String { schemaName + "." + PostgreSQLIdentifier.quote("storage$listeners") }

    /// The sequence whose value is the number of rows of `listenersTable`, as last counted under
    /// the observer lock (see `PostgreSQLChangeFeed`): a writer reads it as it is now, not as of
    /// its snapshot, and records its changes only when it is not zero.
    var observedSequence: String { schemaName + "." + PostgreSQLIdentifier.quote("storage$observed") }

    /// The statements that create the store's schema, catalog, change table, listener table and
    /// listener count when missing (a store made before one of them existed gains it).
    var creationSQL: String {
        "CREATE SCHEMA IF NOT EXISTS " + schemaName + "; CREATE TABLE IF NOT EXISTS " + table
            + " (folded text COLLATE \"C\" PRIMARY KEY, definition text NOT NULL); CREATE TABLE IF NOT EXISTS "
            + changesTable + " (id bigserial PRIMARY KEY, tx bigint NOT NULL DEFAULT txid_current(),"
            + " origin text NOT NULL, collection text NOT NULL, upserted text NOT NULL, deleted text NOT NULL);"
            + " CREATE TABLE IF NOT EXISTS " + listenersTable
            + " (origin text COLLATE \"C\" PRIMARY KEY, last_seen bigint NOT NULL, seen_at timestamptz NOT NULL);"
            + " CREATE SEQUENCE IF NOT EXISTS " + observedSequence + " MINVALUE 0 START 0"
    }

    /// The qualified, quoted table of `collection`.
    func table(of collection: String) -> String {
        schemaName + "." + PostgreSQLIdentifier.quoted(collection)
    }

    /// The qualified, quoted key sequence of an auto-keyed `collection`.
    func keySequence(of collection: String) -> String {
        schemaName + "." + PostgreSQLIdentifier.quoted(collection, suffix: "$key")
    }

    /// A collection's definition and its stamp (see `stampSQL(parameter:)`).
    var selectSQL: String {
        "SELECT definition, xmin::text::int8 FROM " + table + " WHERE folded = $1::text"
    }

    /// Writes a collection's definition and returns the row's new stamp.
    var upsertSQL: String {
        "INSERT INTO " + table + " (folded, definition) VALUES ($1::text, $2::text)"
            + " ON CONFLICT (folded) DO UPDATE SET definition = excluded.definition RETURNING xmin::text::int8"
    }

    /// A scalar subquery giving the stamp of the collection whose folded name is parameter
    /// `parameter`: the id of the transaction that last wrote its catalog row (`xmin`), or null
    /// when there is none. Every change of a collection's schema, by any process, rewrites that
    /// row in the same transaction, so a statement that reads records and this stamp together
    /// (one snapshot) knows whether the schema it was compiled from is still the stored one. A
    /// row version's `xmin` is never given to another version of the row (freezing keeps it).
    func stampSQL(parameter: Int) -> String {
        "(SELECT xmin::text::int8 FROM " + table + " WHERE folded = $\(parameter)::text)"
    }

    /// `schema` as catalog text.
    static func encode(_ schema: CollectionSchema) -> String {
        let object: [String: Any] = [
            "name": schema.name,
            "primaryKey": schema.primaryKey,
            "columns": schema.columns.map { ["name": $0.name, "type": $0.type.rawValue, "nullable": $0.isNullable] },
            "indexes": schema.indexes.map { ["columns": $0.columns, "unique": $0.isUnique] as [String: Any] },
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The schema in catalog text.
    /// - Throws: `StorageError` with code `.corrupt` when the text is not a schema.
    static func decode(_ text: String, collection: String) throws -> CollectionSchema {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let name = object["name"] as? String, let primaryKey = object["primaryKey"] as? String,
            let columns = object["columns"] as? [[String: Any]], let indexes = object["indexes"] as? [[String: Any]]
        else {
            throw StorageError(.corrupt, "the store's catalog entry is damaged", collection: collection)
        }
        var schema = CollectionSchema(name: name, columns: [], primaryKey: primaryKey)
        for column in columns {
            guard let name = column["name"] as? String, let type = (column["type"] as? String).flatMap(ColumnType.init)
            else { throw StorageError(.corrupt, "the store's catalog entry is damaged", collection: collection) }
            schema.columns.append(
                ColumnDefinition(name: name, type: type, isNullable: column["nullable"] as? Bool ?? true)
            )
        }
        for index in indexes {
            guard let columns = index["columns"] as? [String] else {
                throw StorageError(.corrupt, "the store's catalog entry is damaged", collection: collection)
            }
            schema.indexes.append(IndexDefinition(columns, unique: index["unique"] as? Bool ?? false))
        }
        return schema
    }

    /// The DDL that turns the stored `current` (nil: no table yet) into `target`.
    func migration(from current: CollectionSchema?, to target: CollectionSchema) -> [String] {
        let table = table(of: target.name)
        var statements: [String] = []
        func columnSQL(_ column: ColumnDefinition) -> String {
            var sql = PostgreSQLIdentifier.quoted(column.name) + " "
            switch column.type {
            case .integer: sql += "bigint"
            case .real: sql += "double precision"
            case .text, .untyped: sql += "text COLLATE \"C\""
            case .blob: sql += "bytea"
            }
            return sql
        }
        if let current {
            for column in target.columns {
                guard let existing = current.column(named: column.name) else {
                    statements.append("ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS " + columnSQL(column))
                    continue
                }
                guard existing.type != column.type else { continue }
                let identifier = PostgreSQLIdentifier.quoted(column.name)
                let type = columnSQL(column).dropFirst(identifier.count + 1)
                let storedAsText = existing.type == .untyped || existing.type == .text
                if storedAsText && (column.type == .text || column.type == .untyped) { continue }
                statements.append(
                    "ALTER TABLE " + table + " ALTER COLUMN " + identifier + " TYPE " + type + " USING " + identifier
                        + "::" + PostgreSQLType.sqlName(of: column.type)
                )
            }
        } else {
            if target.hasAutoKey {
                statements.append("CREATE SEQUENCE IF NOT EXISTS " + keySequence(of: target.name))
            }
            let columns = target.columns.map(columnSQL)
            statements.append(
                "CREATE TABLE IF NOT EXISTS " + table + " (" + columns.joined(separator: ", ") + ", PRIMARY KEY ("
                    + PostgreSQLIdentifier.quoted(target.primaryKey) + "))"
            )
        }
        for index in target.indexes where !(current?.indexes.contains(index) ?? false) {
            statements.append(
                "CREATE " + (index.isUnique ? "UNIQUE " : "") + "INDEX IF NOT EXISTS "
                    + PostgreSQLIdentifier.indexName(index, in: target.name) + " ON " + table + " ("
                    + index.columns.map { PostgreSQLIdentifier.quoted($0) }.joined(separator: ", ") + ")"
            )
        }
        return statements
    }
}
