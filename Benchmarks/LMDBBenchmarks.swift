import CLMDB
import Foundation
import LMDBBackend
import SQLiteBackend
import Storage

/// ObjectStore on LMDB beside a hand-written loop over LMDB's C API on the same data, and beside
/// ObjectStore on SQLite for what LMDB is picked for (bulk loads and key look-ups).
struct LMDBBenchmarks {
    let directory: URL
    let people: [Person]

    func run(_ harness: inout Harness) throws {
        progress("lmdb: \(people.count) records")
        let oursPath = directory.appendingPathComponent("ours.lmdb").path
        let rawPath = directory.appendingPathComponent("raw.lmdb").path
        let sqlitePath = directory.appendingPathComponent("compare.sqlite").path

        let oursInsert = try harness.measure(
            setUp: { remove(oursPath, suffixes: ["", "-lock"]) },
            run: { try ObjectStore(backend: .lmdb(path: oursPath)).save(contentsOf: people) }
        )
        let rawInsert = try harness.measure(
            setUp: { remove(rawPath, suffixes: ["", "-lock"]) },
            run: { try RawLMDB(path: rawPath).insert(people) }
        )
        let sqliteInsert = try harness.measure(
            setUp: { remove(sqlitePath, suffixes: ["", "-wal", "-shm"]) },
            run: { try ObjectStore(backend: .sqlite(path: sqlitePath)).save(contentsOf: people) }
        )
        harness.record(
            backend: "lmdb",
            operation: "insert",
            rows: people.count,
            ours: oursInsert,
            baseline: "raw C API loop",
            baselineTime: rawInsert
        )
        harness.record(
            backend: "lmdb",
            operation: "insert",
            rows: people.count,
            ours: oursInsert,
            baseline: "ObjectStore on SQLite",
            baselineTime: sqliteInsert
        )

        let store = try ObjectStore(backend: .lmdb(path: oursPath))
        let raw = try RawLMDB(path: rawPath)
        let sqlite = try ObjectStore(backend: .sqlite(path: sqlitePath))
        var fetched = 0
        let oursFetch = try harness.measure(run: { fetched = try store.fetchAll(Person.self).count })
        precondition(fetched == people.count, "fetchAll returned \(fetched) records")
        let rawFetch = try harness.measure(run: { fetched = try raw.fetchAll().count })
        precondition(fetched == people.count, "the raw loop returned \(fetched) records")
        harness.record(
            backend: "lmdb",
            operation: "fetchAll",
            rows: people.count,
            ours: oursFetch,
            baseline: "raw cursor loop",
            baselineTime: rawFetch
        )

        // Point look-ups, each in a read transaction of its own.
        let ids = (0..<people.count).map { Int64(($0 &* 7_919) % people.count + 1) }
        func lookUp(_ store: ObjectStore) throws -> Int {
            var found = 0
            for id in ids where try store.fetch(Person.self, id: id) != nil { found += 1 }
            return found
        }
        let oursLookup = try harness.measure(run: { fetched = try lookUp(store) })
        precondition(fetched == ids.count, "fetch(id:) found \(fetched) records")
        let rawLookup = try harness.measure(run: { fetched = try raw.lookUp(ids) })
        precondition(fetched == ids.count, "the raw look-ups found \(fetched) records")
        let sqliteLookup = try harness.measure(run: { fetched = try lookUp(sqlite) })
        precondition(fetched == ids.count, "fetch(id:) on SQLite found \(fetched) records")
        harness.record(
            backend: "lmdb",
            operation: "fetch(id:)",
            rows: ids.count,
            ours: oursLookup,
            baseline: "raw mdb_get",
            baselineTime: rawLookup
        )
        harness.record(
            backend: "lmdb",
            operation: "fetch(id:)",
            rows: ids.count,
            ours: oursLookup,
            baseline: "ObjectStore on SQLite",
            baselineTime: sqliteLookup
        )
    }

    private func remove(_ path: String, suffixes: [String]) {
        for suffix in suffixes { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// The baseline: what a careful programmer writes by hand against LMDB's C API with the same
/// settings the backend uses (NOSUBDIR, NOTLS, synchronous commits): big-endian keys, a packed
/// record, one write transaction for the load.
final class RawLMDB {
    private var env: OpaquePointer?
    private var dbi: MDB_dbi = 0

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(path: String) throws {
        try check(mdb_env_create(&env))
        try check(mdb_env_set_mapsize(env, 1 << 32))
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

    func insert(_ people: [Person]) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn))
        var buffer: [UInt8] = []
        for person in people {
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
            var key = Self.key(person.id)
            let rc = withUnsafeMutableBytes(of: &key) { keyBytes in
                buffer.withUnsafeMutableBytes { bytes in
                    var keyValue = MDB_val(mv_size: 8, mv_data: keyBytes.baseAddress)
                    var value = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                    return mdb_put(txn, dbi, &keyValue, &value, 0)
                }
            }
            guard rc == 0 else {
                mdb_txn_abort(txn)
                throw Failure(description: String(cString: mdb_strerror(rc)))
            }
        }
        try check(mdb_txn_commit(txn))
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

    func fetchAll() throws -> [Person] {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn))
        defer { mdb_txn_abort(txn) }
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var people: [Person] = []
        var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while rc == 0 {
            people.append(Self.decode(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)))
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        return people
    }

    /// Each id in a read transaction of its own, as `fetch(_:id:)` does.
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
