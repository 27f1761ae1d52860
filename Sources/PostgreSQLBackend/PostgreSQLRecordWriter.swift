internal import CPostgreSQL
import Foundation
import Storage

/// Inserts or replaces records of one layout, in batches sent with `COPY … FROM STDIN (FORMAT
/// binary)`: the records are encoded in COPY's binary tuple format as they come, and each batch
/// (at most `Configuration.batchSize` records or 32 MB) is sent in one `COPY`. A batch copied
/// straight into the table is streamed: once `streamingChunkBytes` of it are encoded the copy
/// starts, and each further chunk is sent as it fills, so the server stores records while the
/// next are encoded; the batch's bytes are kept until it ends, for the staging table below.
///
/// A batch is first copied straight into the table, inside a savepoint: when none of its keys is
/// stored yet (a bulk load) that is all. When the copy hits a unique violation (a key already
/// stored, so the batch is an upsert, or a real violation of a unique index), the transaction
/// goes back to the savepoint and the same bytes are copied into a temporary staging table of
/// the session (`pg_temp."storage$stage_<hash>"`, columns `c1`…`cn` typed as the writer's
/// columns, kept for the session and emptied before each use), merged with one `INSERT … SELECT
/// … ON CONFLICT (key) DO UPDATE`: an upsert, whose unique violations are real ones
/// (`.constraintViolation`). After a failed direct copy, and after `maximumSavepoints` of them
/// in a transaction (PostgreSQL tracks only 64 subtransactions per transaction cheaply), the
/// writer goes to the staging table directly.
final class PostgreSQLRecordWriter: RecordWriter {
    private unowned let transaction: PostgreSQLWriteTransaction
    private let collection: String
    private let plan: PostgreSQLWriterPlan
    /// The writer's collection, folded.
    var folded: String { plan.folded }
    private var columns: [ColumnDefinition] { plan.columns }
    private var keyIndex: Int { plan.keyIndex }
    private var hasAutoKey: Bool { plan.hasAutoKey }
    /// The buffered records, as COPY binary tuples.
    private let tuples = PostgreSQLTupleBuffer()
    private var tupleCount = 0
    /// The key of the first buffered record, and the keys of the others: a key saved again is
    /// sent in the next batch, as a `COPY` (or an upsert of one statement) may not touch a row
    /// twice. The first key is kept apart so that a writer of one record (a single save) hashes
    /// and allocates nothing for it.
    private var firstKey: StorageValue?
    private var bufferedKeys: Set<StorageValue> = []
    /// The largest buffered key while the buffered keys are integers in strictly ascending
    /// order (a bulk load in key order); those after the first are then in `ascendingKeys`, not
    /// hashed into `bufferedKeys`, as a key above all of them cannot be one of them.
    private var ascendingLast: Int64?
    private var ascendingKeys: [Int64] = []
    /// Whether the next batch is tried straight into the table first.
    private var copiesDirectly = true
    /// Auto-assigned keys taken from the sequence and not used yet.
    private var spareKeys: [Int64] = []
    private var nextAllocation = 1

    /// The most direct copies (each a savepoint) a transaction makes.
    static let maximumSavepoints = 32
    /// The most bytes of records a writer buffers before it sends them.
    static let maximumBatchBytes = 32 << 20
    /// The most bytes one value may take: the server holds a value, with its 4-byte length
    /// header, in one allocation of at most `MaxAllocSize` (`0x3fffffff`) bytes, and refuses a
    /// larger one.
    static let maximumValueBytes = 0x3fff_ffff - 4
    /// The most bytes one record's fields may take as a COPY tuple (each value with its 4-byte
    /// length, and the 2-byte field count): the protocol message that carries a statement's
    /// parameters (`Bind`) may be `MaxAllocSize - 1` bytes long, and the server makes the row
    /// in one allocation of at most `MaxAllocSize`; 64 KiB are left for the rest of either (the
    /// statement's name and format codes, the row's header and alignment).
    static let maximumRecordBytes = 0x3fff_ffff - 65_536

