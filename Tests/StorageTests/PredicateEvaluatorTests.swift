import Foundation
import Storage
import Testing

@Suite struct PredicateEvaluatorTests {
    let row: [String: StorageValue] = ["age": 30, "name": "Ann", "email": .null, "score": 2.5]

    func evaluate(_ predicate: StoragePredicate) -> Bool? {
        PredicateEvaluator.evaluate(predicate) { row[$0] ?? .null }
    }

    @Test func comparisonsWithNullAreUnknown() {
        #expect(evaluate(Column("email") == "x") == nil)
        #expect(evaluate(!(Column("email") == "x")) == nil)
        #expect(evaluate(Column("email") == nil) == true)
        #expect(evaluate(Column("missing") > 1) == nil)
    }

    @Test func threeValuedAndOr() {
        let unknown = Column("email") == "x"
        #expect(evaluate(unknown && Column("age") == 30) == nil)
        #expect(evaluate(unknown && Column("age") == 31) == false)
        #expect(evaluate(unknown || Column("age") == 30) == true)
        #expect(evaluate(unknown || Column("age") == 31) == nil)
        #expect(PredicateEvaluator.matches(unknown || Column("age") == 31) { row[$0] ?? .null } == false)
    }

    @Test func numbersCompareAcrossIntegerAndReal() {
        #expect(evaluate(Column("age") == 30.0) == true)
        #expect(evaluate(Column("age") < 30.5) == true)
        #expect(evaluate(Column("score") > 2) == true)
        #expect(evaluate(Column("age") < "10") == true)  // text sorts after every number
    }

    @Test func inFollowsSQLiteWithNulls() {
        #expect(evaluate(Column("age").in([29, 30])) == true)
        #expect(evaluate(Column("age").in([29, 31])) == false)
        #expect(evaluate(Column("age").in([30.0])) == true)  // numbers across storage classes
        #expect(evaluate(Column("age").in(["30"])) == false)  // text is not a number
        #expect(evaluate(Column("name").in(["ann", "Ann"])) == true)
        #expect(evaluate(Column("email").in(["x"])) == nil)  // null IN (…) is unknown
        #expect(evaluate(!Column("email").in(["x"])) == nil)
        #expect(evaluate(Column("age").in([StorageValue.integer(29), .null])) == nil)  // a miss with a null
        #expect(evaluate(!Column("age").in([StorageValue.integer(29), .null])) == nil)
        #expect(evaluate(Column("age").in([StorageValue.integer(30), .null])) == true)
        #expect(evaluate(Column("age").in([StorageValue.integer(29), .real(.nan)])) == nil)  // NaN is SQL's NULL
        #expect(evaluate(Column("email").in([Int]())) == false)  // SQLite: an empty list is false, even for null
        #expect(evaluate(!Column("email").in([Int]())) == true)
        // NFC and NFD spellings of a word are different text, as in SQLite.
        #expect(evaluate(Column("name").in(["A\u{0301}nn"])) == false)
    }

    @Test func chainsOfFortyThousandTermsNeedNoDeepRecursion() {
        var anyOf = Column("age") == -1
        var allOf = Column("age") != -1
        for value in 0..<40_000 {
            anyOf = anyOf || Column("age") == value
            allOf = allOf && Column("name") != "n\(value)"
        }
        #expect(evaluate(anyOf) == true)
        #expect(evaluate(allOf) == true)
        #expect(evaluate(anyOf && !allOf) == false)
        #expect(anyOf.columnNames.count == 40_001)
        #expect(anyOf.disjuncts.count == 40_001)
        let mapped = allOf.mapValues { _, value in value }
        #expect(mapped.columnNames == allOf.columnNames)
        #expect(PreparedPredicate(mapped).matches { row[$0] ?? .null })
        // The mapped chain is balanced: its depth is about log2 of its length.
        var depth = 0
        var node = mapped
        while case .and(let lhs, _) = node {
            depth += 1
            node = lhs
        }
        #expect(depth < 20)
    }

