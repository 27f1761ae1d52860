import Foundation
import Storage
import Testing

/// A record whose optional columns hold every storage class: queried with random predicates,
/// orderings and pages, every backend must select, count and order what the shared evaluator
/// (`PredicateEvaluator`, SQLite's semantics) does.
struct MixedRecord: Codable, Equatable, StorableModel {
    static let collectionName = "mixed_records"
    static let indexes: [IndexDefinition] = [.init(["a"]), .init(["s", "a"]), .init(["r"])]
    var id: Int64
    var a: Int?
    var r: Double?
    var s: String?
    var f: Bool?
    var d: Data?

    static let columns = ["id", "a", "r", "s", "f", "d"]
    /// The columns' stored types: a query's values are converted with their affinity first.
    static let types: [String: ColumnType] = [
        "id": .integer, "a": .integer, "r": .real, "s": .text, "f": .integer, "d": .blob,
    ]

    /// The value stored in `column`, as the evaluator sees it (-0.0 is stored as 0.0).
    func value(_ column: String) -> StorageValue {
        switch column {
        case "id": .integer(id)
        case "a": a.map { .integer(Int64($0)) } ?? .null
        case "r": r.map { .real($0 == 0 ? 0 : $0) } ?? .null
        case "s": s.map { .text($0) } ?? .null
        case "f": f.map { .integer($0 ? 1 : 0) } ?? .null
        case "d": d.map { .blob($0) } ?? .null
        default: .null
        }
    }
}

/// Values for the random records and queries: near each other across the storage classes, with
/// the edges where engines differ (an integer a double cannot hold, -0.0, infinities, case and
/// non-ASCII letters, text that reads as a number, LIKE's wildcards as data, empty text and blobs).
private enum MixedValues {
    static let integers: [Int64] = [-3, -1, 0, 1, 2, 3, 7, 10, 12, 9_007_199_254_740_993, .max, .min]
    static let reals: [Double] = [
        -2.75, -1, -0.0, 0, 0.5, 1, 2, 2.5, 3.25, 10, 9_007_199_254_740_992, .infinity, -.infinity,
    ]
    static let texts = ["", "a", "A", "ab", "aB", "b", "é", "É", "10", "2.5", "a%", "_b", "zz", "a\u{1F600}"]
    static let blobs = [Data(), Data([0]), Data([1, 2]), Data([97]), Data([255])]
    static let patterns = ["a%", "%b", "_", "%", "A_", "1%", "%.5", "é%", "É%", "", "%\u{1F600}", "__", "a%b"]

    static func any(_ random: inout SeededGenerator) -> StorageValue {
        switch Int.random(in: 0..<9, using: &random) {
        case 0, 1: .integer(integers.randomElement(using: &random)!)
        case 2, 3: .real(reals.randomElement(using: &random)!)
        case 4, 5, 6: .text(texts.randomElement(using: &random)!)
        case 7: .blob(blobs.randomElement(using: &random)!)
        default: Bool.random(using: &random) ? .null : .real(.nan)
        }
    }

    static func record(_ id: Int64, _ random: inout SeededGenerator) -> MixedRecord {
        func maybe<V>(_ make: () -> V) -> V? { Int.random(in: 0..<4, using: &random) == 0 ? nil : make() }
        return MixedRecord(
            id: id,
            a: maybe { Int(integers.prefix(10).randomElement(using: &random)!) },
            r: maybe { reals.randomElement(using: &random)! },
            s: maybe { texts.randomElement(using: &random)! },
            f: maybe { Bool.random(using: &random) },
            d: maybe { blobs.randomElement(using: &random)! }
        )
    }

    static func predicate(_ depth: Int, _ random: inout SeededGenerator) -> StoragePredicate {
        if depth > 0 && Int.random(in: 0..<3, using: &random) > 0 {
            let lhs = predicate(depth - 1, &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return lhs && predicate(depth - 1, &random)
            case 1: return lhs || predicate(depth - 1, &random)
            default: return !lhs
            }
        }
        let column = MixedRecord.columns.randomElement(using: &random)!
        switch Int.random(in: 0..<12, using: &random) {
        case 0: return .isNull(column)
        case 1, 2: return .like(column, patterns.randomElement(using: &random)!)
        case 3: return .in(column, (0..<Int.random(in: 0...4, using: &random)).map { _ in any(&random) })
        case 4: return .constant(Bool.random(using: &random))
        default:
            let comparisons: [StoragePredicate.Comparison] = [
                .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual,
            ]
            return .compare(column, comparisons.randomElement(using: &random)!, any(&random))
        }
    }
}

