import Foundation
import SQLiteBackend
import Storage
import Testing

struct SQLiteTransactionTests {
    private struct Abort: Error {}

    @Test func roundTripOfEveryValueKind() throws {
        try withBackend { backend, _ in
            let columns = ["id", "name", "score", "photo", "extra"]
            let rows: [[StorageValue]] = [
                [1, "plain", 1.5, .blob(Data([0, 1, 2, 255])), 42],
                [2, .text("nul\u{0}inside"), .real(-0.25), .blob(Data()), .text("")],
                [3, "ünïcødé 🙂", .null, .null, .real(2.5)],
                [4, "big", .real(1e300), .blob(Data(repeating: 7, count: 10_000)), .integer(Int64.min)],
            ]
            let keys = try backend.write { tx in
                _ = try tx.prepareCollection(peopleSchema)
                return try tx.put(rows, into: "people", columns: columns)
            }
            #expect(keys == [1, 2, 3, 4])
            let read = try backend.read { tx in
                try tx.rows(ScanRequest(collection: "people", columns: columns, ordering: [.ascending("id")]))
            }
            #expect(read == rows)
            #expect(try backend.read { try $0.count(in: "people", where: nil) } == 4)
            #expect(try backend.read { try $0.count(in: "people", where: Column("photo") == nil) } == 1)

            let deleted = try backend.write { tx in
                (try tx.delete(from: "people", key: 2), try tx.delete(from: "people", key: 2))
            }
            #expect(deleted == (true, false))
            let remaining = try backend.write { tx in
                try tx.deleteAll(from: "people", where: Column("id") >= 3)
            }
            #expect(Set(remaining) == [3, 4])
            #expect(try backend.read { try $0.column("id", of: "people") } == [1])
        }
    }

    @Test func missingCollectionReadsAsEmpty() throws {
        try withBackend { backend, _ in
            let rows = try backend.read { tx in try tx.rows(ScanRequest(collection: "nothing", columns: ["a"])) }
            #expect(rows.isEmpty)
            #expect(try backend.read { try $0.count(in: "nothing", where: nil) } == 0)
            #expect(try backend.read { try $0.schema(of: "nothing") } == nil)
            #expect(try backend.write { try $0.deleteAll(from: "nothing", where: nil) } == [])
            #expect(try backend.write { try $0.delete(from: "nothing", key: 1) } == false)
            // SQLite's own tables are not collections.
            #expect(try backend.read { try $0.schema(of: "sqlite_master") } == nil)
        }
    }

