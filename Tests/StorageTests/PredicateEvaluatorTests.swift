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

    @Test func orderingPutsNullsFirstAndTextByBytes() {
        let values: [StorageValue] = [.blob(Data([1])), .text("b"), .text("B"), .real(1.5), .integer(1), .null]
        let sorted = values.sorted { StorageValue.compare($0, $1) < 0 }
        #expect(sorted == [.null, .integer(1), .real(1.5), .text("B"), .text("b"), .blob(Data([1]))])
    }
}