    init(transaction: PostgreSQLWriteTransaction, plan: PostgreSQLWriterPlan) {
        self.transaction = transaction
        self.collection = plan.collection
        self.plan = plan
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
        if let firstKey {
            if let last = ascendingLast, case .integer(let number) = key, number > last {
                // Above every buffered key: not one of them.
            } else {
                if ascendingLast != nil {
                    for buffered in ascendingKeys { bufferedKeys.insert(.integer(buffered)) }
                    ascendingKeys.removeAll(keepingCapacity: true)
                    ascendingLast = nil
                }
                if firstKey == key || bufferedKeys.contains(key) { try flush() }
            }
        }
        try appendTuple(values, key: key)
        if firstKey == nil {
            firstKey = key
            if case .integer(let number) = key { ascendingLast = number }
        } else if let last = ascendingLast, case .integer(let number) = key, number > last {
            ascendingKeys.append(number)
            ascendingLast = number
        } else {
            bufferedKeys.insert(key)
        }
        tupleCount += 1
        transaction.changes.record(collection, folded: plan.folded, key)
        if tupleCount >= transaction.batchSize || tuples.count >= Self.maximumBatchBytes {
            try flush()
        } else if tuples.count - sentBytes >= Self.streamingChunkBytes, tupleCount > 1 {
            try streamBufferedTuples()
        }
        return key
    }

    /// How many bytes of records wait before a writer sends them to its open copy (starting one
    /// when none is open yet), so the server stores one chunk while the next is encoded.
    static let streamingChunkBytes = 64 << 10
    /// How many bytes of `tuples` the open direct copy has been sent.
    private var sentBytes = 0
    /// Whether this writer's direct copy is open on the connection (in its savepoint).
    private(set) var isStreaming = false

    /// Sends the tuples not sent yet to the writer's direct copy, starting it (in a savepoint)
    /// when it is not open. Nothing happens when the batch goes through the staging table, or
    /// when the collection assigns keys (taking keys from its sequence needs the connection).
    private func streamBufferedTuples() throws {
        guard !hasAutoKey, copiesDirectly else { return }
        let connection = transaction.connection
        if !isStreaming {
            guard transaction.savepoints < Self.maximumSavepoints else { return }
            try transaction.endStreaming(except: self)
            transaction.savepoints += 1
            try connection.execute("SAVEPOINT " + Self.savepoint, collection: collection)
            try connection.startCopy(plan.directCopySQL, "cannot write records", collection: collection)
            isStreaming = true
            transaction.streamingWriter = self
        }
        connection.sendCopyData(UnsafeRawBufferPointer(rebasing: tuples.bytes[sentBytes...]))
        sentBytes = tuples.count
    }

    /// The error for a value that `column`'s PostgreSQL type cannot hold (PostgreSQL columns hold
    /// one type, SQLite's any).
    private func mismatch(_ value: StorageValue, _ column: ColumnDefinition, key: StorageValue) -> StorageError {
        StorageError(
            .typeMismatch,
            "a \(value.columnType?.rawValue ?? "null") value cannot be stored in \(column.type.rawValue) column"
                + " \(Identifier.quoted(column.name)) on PostgreSQL",
            collection: collection,
            column: column.name,
            key: key
        )
    }

