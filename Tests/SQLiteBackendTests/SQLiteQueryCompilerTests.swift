import Foundation
import SQLiteBackend
import Storage
import Testing

struct SQLiteQueryCompilerTests {
    private static let schema = CollectionSchema(
        name: "mixed",
        columns: [
            ColumnDefinition(name: "id", type: .integer),
            ColumnDefinition(name: "i", type: .integer),
            ColumnDefinition(name: "r", type: .real),
            ColumnDefinition(name: "t", type: .text),
            ColumnDefinition(name: "u", type: .untyped),
        ],
        primaryKey: "id"
    )
    private static let columns = ["id", "i", "r", "t", "u"]
    private static let rows: [[StorageValue]] = [
        [1, 1, 1.0, "abc", 1],
        [2, 2, 2.5, "ABCD", 2.5],
        [3, .null, .null, .null, .null],
        [4, 3, -1.0, "a_c", "10"],
        [5, 2, 2.0, "xbz", .blob(Data("b".utf8))],
        [6, .null, 3.0, "", "abc"],
        [7, -5, .null, "100%", 3],
    ]

    private static let predicates: [StoragePredicate] = {
        var predicates: [StoragePredicate] = []
        predicates.append(Column("i") > 1)
        predicates.append(Column("i") == 2.0)
        predicates.append(Column("i") < 2.5)
        predicates.append(Column("r") >= 2)
        predicates.append(Column("r") != 2.5)
        predicates.append(!(Column("i") > 1))
        predicates.append(Column("i") > 1 || Column("t") == nil)
        predicates.append(!(Column("i") > 1 || Column("r") < 0))
        predicates.append(!(Column("i") > 1 && Column("r") < 3))
        predicates.append(Column("t").like("a_c%"))
        predicates.append(Column("t").like("%B%"))
        predicates.append(Column("t").like("100%"))
        predicates.append(Column("t").like("_"))
        predicates.append(Column("u").like("1%"))
        predicates.append(Column("u") > 1)
        predicates.append(Column("u") < "a")
        predicates.append(Column("u") == 2.5)
        predicates.append(Column("u") > Data("a".utf8))
        predicates.append(Column("t") > "a")
        predicates.append(Column("i").in([1, 3, 5]))
        predicates.append(!Column("i").in([1, 3]))
        predicates.append(Column("i") == 1 || Column("i") == 2 || Column("r") == 3)
        predicates.append(Column("missing") == nil)
        predicates.append(Column("missing") == 1)
        predicates.append(!(Column("missing") == 1))
        predicates.append(Column("missing") == 1 || Column("i") == 1)
        predicates.append(StoragePredicate.constant(true))
        predicates.append(StoragePredicate.constant(false) || Column("i") == 2)
        predicates.append(!StoragePredicate.constant(false) && Column("u") != 1)
        // IN lists: short ones bind each value, long ones go through json_each, with the values
        // JSON cannot carry exactly (blobs, text with a NUL, fractional reals) bound one by one.
        let noise = (100..<200).map { StorageValue.integer($0) }
        for list: [StorageValue] in [[1, 3], noise + [1, 3]] {
            predicates.append(.in("i", list))
            predicates.append(.not(.in("i", list)))
            predicates.append(.in("i", list + [.null]))
            predicates.append(.not(.in("i", list + [.null])))
            predicates.append(.in("r", list + [2.5, -1.0, .real(.nan)]))
            predicates.append(.in("t", list + ["abc", "a\"\\\n", "x\0y", "100%", ""]))
            predicates.append(.in("u", list + [.blob(Data("b".utf8)), "10", 2.5]))
            predicates.append(.not(.in("u", list + [.blob(Data("b".utf8)), "abc"])))
            predicates.append(.in("missing", list))
        }
        predicates.append(.in("i", []))
        predicates.append(.not(.in("i", [])))
        predicates.append(.not(.in("missing", [])))
        // Chains: 10,000 terms compile to balanced SQL; 40,000 bind more values than SQLite
        // takes, and are filtered outside it.
        for count in [10_000, 40_000] {
            predicates.append((0..<count).reduce(Column("i") == -9) { chain, value in chain || Column("r") == value })
            predicates.append((0..<count).reduce(Column("i") != -9) { chain, value in chain && Column("u") != value })
        }
        return predicates
    }()

