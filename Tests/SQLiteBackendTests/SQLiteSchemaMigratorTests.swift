import Foundation
import SQLiteBackend
import Storage
import Testing

struct SQLiteSchemaMigratorTests {
    @Test func preparingTwiceChangesNothing() throws {
        try withBackend { backend, _ in
            let first = try backend.write { try $0.prepareCollection(peopleSchema) }
            let second = try backend.write { try $0.prepareCollection(peopleSchema) }
            #expect(first == second)
            #expect(first.columns.map(\.name) == peopleSchema.columns.map(\.name))
            #expect(first.columns.map(\.type) == peopleSchema.columns.map(\.type))
            #expect(try backend.read { try $0.schema(of: "people") } == first)
        }
    }

    @Test func addedColumnReadsNullForOldRecords() throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(peopleSchema)
                try tx.put([[1, "a"]], into: "people", columns: ["id", "name"])
            }
            var evolved = peopleSchema
            evolved.columns.append(ColumnDefinition(name: "age", type: .integer, isNullable: false))
            evolved.indexes = [IndexDefinition(["age"])]
            let stored = try backend.write { tx in
                let stored = try tx.prepareCollection(evolved)
                try tx.put([[2, "b", 30]], into: "people", columns: ["id", "name", "age"])
                return stored
            }
            #expect(stored.column(named: "age")?.type == .integer)
            #expect(stored.column(named: "age")?.isNullable == true)
            #expect(stored.indexes == [IndexDefinition(["age"])])
            let ages = try backend.read { tx in try tx.column("age", of: "people") }
            #expect(ages == [StorageValue.null, 30])
        }
    }

    @Test func integerColumnWidensToRealKeepingValues() throws {
        try withBackend { backend, _ in
            let schema = CollectionSchema(
                name: "measurements",
                columns: [
                    ColumnDefinition(name: CollectionSchema.autoKeyColumn, type: .integer),
                    ColumnDefinition(name: "value", type: .integer),
                    ColumnDefinition(name: "label", type: .text),
                ],
                primaryKey: CollectionSchema.autoKeyColumn,
                indexes: [IndexDefinition(["label"], unique: true)]
            )
            let columns = ["_key", "value", "label"]
            try backend.write { tx in
                _ = try tx.prepareCollection(schema)
                let rows: [[StorageValue]] = [[.null, 1, "a"], [.null, 2, "b"], [.null, .null, "c"]]
                try tx.put(rows, into: "measurements", columns: columns)
                _ = try tx.delete(from: "measurements", key: 3)
            }
            var widened = schema
            widened.columns[1].type = .real
            let stored = try backend.write { try $0.prepareCollection(widened) }
            #expect(stored.column(named: "value")?.type == .real)
            #expect(stored.indexes == schema.indexes)
            let values = try backend.read { tx in try tx.column("value", of: "measurements", key: "_key") }
            #expect(values == [StorageValue.real(1), StorageValue.real(2)])
            // The key sequence survived the rebuild, and so did the unique index.
            let key = try backend.write { tx in
                try tx.put([[.null, 2.5, "d"]], into: "measurements", columns: columns)
            }
            #expect(key == [4])
            #expect(
                throwsStorageError(.constraintViolation) {
                    _ = try backend.write { tx in try tx.put([[.null, 1, "a"]], into: "measurements", columns: columns)
                    }
                }
            )
        }
    }

    @Test func hostileIdentifiersAreQuoted() throws {
        try withBackend { backend, _ in
            let table = "a\"b\"; DROP TABLE x; --"
            let column = "c\"d"
            let schema = CollectionSchema(
                name: table,
                columns: [ColumnDefinition(name: "id", type: .text), ColumnDefinition(name: column, type: .integer)],
                primaryKey: "id",
                indexes: [IndexDefinition([column], unique: true)]
            )
            let stored = try backend.write { tx in
                let stored = try tx.prepareCollection(schema)
                try tx.put([["k1", 1], ["k2", 2]], into: table, columns: ["id", column])
                return stored
            }
            #expect(stored.columns.map(\.name) == ["id", column])
            #expect(stored.indexes == schema.indexes)
            let rows = try backend.read { tx in
                try tx.rows(
                    ScanRequest(
                        collection: table,
                        columns: ["id", column],
                        predicate: Column(column) > 1,
                        ordering: [.descending(column)]
                    )
                )
            }
            #expect(rows == [["k2", 2]])
            #expect(try backend.write { try $0.deleteAll(from: table, where: Column(column) == 1) } == ["k1"])
            #expect(try backend.read { try $0.count(in: table, where: nil) } == 1)
        }
    }

    @Test func changingThePrimaryKeyIsRefused() throws {
        try withBackend { backend, _ in
            try backend.write { tx in _ = try tx.prepareCollection(peopleSchema) }
            var other = peopleSchema
            other.primaryKey = "name"
            #expect(
                throwsStorageError(.schemaMismatch) { try backend.write { tx in _ = try tx.prepareCollection(other) } }
            )
        }
    }

    @Test func schemaChangedByAnotherConnectionIsNoticed() throws {
        try withBackend { first, path in
            _ = try first.write { try $0.prepareCollection(peopleSchema) }
            #expect(try first.read { try $0.schema(of: "people")?.column(named: "age") } == nil)
            // Another backend on the same file (as another process would) adds a column.
            var evolved = peopleSchema
            evolved.columns.append(ColumnDefinition(name: "age", type: .integer))
            let second = try SQLiteStorageBackend(path: path)
            _ = try second.write { try $0.prepareCollection(evolved) }
            // The first backend's cached schema is stale; it must not add the column again.
            let stored = try first.write { try $0.prepareCollection(evolved) }
            #expect(stored.column(named: "age")?.type == .integer)
            #expect(try first.read { try $0.schema(of: "people") } == stored)
        }
    }

    @Test func reopenedDatabaseKeepsDataAndSchema() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/reopen.sqlite"
            var schema = peopleSchema
            schema.indexes = [IndexDefinition(["name"]), IndexDefinition(["score", "name"], unique: true)]
            do {
                let backend = try SQLiteStorageBackend(path: path)
                try backend.write { tx in
                    _ = try tx.prepareCollection(schema)
                    try tx.put(
                        [[1, "a", 0.5, .blob(Data([1])), "x"]],
                        into: "people",
                        columns: ["id", "name", "score", "photo", "extra"]
                    )
                }
            }
            let backend = try SQLiteStorageBackend(path: path)
            let stored = try #require(try backend.read { try $0.schema(of: "people") })
            #expect(stored.primaryKey == "id")
            #expect(stored.columns.map(\.name) == ["id", "name", "score", "photo", "extra"])
            #expect(stored.columns.map(\.type) == [.integer, .text, .real, .blob, .untyped])
            #expect(stored.indexes == schema.indexes)
            let rows = try backend.read { tx in
                try tx.rows(ScanRequest(collection: "people", columns: ["id", "name", "score", "photo", "extra"]))
            }
            #expect(rows == [[1, "a", 0.5, .blob(Data([1])), "x"]])
        }
    }
}