    @Test func missingColumnsReadAsNull() throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(peopleSchema)
                try tx.put([[1, "a", .null, .null, .null]], into: "people", columns: peopleSchema.columns.map(\.name))
            }
            let rows = try backend.read { tx in
                try tx.rows(
                    ScanRequest(
                        collection: "people",
                        columns: ["id", "ghost"],
                        predicate: Column("ghost") == nil,
                        ordering: [.ascending("ghost"), .ascending("id")]
                    )
                )
            }
            #expect(rows == [[1, .null]])
            #expect(try backend.read { try $0.count(in: "people", where: Column("ghost") == 1) } == 0)
            #expect(try backend.read { try $0.count(in: "people", where: !(Column("ghost") == 1)) } == 0)
        }
    }

    @Test func autoKeysAreAssignedAndNeverReused() throws {
        try withBackend { backend, _ in
            let schema = CollectionSchema(
                name: "notes",
                columns: [
                    ColumnDefinition(name: CollectionSchema.autoKeyColumn, type: .integer, isNullable: false),
                    ColumnDefinition(name: "text", type: .text),
                ],
                primaryKey: CollectionSchema.autoKeyColumn
            )
            let columns = ["_key", "text"]
            let first = try backend.write { tx in
                _ = try tx.prepareCollection(schema)
                return try tx.put([[.null, "a"], [.null, "b"], [.null, "c"]], into: "notes", columns: columns)
            }
            #expect(first == [1, 2, 3])
            #expect(try backend.write { try $0.delete(from: "notes", key: 3) })
            let next = try backend.write { tx in try tx.put([[.null, "d"]], into: "notes", columns: columns) }
            #expect(next == [4])
            // A given key replaces that record.
            let replaced = try backend.write { tx in try tx.put([[1, "A"]], into: "notes", columns: columns) }
            #expect(replaced == [1])
            #expect(try backend.read { try $0.column("text", of: "notes", key: "_key") } == ["A", "b", "d"])
        }
    }

    @Test func upsertReplacesByPrimaryKey() throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(peopleSchema)
                try tx.put(
                    [[1, "a", 1.0, .null, "x"]],
                    into: "people",
                    columns: ["id", "name", "score", "photo", "extra"]
                )
                try tx.put([[1, "b"]], into: "people", columns: ["id", "name"])
                // A writer of the key alone inserts a record with nothing but its key.
                try tx.put([[2]], into: "people", columns: ["id"])
            }
            let rows = try backend.read { tx in
                try tx.rows(
                    ScanRequest(
                        collection: "people",
                        columns: ["id", "name", "score", "extra"],
                        ordering: [.ascending("id")]
                    )
                )
            }
            // Columns a writer does not name keep their values.
            #expect(rows == [[1, "b", 1.0, "x"], [2, .null, .null, .null]])
        }
    }

    @Test func nullKeyIsRefusedWhenKeysAreNotAssigned() throws {
        try withBackend { backend, _ in
            #expect(
                throwsStorageError(.invalidKey) {
                    try backend.write { tx in
                        _ = try tx.prepareCollection(peopleSchema)
                        try tx.put([[.null, "a"]], into: "people", columns: ["id", "name"])
                    }
                }
            )
        }
    }

    @Test func uniqueIndexViolationThrowsAndWritesNothing() throws {
        try withBackend { backend, _ in
            var schema = peopleSchema
            schema.indexes = [IndexDefinition(["name"], unique: true)]
            let columns = ["id", "name"]
            try backend.write { tx in
                _ = try tx.prepareCollection(schema)
                try tx.put([[1, "a"]], into: "people", columns: columns)
            }
            // The failing put leaves the transaction usable; the body's error rolls all of it back.
            #expect(throws: Abort.self) {
                try backend.write { tx in
                    let writer = try tx.makeWriter(for: "people", columns: columns)
                    try writer.put([3, "c"])
                    do {
                        try writer.put([2, "a"])
                        Issue.record("a duplicate in a unique index was accepted")
                    } catch let error as StorageError {
                        #expect(error.code == .constraintViolation)
                        #expect(error.collection == "people")
                        #expect(error.key == 2)
                    }
                    try writer.put([4, "d"])
                    #expect(try tx.count(in: "people", where: nil) == 3)
                    throw Abort()
                }
            }
            #expect(try backend.read { try $0.column("name", of: "people") } == ["a"])
            // Caught inside, the violation does not stop the rest from committing.
            try backend.write { tx in
                let writer = try tx.makeWriter(for: "people", columns: columns)
                #expect(throws: StorageError.self) { try writer.put([2, "a"]) }
                try writer.put([5, "e"])
            }
            #expect(try backend.read { try $0.column("name", of: "people") } == ["a", "e"])
            // Nulls never conflict.
            _ = try backend.write { tx in try tx.put([[6, .null], [7, .null]], into: "people", columns: columns) }
            #expect(try backend.read { try $0.count(in: "people", where: nil) } == 4)
        }
    }

    @Test func writeIsRolledBackWhenBodyThrows() throws {
        try withBackend { backend, _ in
            try backend.write { tx in _ = try tx.prepareCollection(peopleSchema) }
            #expect(throws: Abort.self) {
                try backend.write { tx in
                    _ = try tx.prepareCollection(
                        CollectionSchema(
                            name: "other",
                            columns: [ColumnDefinition(name: "id", type: .integer)],
                            primaryKey: "id"
                        )
                    )
                    try tx.put([[1, "a"]], into: "people", columns: ["id", "name"])
                    #expect(try tx.count(in: "people", where: nil) == 1)
                    throw Abort()
                }
            }
            #expect(try backend.read { try $0.count(in: "people", where: nil) } == 0)
            #expect(try backend.read { try $0.schema(of: "other") } == nil)
            // The schema cache forgot the rolled-back table too.
            #expect(try backend.write { try $0.schema(of: "other") } == nil)
        }
    }

    @Test func transactionUsedAfterItsClosureThrowsMisuse() throws {
        try withBackend { backend, _ in
            let escaped = try backend.read { $0 }
            #expect(throwsStorageError(.misuse) { _ = try escaped.count(in: "people", where: nil) })
        }
    }

    @Test func inMemoryBackendWorks() throws {
        let backend: SQLiteStorageBackend = try .sqliteInMemory()
        #expect(backend.path == nil)
        try backend.write { tx in
            _ = try tx.prepareCollection(peopleSchema)
            try tx.put([[1, "a"], [2, "b"]], into: "people", columns: ["id", "name"])
        }
        #expect(try backend.read { try $0.column("name", of: "people") } == ["a", "b"])
        #expect(try backend.read { try $0.schema(of: "people")?.primaryKey } == "id")
    }

    @Test func nestedScansOfTheSameQueryDoNotInterfere() throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(peopleSchema)
                try tx.put([[1, "a"], [2, "b"]], into: "people", columns: ["id", "name"])
            }
            let pairs = try backend.read { tx in
                var pairs: [[StorageValue]] = []
                let request = ScanRequest(collection: "people", columns: ["id"], ordering: [.ascending("id")])
                try tx.scan(request) { outer in
                    try tx.scan(request) { inner in
                        pairs.append([outer.value(at: 0), inner.value(at: 0)])
                        return true
                    }
                    return true
                }
                return pairs
            }
            #expect(pairs == [[1, 1], [1, 2], [2, 1], [2, 2]])
        }
    }

    @Test func limitAndEarlyStop() throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(peopleSchema)
                try tx.put((1...10).map { [.integer($0), .text("n\($0)")] }, into: "people", columns: ["id", "name"])
            }
            let limited = try backend.read { tx in
                try tx.rows(ScanRequest(collection: "people", columns: ["id"], ordering: [.descending("id")], limit: 3))
            }
            #expect(limited == [[10], [9], [8]])
            let stopped = try backend.read { tx in
                var seen = 0
                try tx.scan(ScanRequest(collection: "people", columns: ["id"])) { _ in
                    seen += 1
                    return seen < 2
                }
                return seen
            }
            #expect(stopped == 2)
        }
    }
}