    /// The next auto-assigned key, taken from the collection's sequence in growing blocks.
    private func nextKey() throws -> Int64 {
        if spareKeys.isEmpty {
            try transaction.endStreaming(except: self)
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
        try transaction.endStreaming(except: self)
        let sequence = transaction.catalog.keySequence(of: collection)
        _ = try transaction.connection.query(
            "SELECT setval($1::text::regclass, greatest($2::int8, (SELECT last_value FROM " + sequence + ")))",
            PostgreSQLParameters([.text(sequence), .integer(key)]),
            "cannot advance the key sequence",
            collection: collection
        )
    }

    /// Appends `values` (with `key` in the key's place) as a COPY binary tuple: the field count,
    /// then each field's length (-1 for null) and bytes, in network byte order; each value as its
    /// column's type holds it (an integer in a real column as a real). Nothing is appended when a
    /// value does not fit.
    ///
    /// The tuple's size is computed first (checking each value's type), then its bytes are stored
    /// straight into the buffer's memory: a profile of bulk inserts showed `Array.append` of each
    /// length, number and blob as most of this function's cost (docs/BENCHMARKS.md).
    /// - Throws: `StorageError` with code `.typeMismatch` naming the column for a value its type
    ///   cannot hold, or text holding a NUL character (PostgreSQL text cannot); `.limitExceeded`
    ///   naming the column for a value over `maximumValueBytes`, or naming the record's largest
    ///   column for a record over `maximumRecordBytes`: the server would refuse either, and end
    ///   the connection for a message over its limit. Nothing is sent.
    private func appendTuple(_ values: [StorageValue], key: StorageValue) throws {
        var size = 2
        var largest = (bytes: 0, index: 0)
        for index in values.indices {
            let value = index == keyIndex ? key : values[index]
            let bytes: Int
            switch (columns[index].type, value) {
            case (_, .null): bytes = 0
            case (.integer, .integer), (.real, .integer), (.real, .real): bytes = 8
            case (.text, .text(let text)), (.untyped, .text(let text)): bytes = text.utf8.count
            case (.blob, .blob(let data)): bytes = data.count
            default: throw mismatch(value, columns[index], key: key)
            }
            guard bytes <= Self.maximumValueBytes else {
                throw StorageError(
                    .limitExceeded,
                    "a value of \(bytes) bytes in column \(Identifier.quoted(columns[index].name)) is more than"
                        + " PostgreSQL holds in one value (\(Self.maximumValueBytes) bytes)",
                    collection: collection,
                    column: columns[index].name,
                    key: key
                )
            }
            if bytes > largest.bytes { largest = (bytes, index) }
            size += 4 + bytes
        }
        guard size <= Self.maximumRecordBytes else {
            throw StorageError(
                .limitExceeded,
                "a record of \(size) bytes (its largest value in column"
                    + " \(Identifier.quoted(columns[largest.index].name))) is more than PostgreSQL takes in one"
                    + " record (\(Self.maximumRecordBytes) bytes)",
                collection: collection,
                column: columns[largest.index].name,
                key: key
            )
        }
        let buffer = tuples
        let start = buffer.count
        buffer.reserve(size)
        buffer.store(UInt16(values.count))
        for index in values.indices {
            switch index == keyIndex ? key : values[index] {
            case .null:
                buffer.store(UInt32(bitPattern: -1))
            case .integer(let number):
                buffer.store(UInt32(8))
                if columns[index].type == .real {
                    buffer.store(Double(number).bitPattern)
                } else {
                    buffer.store(UInt64(bitPattern: number))
                }
            case .real(let number):
                buffer.store(UInt32(8))
                buffer.store(number.bitPattern)
            case .text(var text):
                let stored = text.withUTF8 { bytes in
                    if let base = bytes.baseAddress, memchr(base, 0, bytes.count) != nil { return false }
                    buffer.store(UInt32(bytes.count))
                    buffer.store(UnsafeRawBufferPointer(bytes))
                    return true
                }
                guard stored else {
                    buffer.truncate(to: start)
                    throw StorageError(
                        .typeMismatch,
                        "PostgreSQL text cannot hold a NUL character",
                        collection: collection,
                        column: columns[index].name,
                        key: key
                    )
                }
            case .blob(let data):
                buffer.store(UInt32(data.count))
                data.withUnsafeBytes { buffer.store($0) }
            }
        }
    }

    /// Whether records wait to be sent.
    var hasBufferedRecords: Bool { tupleCount > 0 }

    /// The upsert of the one buffered record, not sent, or `nil` when the writer holds no record
    /// or more than one.
    func pendingSingleUpsert() -> PostgreSQLConnection.PipelinedStatement? {
        guard tupleCount == 1, !isStreaming else { return nil }
        return .init(
            sql: plan.upsertOneSQL,
            parameters: PostgreSQLParameters(copyTuple: tuples.bytes),
            context: "cannot write records",
            collection: collection
        )
    }

    /// Saves the one buffered record by one statement on its own on `connection` (outside a
    /// transaction block), its fields passed where the buffer holds them; `nil` (and nothing
    /// sent) when the writer holds no record or more than one, or when `unobserved` is asked for
    /// and the collection has no such statement (`PostgreSQLWriterPlan.saveOneUnobservedSQL`).
    /// The buffer is left as it is.
    /// - Parameters:
    ///   - connection: a connection outside any transaction block.
    ///   - origin: the backend's name in the change table (`saveOneSQL`'s change record).
    ///   - unobserved: the upsert checked for listeners (`saveOneUnobservedSQL`), instead of the
    ///     upsert and its change record (`saveOneSQL`).
    ///   - check: what the statement also checks of the store's full-text indexes
    ///     (`PostgreSQLSearchRegistryAppeared.Check`: `.none`, `.noRegistry`, or `.unindexed` of
    ///     this writer's collection alone): the transaction answered so from the cache.
    /// - Returns: the rows the statement affected (for `saveOneSQL`: the change rows inserted).
    /// - Throws: what `PostgreSQLConnection.runAlone` throws; `PostgreSQLListenersAppeared` when
    ///   `unobserved` and a store listens now, or the check fails (nothing was written);
    ///   `PostgreSQLSearchRegistryAppeared` when not `unobserved` and the check fails (nothing was
    ///   written).
    func saveAlone(
        on connection: PostgreSQLConnection,
        origin: String,
        unobserved: Bool,
        check: PostgreSQLSearchRegistryAppeared.Check
    ) throws -> Int? {
        guard tupleCount == 1, !isStreaming, let key = firstKey else { return nil }
        let sql: String
        let extra: PostgreSQLParameters
        if unobserved {
            let unobservedSQL: String?
            switch check {
            case .none: unobservedSQL = plan.saveOneUnobservedSQL
            case .noRegistry: unobservedSQL = plan.noRegistrySaveOneUnobservedSQL
            case .unindexed: unobservedSQL = plan.unindexedSaveOneUnobservedSQL
            }
            guard let unobservedSQL else { return nil }
            sql = unobservedSQL
            extra = PostgreSQLParameters()
        } else {
            switch check {
            case .none: sql = plan.saveOneSQL
            case .noRegistry: sql = plan.noRegistrySaveOneSQL
            case .unindexed: sql = plan.unindexedSaveOneSQL
            }
            extra = PostgreSQLParameters([
                .text(origin), .text(collection), .text(PostgreSQLChangeFeed.encode([key])),
            ])
        }
        return try connection.runAlone(
            sql,
            tuple: tuples.bytes,
            then: extra,
            context: "cannot write records",
            collection: collection,
            marker: unobserved
                ? (PostgreSQLChangeFeed.listenersAppeared, PostgreSQLListenersAppeared())
                : check == .none ? nil : (PostgreSQLSearchRegistryAppeared.code, PostgreSQLSearchRegistryAppeared())
        )
    }

    /// Drops the buffered records (sent by other means).
    func forgetBufferedRecords() {
        if isStreaming {
            transaction.connection.abortCopy()
            isStreaming = false
            if transaction.streamingWriter === self { transaction.streamingWriter = nil }
        }
        sentBytes = 0
        ascendingLast = nil
        ascendingKeys.removeAll(keepingCapacity: true)
        tuples.truncate(to: 0)
        tupleCount = 0
        firstKey = nil
        bufferedKeys.removeAll(keepingCapacity: true)
    }

    /// Sends the buffered records: straight into the table when that may work, otherwise (or
    /// when it hit a unique violation) through the staging table.
    func flush() throws {
        guard tupleCount > 0 else { return }
        defer { forgetBufferedRecords() }
        let connection = transaction.connection
        if isStreaming {
            // The direct copy is open: the rest of the batch, then its end.
            isStreaming = false
            transaction.streamingWriter = nil
            connection.sendCopyData(UnsafeRawBufferPointer(rebasing: tuples.bytes[sentBytes...]))
            if try inSavepoint({ try connection.endCopy("cannot write records", collection: collection) }) { return }
            try mergeThroughStaging()
            return
        }
        try transaction.endStreaming(except: self)
        if let upsert = pendingSingleUpsert() {
            // One record: one upsert statement, sent with the transaction's BEGIN if it is the first.
            _ = try connection.query(upsert.sql, upsert.parameters, upsert.context, collection: collection)
            return
        }
        if copiesDirectly, transaction.savepoints < Self.maximumSavepoints {
            transaction.savepoints += 1
            try connection.execute("SAVEPOINT " + Self.savepoint, collection: collection)
            let copied = try inSavepoint {
                try connection.copyIn(plan.directCopySQL, tuples.bytes, "cannot write records", collection: collection)
            }
            if copied { return }
        }
        try mergeThroughStaging()
    }

    /// Ends the direct copy of a batch inside the writer's savepoint (already set): `copy` and
    /// the savepoint's release, or, on a unique violation (a key already stored, or a real
    /// violation, which the merge then reports), the rollback to it, and later batches go
    /// through the staging table.
    /// - Returns: whether the copy stored the batch.
    private func inSavepoint(_ copy: () throws -> Void) throws -> Bool {
        let connection = transaction.connection
        do {
            try copy()
            try connection.execute("RELEASE SAVEPOINT " + Self.savepoint, collection: collection)
            return true
        } catch PostgreSQLError.Code.uniqueViolation where !connection.isBroken {
            try connection.execute(
                "ROLLBACK TO SAVEPOINT " + Self.savepoint + "; RELEASE SAVEPOINT " + Self.savepoint,
                collection: collection
            )
            copiesDirectly = false
            return false
        }
    }

    /// Copies the buffered records into the staging table and merges them into the table.
    private func mergeThroughStaging() throws {
        let connection = transaction.connection
        try connection.execute(plan.stagingSQL, collection: collection)
        try connection.copyIn(plan.stagingCopySQL, tuples.bytes, "cannot write records", collection: collection)
        _ = try connection.query(plan.mergeSQL, PostgreSQLParameters(), "cannot write records", collection: collection)
    }

    /// The savepoint a direct copy runs in.
    private static let savepoint = PostgreSQLIdentifier.quote("storage$copy")
}
