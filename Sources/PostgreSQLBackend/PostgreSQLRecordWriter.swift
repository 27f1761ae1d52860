internal import CPostgreSQL
import Storage

/// Inserts or replaces records of one layout. Records are buffered and sent in batches as one
/// `INSERT ... SELECT FROM unnest($1::int8[], ...) ON CONFLICT (key) DO UPDATE` each: one round
/// trip per batch, not per record, with the values in PostgreSQL's binary array format.
final class PostgreSQLRecordWriter: RecordWriter {
    private unowned let transaction: PostgreSQLWriteTransaction
    private let collection: String
    private let columns: [ColumnDefinition]
    private let keyIndex: Int
    private let hasAutoKey: Bool
    private let sql: String
    /// The buffered records, column by column.
    private var buffer: [[StorageValue]]
    /// Where each buffered key is, so that a key saved twice in a batch is sent once (its last
    /// values), as an upsert of one statement may not touch a row twice.
    private var bufferedKeys: [StorageValue: Int] = [:]
    /// Auto-assigned keys taken from the sequence and not used yet.
    private var spareKeys: [Int64] = []
    private var nextAllocation = 1

    init(
        transaction: PostgreSQLWriteTransaction,
        schema: CollectionSchema,
        collection: String,
        columns: [String]
    ) throws {
        self.transaction = transaction
        self.collection = collection
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
        buffer = Array(repeating: [], count: columns.count)
        let quoted = self.columns.map { PostgreSQLIdentifier.quoted($0.name) }
        let arrays = self.columns.enumerated().map { index, column in
            "$\(index + 1)::" + PostgreSQLType.sqlName(of: column.type) + "[]"
        }
        var sql = "INSERT INTO " + transaction.catalog.table(of: collection) + " (" + quoted.joined(separator: ", ")
        sql += ") SELECT * FROM unnest(" + arrays.joined(separator: ", ") + ") ON CONFLICT (" + quoted[keyIndex] + ") "
        // Columns the writer does not name keep their values, as in every backend.
        let updates = quoted.enumerated().compactMap { offset, column in
            offset == keyIndex ? nil : column + " = excluded." + column
        }
        sql += updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + updates.joined(separator: ", ")
        self.sql = sql
    }

    @discardableResult
    func put(_ values: [StorageValue]) throws -> StorageValue {
        try transaction.checkActive()
        guard values.count == columns.count else {
            throw StorageError(
                .schemaMismatch,
                "a record has \(values.count) values for \(columns.count) columns",
                collection: collection
            )
        }
        var key = values[keyIndex]
        if key.isNull {
            guard hasAutoKey else {
                throw StorageError(.invalidKey, "a record's primary key is null", collection: collection, key: key)
            }
            key = .integer(try nextKey())
        } else if hasAutoKey, case .integer(let given) = key {
            try advanceSequence(past: given)
        }
        var record = values
        record[keyIndex] = key
        for (index, column) in columns.enumerated() {
            record[index] = try fit(record[index], column, key: key)
        }
        if let position = bufferedKeys[key] {
            for index in record.indices { buffer[index][position] = record[index] }
        } else {
            bufferedKeys[key] = buffer[0].count
            for index in record.indices { buffer[index].append(record[index]) }
        }
        transaction.changes.record(collection, [key], deleted: false)
        if buffer[0].count >= transaction.batchSize { try flush() }
        return key
    }

    /// `value` as the column's PostgreSQL type holds it.
    /// - Throws: `StorageError` with code `.typeMismatch` naming the column for a value the
    ///   column's type cannot hold (PostgreSQL columns hold one type, SQLite's any).
    private func fit(_ value: StorageValue, _ column: ColumnDefinition, key: StorageValue) throws -> StorageValue {
        switch (column.type, value) {
        case (_, .null), (.integer, .integer), (.real, .real), (.blob, .blob):
            return value
        case (.real, .integer(let number)):
            return .real(Double(number))
        case (.text, .text(let text)), (.untyped, .text(let text)):
            guard !text.utf8.contains(0) else {
                throw StorageError(
                    .typeMismatch,
                    "PostgreSQL text cannot hold a NUL character",
                    collection: collection,
                    column: column.name,
                    key: key
                )
            }
            return value
        default:
            throw StorageError(
                .typeMismatch,
                "a \(value.columnType?.rawValue ?? "null") value cannot be stored in \(column.type.rawValue) column"
                    + " \(Identifier.quoted(column.name)) on PostgreSQL",
                collection: collection,
                column: column.name,
                key: key
            )
        }
    }

    /// The next auto-assigned key, taken from the collection's sequence in growing blocks.
    private func nextKey() throws -> Int64 {
        if spareKeys.isEmpty {
            let count = nextAllocation
            nextAllocation = min(nextAllocation * 4, 4096)
            let result = try transaction.connection.query(
                "SELECT nextval($1::text::regclass) FROM generate_series(1, $2::int8)",
                PostgreSQLParameters([.text(transaction.catalog.keySequence(of: collection)), .integer(Int64(count))]),
                "cannot assign keys",
                collection: collection
            )
            result.forEachRow { row in
                if case .integer(let key) = row.value(at: 0) { spareKeys.append(key) }
                return true
            }
            spareKeys.reverse()
        }
        guard let key = spareKeys.popLast() else {
            throw StorageError(.engine, "the key sequence returned no key", collection: collection)
        }
        return key
    }

    /// Moves the key sequence past an explicitly given key, so it is never assigned again.
    private func advanceSequence(past key: Int64) throws {
        let sequence = transaction.catalog.keySequence(of: collection)
        _ = try transaction.connection.query(
            "SELECT setval($1::text::regclass, greatest($2::int8, (SELECT last_value FROM " + sequence + ")))",
            PostgreSQLParameters([.text(sequence), .integer(key)]),
            "cannot advance the key sequence",
            collection: collection
        )
    }

    /// Sends the buffered records.
    func flush() throws {
        guard !buffer[0].isEmpty else { return }
        var parameters = PostgreSQLParameters()
        for (index, column) in columns.enumerated() {
            let type: Oid
            switch column.type {
            case .integer: type = PostgreSQLType.int8
            case .real: type = PostgreSQLType.float8
            case .text, .untyped: type = PostgreSQLType.text
            case .blob: type = PostgreSQLType.bytea
            }
            parameters.appendArray(buffer[index], elementType: type)
        }
        for index in buffer.indices { buffer[index].removeAll(keepingCapacity: true) }
        bufferedKeys.removeAll(keepingCapacity: true)
        _ = try transaction.connection.query(sql, parameters, "cannot write records", collection: collection)
    }
}