    /// A predicate bound to column numbers answers as the named one for every row, with
    /// columns the rows lack reading as null (a backend passes -1 for them).
    @Test func aBoundPredicateAnswersAsTheNamedOne() {
        let columns = ["age", "name", "email", "score"]
        let rows: [[String: StorageValue]] = [
            row,
            ["age": 41, "name": "Bob", "email": "b@x", "score": .null],
            ["age": .null, "name": .null, "email": "ann", "score": 30],
            ["age": 30.0, "name": "Ann", "email": "Ann", "score": .real(.nan)],
        ]
        let predicates: [StoragePredicate] = [
            Column("age") == 30,
            Column("score") > 1,
            Column("name") == "Ann" && Column("age") >= 30,
            Column("email") == nil || Column("score") < 3,
            !(Column("name").in(["Ann", "Bob"])),
            Column("email").like("a%"),
            Column("missing") == nil,
            Column("missing") > 1 || Column("age") == 41,
            Column("age").in([StorageValue.integer(41), .null]) && !(Column("email") == "b@x"),
        ]
        for predicate in predicates {
            let prepared = PreparedPredicate(predicate)
            let bound = prepared.binding { columns.firstIndex(of: $0) ?? -1 }
            for values in rows {
                let named = prepared.evaluate { values[$0] ?? .null }
                let numbered = bound.evaluate { $0 < 0 ? .null : values[columns[$0]] ?? .null }
                #expect(named == numbered, "\(predicate) on \(values)")
                #expect(bound.matches { $0 < 0 ? .null : values[columns[$0]] ?? .null } == (named == true))
            }
        }
        // The numbers are the ones `binding` gave: a predicate bound with two columns swapped
        // answers differently.
        let swapped = PreparedPredicate(Column("age") == 30).binding { $0 == "age" ? 1 : 0 }
        #expect(swapped.evaluate { $0 < 0 ? .null : row[columns[$0]] ?? .null } == false)
        #expect(PreparedPredicate(nil).binding { _ in -1 }.matches { _ in .null })
    }

    @Test func likeFollowsSQLite() {
        #expect(PredicateEvaluator.like("Ann", "a%"))
        #expect(PredicateEvaluator.like("Ann", "_NN"))
        #expect(!PredicateEvaluator.like("Ann", "_N"))
        #expect(PredicateEvaluator.like("", "%"))
        #expect(!PredicateEvaluator.like("Éva", "é%"))
        #expect(PredicateEvaluator.like("a%b", "a%%b"))
        #expect(PredicateEvaluator.like("mississippi", "%iss%ppi"))
        #expect(evaluate(Column("age").like("3%")) == true)
    }

    @Test func likeNeverMatchesABlob() {
        let blob: [String: StorageValue] = ["d": .blob(Data("abc".utf8))]
        #expect(PredicateEvaluator.evaluate(.like("d", "%")) { blob[$0] ?? .null } == false)
        #expect(PredicateEvaluator.evaluate(.like("d", "abc")) { blob[$0] ?? .null } == false)
        #expect(PredicateEvaluator.evaluate(!.like("d", "a%")) { blob[$0] ?? .null } == true)
        #expect(PredicateEvaluator.evaluate(.like("e", "%")) { blob[$0] ?? .null } == nil)
    }

    @Test func comparisonsWithNaNAreUnknown() {
        for comparison in [
            StoragePredicate.Comparison.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual,
        ] {
            #expect(evaluate(.compare("age", comparison, .real(.nan))) == nil, "\(comparison)")
            #expect(evaluate(!.compare("score", comparison, .real(.nan))) == nil, "\(comparison)")
        }
    }

    @Test func orderingPutsNullsFirstAndTextByBytes() {
        let values: [StorageValue] = [.blob(Data([1])), .text("b"), .text("B"), .real(1.5), .integer(1), .null]
        let sorted = values.sorted { StorageValue.compare($0, $1) < 0 }
        #expect(sorted == [.null, .integer(1), .real(1.5), .text("B"), .text("b"), .blob(Data([1]))])
    }
}