// Four versions of one model, as releases of an app (or two apps) might declare it: each writes
// its own columns, and the columns' types never conflict.
struct EvolvingA: Codable, StorableModel {
    static let collectionName = "evolving"
    var id: Int64
    var a: Int
}

struct EvolvingB: Codable, StorableModel {
    static let collectionName = "evolving"
    var id: Int64
    var a: Int
    var b: String?
}

struct EvolvingC: Codable, StorableModel {
    static let collectionName = "evolving"
    var id: Int64
    var c: Double
    var b: String?
}

struct EvolvingD: Codable, StorableModel {
    static let collectionName = "evolving"
    var id: Int64
    var d: Data
}

/// The records `records` whose values match `predicate` as the store sees it: each value
/// converted with its column's affinity first, then the evaluator.
private func matching(_ records: [MixedRecord], _ predicate: StoragePredicate?) -> [MixedRecord] {
    let stored = predicate?.mapValues { column, value in value.applyingAffinity(MixedRecord.types[column]!) }
    return records.filter { record in PredicateEvaluator.matches(stored) { record.value($0) } }
}

extension ConformanceSuite {
    /// Checks driven by a seeded generator against a model kept beside the store: every query
    /// against the shared evaluator, random writes and transactions against a dictionary, and
    /// versions of a model written by two stores against the columns each wrote.
    static let randomChecks: [ConformanceCheck] = [
        check("each comparison, LIKE and IN with a value of each storage class selects what the evaluator does") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            var random = SeededGenerator(seed: 1_066)
            let records = (1...120).map { MixedValues.record(Int64($0), &random) }
            try store.save(contentsOf: records)
            let comparisons: [StoragePredicate.Comparison] = [
                .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual,
            ]
            let values: [StorageValue] =
                [.null, .real(.nan)] + MixedValues.integers.map { .integer($0) } + MixedValues.reals.map { .real($0) }
                + MixedValues.texts.map { .text($0) } + MixedValues.blobs.map { .blob($0) }
            var predicates: [StoragePredicate] = []
            for column in MixedRecord.columns {
                predicates.append(.isNull(column))
                for value in values {
                    for comparison in comparisons { predicates.append(.compare(column, comparison, value)) }
                    predicates.append(.in(column, [value]))
                }
                for pattern in MixedValues.patterns { predicates.append(.like(column, pattern)) }
            }
            // Gathered, so that a failure names every predicate that differs, one per line.
            var differing: [String] = []
            for predicate in predicates {
                for tested in [predicate, .not(predicate)] {
                    let expected = matching(records, tested).map(\.id)
                    let found = try store.fetchAll(MixedRecord.self, where: tested).map(\.id)
                    if found != expected {
                        let missing = Set(expected).subtracting(found).sorted()
                        let extra = Set(found).subtracting(expected).sorted()
                        differing.append("\(tested): missing \(missing.prefix(5)), extra \(extra.prefix(5))")
                    }
                }
            }
            #expect(differing.isEmpty, "\(differing.count) differ:\n\(differing.joined(separator: "\n"))")
        },
        check("random queries select, count, order and page what the shared evaluator does") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            var random = SeededGenerator(seed: 2_026)
            var records = (1...160).map { MixedValues.record(Int64($0), &random) }
            try store.save(contentsOf: records)
            for round in 0..<300 {
                let predicate = Int.random(in: 0..<5, using: &random) == 0 ? nil : MixedValues.predicate(2, &random)
                var ordering: [Ordering] = []
                for _ in 0..<Int.random(in: 0...2, using: &random) {
                    let column = MixedRecord.columns.randomElement(using: &random)!
                    ordering.append(Ordering(column: column, descending: Bool.random(using: &random)))
                }
                let limit = Bool.random(using: &random) ? Int.random(in: 0...25, using: &random) : nil
                let offset = Bool.random(using: &random) ? Int.random(in: 0...40, using: &random) : 0
                let matching = matching(records, predicate)
                // Ties are broken by the key, ascending.
                let sorted = matching.sorted { lhs, rhs in
                    if PredicateEvaluator.precedes(ordering, { lhs.value($0) }, { rhs.value($0) }) { return true }
                    if PredicateEvaluator.precedes(ordering, { rhs.value($0) }, { lhs.value($0) }) { return false }
                    return lhs.id < rhs.id
                }
                let page = sorted.dropFirst(offset).prefix(limit ?? Int.max).map(\.id)
                let label =
                    "round \(round): \(String(describing: predicate)) \(ordering) limit \(String(describing: limit)) offset \(offset)"
                let found = try store.fetchAll(
                    MixedRecord.self,
                    where: predicate,
                    orderBy: ordering,
                    limit: limit,
                    offset: offset
                )
                #expect(found.map(\.id) == page, "\(label)")
                #expect(try store.count(MixedRecord.self, where: predicate) == matching.count, "\(label)")
                if round % 50 == 49, let predicate {
                    // A delete by the predicate removes exactly the matching records; put them back.
                    #expect(try store.deleteAll(MixedRecord.self, where: predicate) == matching.count, "\(label)")
                    #expect(try store.count(MixedRecord.self) == records.count - matching.count, "\(label)")
                    try store.save(contentsOf: matching)
                }
                if round % 30 == 29 {
                    // Records change between queries: a few rewritten with new values.
                    for _ in 0..<8 {
                        let index = Int.random(in: 0..<records.count, using: &random)
                        records[index] = MixedValues.record(records[index].id, &random)
                        try store.save(records[index])
                    }
                }
            }
            #expect(try store.fetchAll(MixedRecord.self) == records)
        },
        check("random saves, deletes and transactions, some rolled back, leave what a dictionary holds") {
            fixture,
            directory in
            struct Rollback: Error {}
            var random = SeededGenerator(seed: 4_242)
            var model: [Int64: MixedRecord] = [:]
            var store = try fixture.openStore(in: directory)
            func someID() -> Int64 { Int64.random(in: 1...60, using: &random) }
            for step in 0..<400 {
                let label = "step \(step)"
                switch Int.random(in: 0..<10, using: &random) {
                case 0, 1, 2:
                    let record = MixedValues.record(someID(), &random)
                    try store.save(record)
                    model[record.id] = record
                case 3:
                    // A batch that names one key twice: the later value wins.
                    let batch = (0..<Int.random(in: 1...12, using: &random)).map { _ in
                        MixedValues.record(someID(), &random)
                    }
                    try store.save(contentsOf: batch)
                    for record in batch { model[record.id] = record }
                case 4:
                    let id = someID()
                    #expect(
                        try store.delete(MixedRecord.self, id: id) == (model.removeValue(forKey: id) != nil),
                        "\(label)"
                    )
                case 5:
                    let predicate = MixedValues.predicate(1, &random)
                    let doomed = matching(Array(model.values), predicate).map(\.id)
                    #expect(
                        try store.deleteAll(MixedRecord.self, where: predicate) == doomed.count,
                        "\(label) \(predicate)"
                    )
                    for id in doomed { model[id] = nil }
                case 6, 7:
                    // A transaction of several changes, committed or rolled back by a thrown error.
                    let commits = Bool.random(using: &random)
                    var changed = model
                    do {
                        try store.transaction { transaction in
                            for _ in 0..<Int.random(in: 1...6, using: &random) {
                                if Bool.random(using: &random) {
                                    let record = MixedValues.record(someID(), &random)
                                    try transaction.save(record)
                                    changed[record.id] = record
                                } else {
                                    let id = someID()
                                    let deleted = try transaction.delete(MixedRecord.self, id: id)
                                    #expect(deleted == (changed.removeValue(forKey: id) != nil), "\(label)")
                                }
                                // The transaction reads its own changes.
                                #expect(try transaction.count(MixedRecord.self) == changed.count, "\(label)")
                            }
                            if !commits { throw Rollback() }
                        }
                    } catch is Rollback {}
                    if commits { model = changed }
                case 8:
                    let id = someID()
                    #expect(try store.fetch(MixedRecord.self, id: id) == model[id], "\(label)")
                default:
                    // Closed and opened again: everything committed is there.
                    try store.close()
                    store = try fixture.openStore(in: directory)
                }
                if step % 25 == 24 {
                    #expect(try store.fetchAll(MixedRecord.self) == model.values.sorted { $0.id < $1.id }, "\(label)")
                }
            }
            #expect(try store.fetchAll(MixedRecord.self) == model.values.sorted { $0.id < $1.id })
            #expect(try store.count(MixedRecord.self) == model.count)
        },
        check("versions of a model saved in turn by two stores keep every column another version wrote") {
            fixture,
            directory in
            var random = SeededGenerator(seed: 1_848)
            var stores = [try fixture.openStore(in: directory), try fixture.openStore(in: directory)]
            // What each record's columns hold; a column a record never had reads as null.
            var model: [Int64: [String: StorageValue]] = [:]
            func text() -> String? {
                Bool.random(using: &random) ? nil : String(Int.random(in: 0..<1_000, using: &random))
            }
            for step in 0..<300 {
                let label = "step \(step)"
                let store = stores[Int.random(in: 0..<2, using: &random)]
                let id = Int64.random(in: 1...20, using: &random)
                var written: [String: StorageValue] = [:]
                switch Int.random(in: 0..<8, using: &random) {
                case 0:
                    let value = EvolvingA(id: id, a: Int.random(in: -99...99, using: &random))
                    try store.save(value)
                    written = ["a": .integer(Int64(value.a))]
                case 1:
                    let value = EvolvingB(id: id, a: Int.random(in: -99...99, using: &random), b: text())
                    try store.save(value)
                    written = ["a": .integer(Int64(value.a)), "b": value.b.map { .text($0) } ?? .null]
                case 2:
                    let value = EvolvingC(id: id, c: Double(Int.random(in: -99...99, using: &random)) / 4, b: text())
                    try store.save(value)
                    written = ["c": .real(value.c), "b": value.b.map { .text($0) } ?? .null]
                case 3:
                    let value = EvolvingD(
                        id: id,
                        d: Data((0..<Int.random(in: 0...4, using: &random)).map { UInt8($0) })
                    )
                    try store.save(value)
                    written = ["d": .blob(value.d)]
                case 4:
                    let existed = model.removeValue(forKey: id) != nil
                    #expect(try store.delete(EvolvingA.self, id: id) == existed, "\(label)")
                    continue
                case 5 where step % 40 == 5:
                    // Dropped by one store; the other saves and reads on.
                    _ = try store.drop(collection: "evolving")
                    model = [:]
                    continue
                case 6 where step % 30 == 6:
                    // One store closed and opened again.
                    let index = Int.random(in: 0..<2, using: &random)
                    try stores[index].close()
                    stores[index] = try fixture.openStore(in: directory)
                    continue
                default:
                    let reader = stores[Int.random(in: 0..<2, using: &random)]
                    let rows = try reader.fetchDictionaries(from: "evolving", orderBy: [.ascending("id")])
                    let columns = ["a", "b", "c", "d"]
                    let found = rows.map { row in
                        [row["id"] ?? .null] + columns.map { row[$0] ?? .null }
                    }
                    let expected = model.keys.sorted().map { key in
                        [StorageValue.integer(key)] + columns.map { model[key]?[$0] ?? .null }
                    }
                    #expect(found == expected, "\(label)")
                    // A version reads each record that holds its required columns.
                    for (key, columns) in model where columns["a"].map({ !$0.isNull }) ?? false {
                        let value = try reader.fetch(EvolvingB.self, id: key)
                        #expect(value.map { .integer(Int64($0.a)) } == columns["a"], "\(label) \(key)")
                        #expect(value?.b.map { StorageValue.text($0) } ?? .null == columns["b"] ?? .null, "\(label)")
                    }
                    continue
                }
                model[id, default: [:]].merge(written) { _, new in new }
            }
        },
    ]
}
