import CPostgreSQL
import Foundation

/// The PostgreSQL baseline: what a careful programmer writes by hand against libpq, on the server
/// `STORAGE_POSTGRES_URL` names (start one with `scripts/postgres.sh start DIR`): `COPY … FROM
/// STDIN` in binary for bulk inserts, prepared statements, binary results read by column index,
/// single-row mode for streaming. Each store is a schema of its own.
final class RawPostgreSQL {
    private let connection: OpaquePointer
    private let table: String

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let columns = "id, firstname, lastname, email, age, height, score, isactive, createdat, avatar"

    /// The server's URL.
    static func url() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["STORAGE_POSTGRES_URL"], !url.isEmpty else {
            throw Failure(description: "set STORAGE_POSTGRES_URL (scripts/postgres.sh start DIR prints one)")
        }
        return url
    }

    /// The schema a benchmark store at `path` lives in.
    static func schema(for path: String) -> String {
        "bench_" + String(UInt64(bitPattern: Int64(path.utf8.reduce(5381) { ($0 &* 33) &+ Int($1) })), radix: 16)
    }

    init(path: String, avatarType: String = "bytea") throws {
        guard let connection = PQconnectdb(try Self.url()), PQstatus(connection) == CONNECTION_OK else {
            throw Failure(description: "cannot connect to STORAGE_POSTGRES_URL")
        }
        self.connection = connection
        let schema = "\"" + Self.schema(for: path) + "\""
        table = schema + ".person"
        try execute(
            "CREATE SCHEMA IF NOT EXISTS \(schema); CREATE TABLE IF NOT EXISTS \(table) (id bigint PRIMARY KEY,"
                + " firstname text COLLATE \"C\", lastname text COLLATE \"C\", email text COLLATE \"C\", age bigint,"
                + " height float8, score float8, isactive bigint, createdat float8, avatar \(avatarType))"
        )
    }

    deinit { PQfinish(connection) }

    /// Drops the schema `name` and everything in it.
    static func dropSchema(_ name: String) {
        guard let url = try? url(), let connection = PQconnectdb(url) else { return }
        defer { PQfinish(connection) }
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        PQclear(PQexec(connection, "DROP SCHEMA IF EXISTS \"\(name)\" CASCADE"))
    }

    func execute(_ sql: String) throws {
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else { throw failure() }
    }

    /// `UPDATE … SET score, firstname … WHERE id BETWEEN` in one transaction: update-where's
    /// baseline (UpdateBenchmarks.swift), its values bound as parameters. Returns how many rows
    /// changed.
    @inline(never)  // a symbol of its own, for profiles
    func update(ids: ClosedRange<Int64>, score: Double, firstName: String) throws -> Int {
        try execute("BEGIN")
        let values = [String(score), firstName, String(ids.lowerBound), String(ids.upperBound)]
        let result = values.withCStringArray { parameters in
            PQexecParams(
                connection,
                "UPDATE \(table) SET score = $1::float8, firstname = $2::text WHERE id BETWEEN $3::int8 AND $4::int8",
                4,
                nil,
                parameters,
                nil,
                nil,
                0
            )
        }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw failure() }
        let changed = Int(String(cString: PQcmdTuples(result))) ?? 0
        try execute("COMMIT")
        return changed
    }

    private func failure() -> Failure {
        Failure(description: String(cString: PQerrorMessage(connection)))
    }

    // MARK: Binary encoding

    private static func append<T: FixedWidthInteger>(_ value: T, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    private static func appendField(_ bytes: some Collection<UInt8>, to buffer: inout [UInt8]) {
        append(Int32(bytes.count), to: &buffer)
        buffer.append(contentsOf: bytes)
    }

    /// One COPY binary tuple for `person`; `avatarAsText`: the base64 text of the JSON path.
    private static func appendTuple(_ person: Person, avatarAsText: Bool, to buffer: inout [UInt8]) {
        append(Int16(10), to: &buffer)
        append(Int32(8), to: &buffer)
        append(person.id, to: &buffer)
        appendField(person.firstName.utf8, to: &buffer)
        appendField(person.lastName.utf8, to: &buffer)
        appendField(person.email.utf8, to: &buffer)
        append(Int32(8), to: &buffer)
        append(Int64(person.age), to: &buffer)
        append(Int32(8), to: &buffer)
        append(person.height.bitPattern, to: &buffer)
        append(Int32(8), to: &buffer)
        append(person.score.bitPattern, to: &buffer)
        append(Int32(8), to: &buffer)
        append(Int64(person.isActive ? 1 : 0), to: &buffer)
        append(Int32(8), to: &buffer)
        append(person.createdAt.timeIntervalSince1970.bitPattern, to: &buffer)
        if avatarAsText {
            appendField(person.avatar.base64EncodedString().utf8, to: &buffer)
        } else {
            appendField(person.avatar, to: &buffer)
        }
    }

    /// `people` through `COPY … FROM STDIN (FORMAT binary)` in one transaction.
    func copy(_ people: [Person], avatarAsText: Bool = false) throws {
        try execute("BEGIN")
        let start = PQexec(connection, "COPY \(table) (\(Self.columns)) FROM STDIN (FORMAT binary)")
        defer { PQclear(start) }
        guard PQresultStatus(start) == PGRES_COPY_IN else { throw failure() }
        var buffer: [UInt8] = Array("PGCOPY\n".utf8) + [0xff, 0x0d, 0x0a, 0x00]
        Self.append(Int32(0), to: &buffer)
        Self.append(Int32(0), to: &buffer)
        for person in people {
            Self.appendTuple(person, avatarAsText: avatarAsText, to: &buffer)
            if buffer.count > 1 << 20 {
                try send(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        Self.append(Int16(-1), to: &buffer)
        try send(buffer)
        guard PQputCopyEnd(connection, nil) == 1 else { throw failure() }
        while let result = PQgetResult(connection) {
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw failure() }
        }
        try execute("COMMIT")
    }

    private func send(_ buffer: [UInt8]) throws {
        let sent = buffer.withUnsafeBytes { bytes in
            PQputCopyData(connection, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
        }
        guard sent == 1 else { throw failure() }
    }

    // MARK: Statements

    private var prepared: Set<String> = []

    /// Runs the prepared statement `name` (`sql`) with one int8 parameter, or none.
    private func run(_ name: String, _ sql: String, _ parameter: Int64?) throws -> OpaquePointer {
        if !prepared.contains(name) {
            let result = PQprepare(connection, name, sql, 0, nil)
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw failure() }
            prepared.insert(name)
        }
        var value = (parameter ?? 0).bigEndian
        var length: Int32 = 8
        var format: Int32 = 1
        let result = withUnsafePointer(to: &value) { pointer in
            pointer.withMemoryRebound(to: CChar.self, capacity: 8) { bytes in
                var values: [UnsafePointer<CChar>?] = [bytes]
                return PQexecPrepared(connection, name, parameter == nil ? 0 : 1, &values, &length, &format, 1)
            }
        }
        guard let result, PQresultStatus(result) == PGRES_TUPLES_OK || PQresultStatus(result) == PGRES_COMMAND_OK
        else {
            PQclear(result)
            throw failure()
        }
        return result
    }

    /// The person in row `row` of a binary result, columns by index.
    private static func person(_ result: OpaquePointer, _ row: Int32) -> Person {
        func raw(_ column: Int32) -> UnsafeRawPointer { UnsafeRawPointer(PQgetvalue(result, row, column)) }
        func int(_ column: Int32) -> Int64 { Int64(bigEndian: raw(column).loadUnaligned(as: Int64.self)) }
        func double(_ column: Int32) -> Double {
            Double(bitPattern: UInt64(bigEndian: raw(column).loadUnaligned(as: UInt64.self)))
        }
        func text(_ column: Int32) -> String {
            String(
                decoding: UnsafeRawBufferPointer(start: raw(column), count: Int(PQgetlength(result, row, column))),
                as: UTF8.self
            )
        }
        return Person(
            id: int(0),
            firstName: text(1),
            lastName: text(2),
            email: text(3),
            age: Int(int(4)),
            height: double(5),
            score: double(6),
            isActive: int(7) != 0,
            createdAt: Date(timeIntervalSince1970: double(8)),
            avatar: Data(bytes: raw(9), count: Int(PQgetlength(result, row, 9)))
        )
    }

    /// The people whose id is in `ids`, each once, by id: one `= ANY($1)` statement with the
    /// list as one array parameter (text format), results in binary.
    func readIn(_ ids: [Int64]) throws -> [Person] {
        let sql = "SELECT \(Self.columns) FROM \(table) WHERE id = ANY($1::int8[]) ORDER BY id"
        let list = "{" + ids.map(String.init).joined(separator: ",") + "}"
        let result = list.withCString { text in
            var values: [UnsafePointer<CChar>?] = [text]
            return PQexecParams(connection, sql, 1, nil, &values, nil, nil, 1)
        }
        guard let result, PQresultStatus(result) == PGRES_TUPLES_OK else {
            PQclear(result)
            throw failure()
        }
        defer { PQclear(result) }
        return (0..<PQntuples(result)).map { Self.person(result, $0) }
    }

    func select(_ clause: String) throws -> [Person] {
        let result = try run("select " + clause, "SELECT \(Self.columns) FROM \(table) " + clause, nil)
        defer { PQclear(result) }
        return (0..<PQntuples(result)).map { Self.person(result, $0) }
    }

    func lookUp(_ ids: [Int64]) throws -> Int {
        var found = 0
        for id in ids {
            let result = try run("lookup", "SELECT \(Self.columns) FROM \(table) WHERE id = $1::int8", id)
            if PQntuples(result) == 1, Self.person(result, 0).id == id { found += 1 }
            PQclear(result)
        }
        return found
    }

    /// Each person upserted in an autocommit statement of its own.
    func upsertEach(_ people: some Sequence<Person>) throws {
        let sql =
            "INSERT INTO \(table) (\(Self.columns)) VALUES ($1::int8, $2::text, $3::text, $4::text, $5::int8,"
            + " $6::float8, $7::float8, $8::int8, $9::float8, $10::bytea) ON CONFLICT (id) DO UPDATE SET"
            + " firstname = excluded.firstname, lastname = excluded.lastname, email = excluded.email,"
            + " age = excluded.age, height = excluded.height, score = excluded.score, isactive = excluded.isactive,"
            + " createdat = excluded.createdat, avatar = excluded.avatar"
        let upsert = PQprepare(connection, "upsert", sql, 0, nil)
        PQclear(upsert)
        for person in people {
            var buffer: [UInt8] = []
            Self.appendTuple(person, avatarAsText: false, to: &buffer)
            // The tuple's fields, each after its 4-byte length (the 2-byte field count first).
            var offsets: [Int] = []
            var lengths: [Int32] = []
            var position = 2
            for _ in 0..<10 {
                let length = buffer[position..<position + 4].reduce(0) { $0 << 8 | Int32($1) }
                offsets.append(position + 4)
                lengths.append(length)
                position += 4 + Int(length)
            }
            let formats = [Int32](repeating: 1, count: 10)
            let result = buffer.withUnsafeBytes { bytes in
                let base = bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
                let values: [UnsafePointer<CChar>?] = offsets.map { base + $0 }
                return PQexecPrepared(connection, "upsert", 10, values, lengths, formats, 1)
            }
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw failure() }
        }
    }

    /// Calls `body` with each row of `SELECT … ORDER BY id`, in single-row mode.
    func stream(_ body: (Person) throws -> Void) throws {
        guard
            PQsendQueryParams(connection, "SELECT \(Self.columns) FROM \(table) ORDER BY id", 0, nil, nil, nil, nil, 1)
                == 1
        else { throw failure() }
        PQsetSingleRowMode(connection)
        var failed: Failure?
        while let result = PQgetResult(connection) {
            defer { PQclear(result) }
            switch PQresultStatus(result) {
            case PGRES_SINGLE_TUPLE: if failed == nil { try body(Self.person(result, 0)) }
            case PGRES_TUPLES_OK: break
            default: failed = failure()
            }
        }
        if let failed { throw failed }
    }
}

extension Array where Element == String {
    /// The strings as an array of C strings, valid during `body`.
    fileprivate func withCStringArray<R>(_ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies = map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        return body(copies.map { UnsafePointer($0) })
    }
}
