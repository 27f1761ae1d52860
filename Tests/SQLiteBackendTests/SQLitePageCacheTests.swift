import CSQLite
import Foundation
import Storage
import Testing

@testable import SQLiteBackend

/// Bulk loads into indexed collections that outgrow SQLite's default page cache (2 MB) and cross
/// the WAL's automatic checkpoint (1,000 pages).
@Suite struct SQLitePageCacheTests {
    /// An integer key, a unique text column, an indexed integer and a filler.
    static let schema = CollectionSchema(
        name: "members",
        columns: [
            ColumnDefinition(name: "id", type: .integer, isNullable: false),
            ColumnDefinition(name: "email", type: .text, isNullable: false),
            ColumnDefinition(name: "age", type: .integer),
            ColumnDefinition(name: "note", type: .text),
        ],
        primaryKey: "id",
        indexes: [IndexDefinition(["email"], unique: true), IndexDefinition(["age"])]
    )

    /// Record `id`: an email from a hash of it (so emails reach the unique index in no
    /// particular order), an age and a 120-byte note.
    static func record(_ id: Int64) -> [StorageValue] {
        var hash = UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15
        hash ^= hash >> 29
        return [
            .integer(id), .text(String(hash, radix: 36) + "-\(id)@example.com"), .integer(18 + id % 63),
            .text(String(repeating: "n", count: 100) + String(id)),
        ]
    }

    /// 40,000 records (about 10 MB with their indexes: past the readers' 2 MB cache and the
    /// 4 MB at which the WAL is checkpointed) in one transaction, then 20 small ones that rewrite
    /// records: every record is there, once, with its values; the unique index still refuses a
    /// duplicate; the checkpoint copied the pages into the database file; SQLite's own check
    /// passes; and a reopened store reads the same.
    @Test func anIndexedBulkLoadPastTheCacheAndTheCheckpointKeepsEveryRecord() throws {
        let count: Int64 = 40_000
        try withBackend { backend, path in
            try backend.write { transaction in
                _ = try transaction.prepareCollection(Self.schema)
                let writer = try transaction.makeWriter(for: "members", columns: ["id", "email", "age", "note"])
                try writer.expectRecords(Int(count))
                for id in 1...count { try writer.put(Self.record(id)) }
            }
            var attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.size] as? Int ?? 0) > 4_096 * 1_000, "the checkpoint wrote the database file")
            // Later small commits rewrite records: their emails move within the unique index.
            for round in 0..<20 {
                try backend.write { transaction in
                    let writer = try transaction.makeWriter(for: "members", columns: ["id", "email"])
                    for id in stride(from: Int64(round + 1), through: count, by: 2_000) {
                        try writer.put([.integer(id), .text("moved-\(id)@example.com")])
                    }
                }
            }
            func expected(_ id: Int64) -> [StorageValue] {
                var values = Self.record(id)
                if (id - 1) % 2_000 < 20 { values[1] = .text("moved-\(id)@example.com") }
                return values
            }
            func verify(_ backend: SQLiteStorageBackend, _ context: String) throws {
                let rows = try backend.read { transaction in
                    try transaction.rows(
                        ScanRequest(
                            collection: "members",
                            columns: ["id", "email", "age", "note"],
                            ordering: [.ascending("id")]
                        )
                    )
                }
                #expect(rows.count == Int(count), "\(context)")
                var mismatches = 0
                for (offset, row) in rows.enumerated() where row != expected(Int64(offset + 1)) { mismatches += 1 }
                #expect(mismatches == 0, "\(context)")
                let byEmail = try backend.read { transaction in
                    try transaction.column(
                        "id",
                        of: "members",
                        where: .compare("email", .equal, .text("moved-2001@example.com"))
                    )
                }
                #expect(byEmail == [.integer(2_001)], "\(context)")
                #expect(
                    throwsStorageError(.constraintViolation) {
                        try backend.write { transaction in
                            try transaction.put(
                                [expected(7)],
                                into: "members",
                                columns: ["id", "email", "age", "note"]
                            )
                            try transaction.put(
                                [[.integer(count + 1), expected(7)[1], .integer(30), .null]],
                                into: "members",
                                columns: ["id", "email", "age", "note"]
                            )
                        }
                    },
                    "\(context)"
                )
            }
            try verify(backend, "open")
            try backend.close()
            attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.size] as? Int ?? 0) > 4_096 * 2_000)
            #expect(try integrityCheck(path) == "ok")
            try verify(try SQLiteStorageBackend(path: path), "reopened")
        }
    }

    /// `PRAGMA integrity_check` on a connection of its own.
    private func integrityCheck(_ path: String) throws -> String {
        var database: OpaquePointer?
        try #require(sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(database) }
        var statement: OpaquePointer?
        try #require(sqlite3_prepare_v2(database, "PRAGMA integrity_check", -1, &statement, nil) == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        try #require(sqlite3_step(statement) == SQLITE_ROW)
        return String(cString: sqlite3_column_text(statement, 0))
    }
}
