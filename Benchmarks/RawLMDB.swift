import CLMDB
import Foundation

/// The LMDB baseline: what a careful programmer writes by hand against LMDB's C API with the
/// settings the backend uses (NOSUBDIR, NOTLS, synchronous commits): big-endian keys, a packed
/// record of fixed layout, `mdb_put` in one write transaction for a load.
final class RawLMDB {
    private var env: OpaquePointer?
    private var dbi: MDB_dbi = 0

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(path: String) throws {
        try check(mdb_env_create(&env))
        // 8 GiB of address space: ten million records fit, and valgrind can still map it (64 GiB fails).
        try check(mdb_env_set_mapsize(env, 1 << 33))
        try check(mdb_env_set_maxdbs(env, 4))
        try check(mdb_env_open(env, path, UInt32(MDB_NOSUBDIR | MDB_NOTLS), 0o600))
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn))
        try check(mdb_dbi_open(txn, "Person", UInt32(MDB_CREATE), &dbi))
        try check(mdb_txn_commit(txn))
    }

    deinit { mdb_env_close(env) }

    private func check(_ rc: Int32) throws {
        guard rc == 0 else { throw Failure(description: String(cString: mdb_strerror(rc))) }
    }

    private static func key(_ id: Int64) -> UInt64 { (UInt64(bitPattern: id) ^ (1 << 63)).bigEndian }

    /// The fixed layout: id, three length-prefixed strings, age, height, score, isActive,
    /// createdAt, length-prefixed avatar.
    private static func encode(_ person: Person, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        func append<T>(_ value: T) { withUnsafeBytes(of: value) { buffer.append(contentsOf: $0) } }
        func append(_ text: String) {
            append(UInt32(text.utf8.count))
            buffer.append(contentsOf: text.utf8)
        }
        append(person.id)
        append(person.firstName)
        append(person.lastName)
        append(person.email)
        append(Int64(person.age))
        append(person.height)
        append(person.score)
        append(UInt8(person.isActive ? 1 : 0))
        append(person.createdAt.timeIntervalSince1970)
        append(UInt32(person.avatar.count))
        buffer.append(contentsOf: person.avatar)
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer) -> Person {
        var offset = 0
        func read<T>(_: T.Type) -> T {
            defer { offset += MemoryLayout<T>.size }
            return bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        }
        func text() -> String {
            let count = Int(read(UInt32.self))
            defer { offset += count }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]), as: UTF8.self)
        }
        let id = read(Int64.self)
        let firstName = text()
        let lastName = text()
        let email = text()
        let age = Int(read(Int64.self))
        let height = read(Double.self)
        let score = read(Double.self)
        let isActive = read(UInt8.self) != 0
        let createdAt = Date(timeIntervalSince1970: read(Double.self))
        let count = Int(read(UInt32.self))
        let avatar = Data(bytes[offset..<offset + count])
        return Person(
            id: id,
            firstName: firstName,
            lastName: lastName,
            email: email,
            age: age,
            height: height,
            score: score,
            isActive: isActive,
            createdAt: createdAt,
            avatar: avatar
        )
    }

    /// The age of an encoded person, read without decoding the rest (the filter's test).
    private static func age(_ bytes: UnsafeRawBufferPointer) -> Int {
        var offset = 8
        for _ in 0..<3 { offset += 4 + Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
        return Int(bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }

    private func put(_ txn: OpaquePointer?, _ id: Int64, _ buffer: inout [UInt8]) throws {
        var key = Self.key(id)
        let rc = withUnsafeMutableBytes(of: &key) { keyBytes in
            buffer.withUnsafeMutableBytes { bytes in
                var keyValue = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                var value = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                return mdb_put(txn, dbi, &keyValue, &value, 0)
            }
        }
        try check(rc)
    }

    /// Runs `body` in one write transaction, committed when it returns.
    private func write(_ body: (OpaquePointer?) throws -> Void) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn))
        do {
            try body(txn)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try check(mdb_txn_commit(txn))
    }

    /// The records of `ids` read, given a new score and first name, and put back, in one
    /// transaction: update-where's baseline (UpdateBenchmarks.swift). Returns how many changed.
    @inline(never)  // a symbol of its own, for profiles
    func update(ids: ClosedRange<Int64>, score: Double, firstName: String) throws -> Int {
        var buffer: [UInt8] = []
        var changed = 0
        try write { txn in
            for id in ids {
                var key = Self.key(id)
                let found = withUnsafeMutableBytes(of: &key) { keyBytes -> Person? in
                    var keyValue = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                    var value = MDB_val()
                    guard mdb_get(txn, dbi, &keyValue, &value) == 0 else { return nil }
                    return Self.decode(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
                }
                guard var person = found else { continue }
                person.score = score
                person.firstName = firstName
                Self.encode(person, into: &buffer)
                try put(txn, id, &buffer)
                changed += 1
            }
        }
        return changed
    }

    @inline(never)  // a symbol of its own, for profiles
    func insert(_ people: some Sequence<Person>) throws {
        var buffer: [UInt8] = []
        try write { txn in
            for person in people {
                Self.encode(person, into: &buffer)
                try put(txn, person.id, &buffer)
            }
        }
    }

    /// Each of `people` in a write transaction of its own.
    func insertEachCommitted(_ people: some Sequence<Person>) throws {
        var buffer: [UInt8] = []
        for person in people {
            Self.encode(person, into: &buffer)
            try write { txn in try put(txn, person.id, &buffer) }
        }
    }

    /// `JSONSerialization`, then the fixed layout filled from each object's keys (the avatar is
    /// the base64 text the JSON carries) and `mdb_put` in one write transaction.
    func ingest(json: Data) throws -> Int {
        guard let rows = try JSONSerialization.jsonObject(with: json) as? [[String: Any]] else {
            throw Failure(description: "not a JSON array of objects")
        }
        var buffer: [UInt8] = []
        try write { txn in
            for row in rows { try put(row, txn, &buffer) }
        }
        return rows.count
    }

    /// The NDJSON baseline: the text split on LF, each line parsed by `JSONSerialization` and
    /// put as `ingest(json:)` puts an object, in one write transaction.
    func ingest(jsonLines: Data, sample: () -> Void) throws -> Int? {
        var buffer: [UInt8] = []
        var count = 0
        try write { txn in
            for line in jsonLines.split(separator: UInt8(ascii: "\n")) {
                guard let row = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                    throw Failure(description: "line \(count + 1) is not a JSON object")
                }
                try put(row, txn, &buffer)
                count += 1
                if count & 4095 == 0 { sample() }
            }
        }
        return count
    }

    /// Encodes a parsed object by the fields' known types, as `insertAll` encodes a person, and
    /// puts it under its id.
    private func put(_ row: [String: Any], _ txn: OpaquePointer?, _ buffer: inout [UInt8]) throws {
        buffer.removeAll(keepingCapacity: true)
        func append<T>(_ value: T) { withUnsafeBytes(of: value) { buffer.append(contentsOf: $0) } }
        func append(_ key: String) {
            let text = row[key] as? String ?? ""
            append(UInt32(text.utf8.count))
            buffer.append(contentsOf: text.utf8)
        }
        func number(_ key: String) -> NSNumber { row[key] as? NSNumber ?? 0 }
        let id = number("id").int64Value
        append(id)
        append("firstName")
        append("lastName")
        append("email")
        append(number("age").int64Value)
        append(number("height").doubleValue)
        append(number("score").doubleValue)
        append(UInt8(number("isActive").boolValue ? 1 : 0))
        append(number("createdAt").doubleValue)
        append("avatar")
        try put(txn, id, &buffer)
    }

    /// Calls `body` with the bytes of every record, in key order, in one read transaction.
    private func scan(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn))
        defer { mdb_txn_abort(txn) }
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while rc == 0 {
            try body(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
    }

    func stream(_ body: (Person) throws -> Void) throws {
        try scan { try body(Self.decode($0)) }
    }

    @inline(never)  // a symbol of its own, for profiles
    func fetchAll() throws -> [Person] {
        var people: [Person] = []
        try scan { people.append(Self.decode($0)) }
        return people
    }

    /// The people with `age BETWEEN 30 AND 39`: every record's age is tested in place, and
    /// only the matches are decoded.
    func fetchFiltered() throws -> [Person] {
        var people: [Person] = []
        try scan { bytes in
            let age = Self.age(bytes)
            if age >= 30 && age <= 39 { people.append(Self.decode(bytes)) }
        }
        return people
    }

    /// The ids sorted and without repeats, then an `mdb_get` each, in one read transaction.
    @inline(never)  // a symbol of its own, for profiles
    func fetchIn(_ ids: [Int64]) throws -> [Person] {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn))
        defer { mdb_txn_abort(txn) }
        var people: [Person] = []
        for id in Set(ids).sorted() {
            var keyBits = Self.key(id)
            var value = MDB_val()
            let rc = withUnsafeMutableBytes(of: &keyBits) { keyBytes in
                var key = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                return mdb_get(txn, dbi, &key, &value)
            }
            if rc == 0 {
                people.append(Self.decode(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)))
            }
        }
        return people
    }

    /// Each id in a read transaction of its own, as `fetch(_:id:)` does.
    @inline(never)  // a symbol of its own, for profiles
    func lookUp(_ ids: [Int64]) throws -> Int {
        var found = 0
        for id in ids {
            var txn: OpaquePointer?
            try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn))
            var keyBits = Self.key(id)
            var value = MDB_val()
            let rc = withUnsafeMutableBytes(of: &keyBits) { keyBytes in
                var key = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                return mdb_get(txn, dbi, &key, &value)
            }
            if rc == 0, Self.decode(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)).id == id {
                found += 1
            }
            mdb_txn_abort(txn)
        }
        return found
    }
}
