import CLMDB
import CPostgreSQL
import CSQLite
import Foundation
import LMDBBackend
import PostgreSQLBackend
import SQLiteBackend
import Storage

/// A sale of the aggregate benchmark: one of 100 cities and an integer amount.
struct BenchmarkSale: Codable, StorableModel {
    static let collectionName = "sales"
    var id: Int64
    var city: String
    var amount: Int64
    var price: Double

    static func make(_ count: Int) -> [BenchmarkSale] {
        var random = SystemRandomNumberGenerator()
        return (0..<count).map { index in
            BenchmarkSale(
                id: Int64(index + 1),
                city: "city-\(Int.random(in: 0..<100, using: &random))",
                amount: Int64.random(in: 1...10_000, using: &random),
                price: Double(Int.random(in: 1...100_000, using: &random)) / 100
            )
        }
    }
}

/// `aggregate(_:_:groupBy:)`, a sum of integers per city (100 groups), beside the same work done by
/// hand on the engine's API, measured in the same run (`--aggregates`): on SQLite the same
/// `SELECT city, sum(amount) … GROUP BY city ORDER BY city` through the C API on the same file
/// (goal ≥ 0.9: ours runs that statement too), on LMDB a cursor loop over records of a fixed
/// layout summing into a dictionary by city (goal ≥ 0.5: ours decodes each record's fields
/// through the backend's scan and the one-pass computation), on PostgreSQL the same `GROUP BY` sent
/// with libpq (goal ≥ 0.9).
enum AggregateBenchmarks {
    static func run(_ harness: inout Harness, count: Int, backends: [String], directory: URL) throws {
        progress("making \(count) sales")
        let sales = BenchmarkSale.make(count)
        let expected = Dictionary(grouping: sales, by: \.city).mapValues { $0.reduce(0) { $0 + $1.amount } }
        func check(_ rows: [[String: StorageValue]]) {
            precondition(rows.count == expected.count)
            for row in rows {
                guard case .text(let city)? = row["city"], case .integer(let sum)? = row["sum(amount)"] else {
                    preconditionFailure("a row without a city or a sum")
                }
                precondition(expected[city] == sum)
            }
        }
        func check(_ pairs: [(String, Int64)]) {
            precondition(pairs.count == expected.count && pairs.allSatisfy { expected[$0.0] == $0.1 })
        }
        let aggregates: [Aggregate] = [.sum("amount")]
        if backends.contains("sqlite") {
            progress("aggregate on sqlite")
            let path = directory.appendingPathComponent("aggregate.sqlite").path
            let store = ObjectStore(backend: try .sqlite(path: path))
            try store.save(contentsOf: sales)
            let raw = try RawSQLiteAggregate(path: path)
            let (ours, baseline) = try harness.measurePair(
                warmUp: true,
                ours: { check(try store.aggregate(BenchmarkSale.self, aggregates, groupBy: [Column("city")])) },
                baseline: { check(try raw.sumByCity()) }
            )
            harness.record(
                backend: "sqlite",
                operation: .aggregate,
                rows: count,
                ours: ours,
                baseline: "SELECT city, sum(amount) … GROUP BY city through the C API",
                baselineTime: baseline,
                goal: 0.9
            )
            raw.close()
            try store.close()
        }
        if backends.contains("lmdb") {
            progress("aggregate on lmdb")
            let path = directory.appendingPathComponent("aggregate.lmdb").path
            let store = ObjectStore(backend: try .lmdb(path: path))
            try store.save(contentsOf: sales)
            let raw = try RawLMDBSales(path: directory.appendingPathComponent("aggregate-raw.lmdb").path)
            try raw.insert(sales)
            let (ours, baseline) = try harness.measurePair(
                warmUp: true,
                ours: { check(try store.aggregate(BenchmarkSale.self, aggregates, groupBy: [Column("city")])) },
                baseline: { check(try raw.sumByCity()) }
            )
            harness.record(
                backend: "lmdb",
                operation: .aggregate,
                rows: count,
                ours: ours,
                baseline: "cursor loop summing a fixed-layout record by city",
                baselineTime: baseline,
                goal: 0.5
            )
            try store.close()
        }
        if backends.contains("postgresql") {
            progress("aggregate on postgresql")
            let schema = "bench_aggregates"
            RawPostgreSQL.dropSchema(schema)
            defer { RawPostgreSQL.dropSchema(schema) }
            let store = ObjectStore(
                backend: try .postgreSQL(url: try RawPostgreSQL.url(), configuration: .init(schema: schema))
            )
            try store.save(contentsOf: sales)
            let raw = try RawPostgreSQLAggregate(table: "\"\(schema)\".\"sales\"")
            let (ours, baseline) = try harness.measurePair(
                warmUp: true,
                ours: { check(try store.aggregate(BenchmarkSale.self, aggregates, groupBy: [Column("city")])) },
                baseline: { check(try raw.sumByCity()) }
            )
            harness.record(
                backend: "postgresql",
                operation: .aggregate,
                rows: count,
                ours: ours,
                baseline: "SELECT city, sum(amount) … GROUP BY city through libpq",
                baselineTime: baseline,
                goal: 0.9
            )
            try store.close()
        }
    }
}