    @Test func predicatesAgreeWithTheEvaluator() throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(Self.schema)
                try tx.put(Self.rows, into: "mixed", columns: Self.columns)
            }
            // Records as stored (after SQLite's column affinity), keyed by column name.
            let stored = try backend.read { tx in
                try tx.rows(ScanRequest(collection: "mixed", columns: Self.columns, ordering: [.ascending("id")]))
            }
            let records = stored.map { Dictionary(uniqueKeysWithValues: zip(Self.columns, $0)) }
            for (number, predicate) in Self.predicates.enumerated() {
                // As ObjectStore does, compared values get the column's affinity first.
                let query = predicate.mapValues { column, value in
                    value.applyingAffinity(Self.schema.column(named: column)?.type ?? .untyped)
                }
                let expected = records.filter { record in PredicateEvaluator.matches(query, { record[$0] ?? .null }) }
                    .map { $0["id"]! }
                let actual = try backend.read { try $0.column("id", of: "mixed", where: query) }
                // By number: describing a chain of 40,000 terms would recurse 40,000 deep.
                #expect(actual == expected, "predicate \(number)")
                let count = try backend.read { try $0.count(in: "mixed", where: query) }
                #expect(count == expected.count, "predicate \(number)")
            }
        }
    }

    @Test func orderingAgreesWithTheEvaluator() throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(Self.schema)
                try tx.put(Self.rows, into: "mixed", columns: Self.columns)
            }
            let stored = try backend.read { tx in
                try tx.rows(ScanRequest(collection: "mixed", columns: Self.columns))
            }
            let records = stored.map { Dictionary(uniqueKeysWithValues: zip(Self.columns, $0)) }
            for column in ["i", "r", "t", "u"] {
                for ordering in [[Ordering.ascending(column)], [.descending(column)]] {
                    let full = ordering + [.ascending("id")]
                    let expected = records.sorted { lhs, rhs in
                        PredicateEvaluator.precedes(full, { lhs[$0] ?? .null }, { rhs[$0] ?? .null })
                    }
                    .map { $0["id"]! }
                    let actual = try backend.read { tx in
                        try tx.rows(ScanRequest(collection: "mixed", columns: ["id"], ordering: full)).map { $0[0] }
                    }
                    #expect(actual == expected, "\(full)")
                }
            }
        }
    }

    @Test func longInListCompiles() throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(Self.schema)
                try tx.put(Self.rows, into: "mixed", columns: Self.columns)
            }
            let values = (0..<5000).map { Int64($0) }
            #expect(try backend.read { try $0.count(in: "mixed", where: Column("id").in(values)) } == 7)
        }
    }

    @Test func deleteAllBeyondTheParameterLimit() throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(Self.schema)
                try tx.put(Self.rows, into: "mixed", columns: Self.columns)
            }
            let chain = (0..<40_000).reduce(Column("id") == 2) { chain, value in chain || Column("t") == "no\(value)" }
            let deleted = try backend.write { try $0.deleteAll(from: "mixed", where: chain || Column("id") == 5) }
            #expect(deleted.sorted { StorageValue.compare($0, $1) < 0 } == [2, 5])
            #expect(try backend.read { try $0.count(in: "mixed", where: nil) } == Self.rows.count - 2)
        }
    }
}

extension SQLiteQueryCompilerTests {
    /// A predicate nested `levels` deep in the shapes whose SQL nests deepest (NOT, LIKE and a long
    /// IN list's sub-query at every level), straight to the backend: up to the compiler's nesting
    /// limit it runs as SQL, past it (where SQLite's parser stack overflows) it is filtered
    /// outside SQLite, and every depth answers as the evaluator does.
    @Test func deeplyNestedPredicatesAgreeWithTheEvaluatorAtEveryDepth() throws {
        try withBackend { backend, _ in
            try backend.write { tx in
                _ = try tx.prepareCollection(Self.schema)
                try tx.put(Self.rows, into: "mixed", columns: Self.columns)
            }
            let stored = try backend.read { tx in
                try tx.rows(ScanRequest(collection: "mixed", columns: Self.columns, ordering: [.ascending("id")]))
            }
            let records = stored.map { Dictionary(uniqueKeysWithValues: zip(Self.columns, $0)) }
            let longList = (100..<200).map { StorageValue.integer($0) } + [1, 3]
            var predicate: StoragePredicate = Column("t").like("a%")
            for level in 0..<40 {
                switch level % 3 {
                case 0: predicate = !predicate && .in("i", longList)
                case 1: predicate = predicate || Column("t").like("%B%")
                default: predicate = .not(.in("u", longList)) && predicate
                }
                let expected = records.filter { record in PredicateEvaluator.matches(predicate, { record[$0] ?? .null })
                }
                .map { $0["id"]! }
                let actual = try backend.read { try $0.column("id", of: "mixed", where: predicate) }
                #expect(actual == expected, "\(level + 1) levels")
                let count = try backend.read { try $0.count(in: "mixed", where: predicate) }
                #expect(count == expected.count, "\(level + 1) levels")
            }
        }
    }
}
