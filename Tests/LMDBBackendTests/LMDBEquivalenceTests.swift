import Foundation
import LMDBBackend
import SQLiteBackend
import Storage
import StorageTestSupport
import Testing

/// Random records with nulls, indexed columns and a text key, queried with random predicates,
/// orderings and limits: LMDB (key ranges, index ranges, the shared evaluator) must return exactly
/// what SQLite returns.
private struct Sample: Codable, Equatable, StorableModel {
    static let indexes: [IndexDefinition] = [.init(["a"]), .init(["s", "a"]), .init(["b"])]
    var id: String
    var a: Int?
    var b: Double?
    var s: String?
}

private func randomValue(for column: String, _ random: inout SeededGenerator) -> StorageValue {
    switch (column, Int.random(in: 0..<10, using: &random)) {
    case (_, 0): return .text(["", "m", "s1", "zz"].randomElement(using: &random)!)
    case (_, 1): return .real(Double(Int.random(in: -20...20, using: &random)) / 4)
    case ("id", _): return .text("k" + String(Int.random(in: 0..<400, using: &random)))
    case ("s", _): return .text(["", "a", "ab", "b", "s1", "s2", "é"].randomElement(using: &random)!)
    default: return .integer(Int64.random(in: -10...10, using: &random))
    }
}

private func randomPredicate(_ depth: Int, _ random: inout SeededGenerator) -> StoragePredicate {
    let columns = ["id", "a", "b", "s"]
    if depth > 0 && Bool.random(using: &random) {
        let lhs = randomPredicate(depth - 1, &random)
        let rhs = randomPredicate(depth - 1, &random)
        switch Int.random(in: 0..<3, using: &random) {
        case 0: return lhs && rhs
        case 1: return lhs || rhs
        default: return !lhs
        }
    }
    let column = columns.randomElement(using: &random)!
    switch Int.random(in: 0..<9, using: &random) {
    case 0: return .isNull(column)
    case 1: return .like(column, ["a%", "%1", "_", "k1%"].randomElement(using: &random)!)
    default:
        let comparisons: [StoragePredicate.Comparison] = [
            .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual,
        ]
        return .compare(column, comparisons.randomElement(using: &random)!, randomValue(for: column, &random))
    }
}

@Test func lmdbAnswersEveryQueryAsSQLiteDoes() throws {
    try TemporaryDirectory.with("lmdb-equivalence") { directory in
        let lmdb = try ObjectStore(backend: .lmdb(path: directory.appendingPathComponent("e.lmdb").path))
        let sqlite = try ObjectStore(backend: .sqlite(path: directory.appendingPathComponent("e.sqlite").path))
        var random = SeededGenerator(seed: 7)
        var samples: [String: Sample] = [:]
        for index in 0..<400 {
            let sample = Sample(
                id: "k\(index)",
                a: Int.random(in: 0..<5, using: &random) == 0 ? nil : Int.random(in: -10...10, using: &random),
                b: Int.random(in: 0..<4, using: &random) == 0
                    ? nil : Double(Int.random(in: -40...40, using: &random)) / 4,
                s: Int.random(in: 0..<4, using: &random) == 0
                    ? nil : ["", "a", "ab", "b", "s1", "s2", "é"].randomElement(using: &random)!
            )
            samples[sample.id] = sample
        }
        try lmdb.save(contentsOf: samples.values)
        try sqlite.save(contentsOf: samples.values)
        for round in 0..<400 {
            let predicate = Bool.random(using: &random) ? randomPredicate(2, &random) : nil
            var ordering: [Ordering] = []
            for _ in 0..<Int.random(in: 0...2, using: &random) {
                let column = ["id", "a", "b", "s"].randomElement(using: &random)!
                ordering.append(Ordering(column: column, descending: Bool.random(using: &random)))
            }
            let limit = Bool.random(using: &random) ? Int.random(in: 0...30, using: &random) : nil
            let expected = try sqlite.fetchAll(Sample.self, where: predicate, orderBy: ordering, limit: limit).map(\.id)
            let actual = try lmdb.fetchAll(Sample.self, where: predicate, orderBy: ordering, limit: limit).map(\.id)
            #expect(
                actual == expected,
                "round \(round): \(String(describing: predicate)) \(ordering) \(String(describing: limit))"
            )
            #expect(try lmdb.count(Sample.self, where: predicate) == sqlite.count(Sample.self, where: predicate))
            if round % 40 == 0 {
                // Deletes by predicate remove the same records.
                let deletedLMDB = try lmdb.deleteAll(Sample.self, where: predicate ?? .constant(false))
                let deletedSQLite = try sqlite.deleteAll(Sample.self, where: predicate ?? .constant(false))
                #expect(deletedLMDB == deletedSQLite)
            }
        }
    }
}