/// The PostgreSQL baseline: the same `GROUP BY` sent with libpq, its text results parsed.
final class RawPostgreSQLAggregate {
    private let connection: OpaquePointer
    private let table: String

    struct Failure: Error {}

    init(table: String) throws {
        guard let connection = PQconnectdb(try RawPostgreSQL.url()), PQstatus(connection) == CONNECTION_OK else {
            throw Failure()
        }
        self.connection = connection
        self.table = table
    }

    deinit { PQfinish(connection) }

    func sumByCity() throws -> [(String, Int64)] {
        let sql = #"SELECT "city", sum("amount") FROM "# + table + #" GROUP BY "city" ORDER BY "city" ASC"#
        guard let result = PQexec(connection, sql) else { throw Failure() }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { throw Failure() }
        return (0..<PQntuples(result)).map { row in
            (String(cString: PQgetvalue(result, row, 0)), Int64(String(cString: PQgetvalue(result, row, 1))) ?? 0)
        }
    }
}

/// The SQLite baseline: the statement ObjectStore compiles, prepared and stepped by hand.
final class RawSQLiteAggregate {
    private var db: OpaquePointer?

    struct Failure: Error {}

    init(path: String) throws {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { throw Failure() }
    }

    func close() { sqlite3_close_v2(db) }

    func sumByCity() throws -> [(String, Int64)] {
        var statement: OpaquePointer?
        let sql = #"SELECT "city", sum("amount") FROM "sales" GROUP BY "city" ORDER BY "city" ASC"#
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw Failure() }
        defer { sqlite3_finalize(statement) }
        var rows: [(String, Int64)] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw Failure() }
            rows.append((String(cString: sqlite3_column_text(statement, 0)), sqlite3_column_int64(statement, 1)))
        }
        return rows
    }
}

/// The LMDB baseline: sales as big-endian keys and a fixed layout (the city length-prefixed, the
/// amount, the price), summed by a cursor loop into a dictionary by city, sorted at the end.
final class RawLMDBSales {
    private var env: OpaquePointer?
    private var dbi: MDB_dbi = 0

    struct Failure: Error {}

    init(path: String) throws {
        try check(mdb_env_create(&env))
        try check(mdb_env_set_mapsize(env, 1 << 33))
        try check(mdb_env_set_maxdbs(env, 2))
        try check(mdb_env_open(env, path, UInt32(MDB_NOSUBDIR | MDB_NOTLS), 0o600))
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn))
        try check(mdb_dbi_open(txn, "sales", UInt32(MDB_CREATE), &dbi))
        try check(mdb_txn_commit(txn))
    }

    deinit { mdb_env_close(env) }

    private func check(_ rc: Int32) throws {
        guard rc == 0 else { throw Failure() }
    }

    func insert(_ sales: [BenchmarkSale]) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn))
        var buffer: [UInt8] = []
        for sale in sales {
            buffer.removeAll(keepingCapacity: true)
            withUnsafeBytes(of: UInt32(sale.city.utf8.count)) { buffer.append(contentsOf: $0) }
            buffer.append(contentsOf: sale.city.utf8)
            withUnsafeBytes(of: sale.amount) { buffer.append(contentsOf: $0) }
            withUnsafeBytes(of: sale.price) { buffer.append(contentsOf: $0) }
            var key = (UInt64(bitPattern: sale.id) ^ (1 << 63)).bigEndian
            let rc = withUnsafeMutableBytes(of: &key) { keyBytes in
                buffer.withUnsafeMutableBytes { bytes in
                    var keyValue = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                    var value = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                    return mdb_put(txn, dbi, &keyValue, &value, UInt32(MDB_APPEND))
                }
            }
            guard rc == 0 else {
                mdb_txn_abort(txn)
                throw Failure()
            }
        }
        try check(mdb_txn_commit(txn))
    }

    func sumByCity() throws -> [(String, Int64)] {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn))
        defer { mdb_txn_abort(txn) }
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        var sums: [String: Int64] = [:]
        var key = MDB_val()
        var value = MDB_val()
        var operation = MDB_FIRST
        while mdb_cursor_get(cursor, &key, &value, operation) == 0 {
            operation = MDB_NEXT
            let bytes = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
            let length = Int(bytes.loadUnaligned(as: UInt32.self))
            let city = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[4..<4 + length]), as: UTF8.self)
            sums[city, default: 0] += bytes.loadUnaligned(fromByteOffset: 4 + length, as: Int64.self)
        }
        return sums.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, $0.value) }
    }
}
