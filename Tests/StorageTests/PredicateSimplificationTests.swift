import Foundation
import Storage
import StorageTestSupport
import Testing

@Suite struct PredicateSimplificationTests {
    let a = Column("a") == 1
    let b = Column("b") > 2
    let c = Column("c").like("x%")

    @Test func doubleNegationsCancelAndNegatedConstantsFlip() throws {
        #expect(try (!(!a)).simplified() == a)
        #expect(try (!(!(!a))).simplified() == !a)
        #expect(try (!StoragePredicate.constant(true)).simplified() == .constant(false))
        #expect(try a.simplified() == a)
    }

    @Test func negationsArePushedToTheTermsByDeMorgan() throws {
        #expect(try (!(a && b)).simplified() == .or(!a, !b))
        #expect(try (!(a || b)).simplified() == .and(!a, !b))
        // Nested chains of the same operator, once negations are pushed down, become one chain.
        #expect(try (a && !(b || c)).simplified() == .all([a, !b, !c]))
        #expect(try (a || (b || c)).simplified() == .any([a, b, c]))
    }

    @Test func constantsFoldAsInThreeValuedLogic() throws {
        #expect(try (a && .constant(true)).simplified() == a)
        #expect(try (a && .constant(false)).simplified() == .constant(false))
        #expect(try (a || .constant(true)).simplified() == .constant(true))
        #expect(try (a || .constant(false) || b).simplified() == .or(a, b))
        #expect(try (StoragePredicate.constant(true) && .constant(true)).simplified() == .constant(true))
        #expect(try (!(a || .constant(true))).simplified() == .constant(false))
    }

    @Test func depthCountsOperatorsUpToTheLimitAndNoFurther() throws {
        func alternating(_ levels: Int) -> StoragePredicate {
            var predicate = a
            for level in 0..<levels { predicate = level % 2 == 0 ? (b && predicate) : (c || predicate) }
            return predicate
        }
        _ = try alternating(StoragePredicate.maximumDepth).simplified()
        // One `!` over the innermost term is one level more.
        var deepest = !a
        for level in 0..<StoragePredicate.maximumDepth - 1 {
            deepest = level % 2 == 0 ? (b && deepest) : (c || deepest)
        }
        _ = try deepest.simplified()
        for tooDeep in [alternating(StoragePredicate.maximumDepth + 1), (c || deepest)] {
            do {
                _ = try tooDeep.simplified()
                Issue.record("a predicate past the limit was simplified")
            } catch let error as StorageError {
                #expect(error.code == .invalidQuery)
                #expect(error.message.contains("1000"), "\(error)")
            }
        }
        // A chain is one level however long it is; negations cancel before depth is counted.
        let chain = (0..<50_000).reduce(a) { chain, value in chain && Column("n") != value }
        _ = try chain.simplified()
        _ = try (0..<20_000).reduce(alternating(StoragePredicate.maximumDepth)) { p, _ in !p }.simplified()
    }

    /// Random predicates over columns holding nulls, compared on random records: the simplified
    /// predicate answers true, false or unknown exactly as the original does.
    @Test func simplifiedPredicatesAnswerAsTheOriginalsInThreeValuedLogic() throws {
        var random = SeededGenerator(seed: 31)
        let columns = ["p", "q", "r"]
        func value() -> StorageValue {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: .null
            case 1: .integer(Int64.random(in: 0..<3, using: &random))
            case 2: .real(Double(Int.random(in: 0..<3, using: &random)) + 0.5)
            default: .text(["x", "xy", "y"].randomElement(using: &random)!)
            }
        }
        func term() -> StoragePredicate {
            let column = columns.randomElement(using: &random)!
            switch Int.random(in: 0..<5, using: &random) {
            case 0: return .compare(column, [.equal, .less, .greaterOrEqual].randomElement(using: &random)!, value())
            case 1: return .isNull(column)
            case 2: return .like(column, "x%")
            case 3: return .in(column, (0..<Int.random(in: 0..<3, using: &random)).map { _ in value() })
            default: return .constant(Bool.random(using: &random))
            }
        }
        func predicate(_ depth: Int) -> StoragePredicate {
            guard depth > 0, Int.random(in: 0..<5, using: &random) > 0 else { return term() }
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return .not(predicate(depth - 1))
            case 1: return .and(predicate(depth - 1), predicate(depth - 1))
            default: return .or(predicate(depth - 1), predicate(depth - 1))
            }
        }
        let records = (0..<40).map { _ in Dictionary(uniqueKeysWithValues: columns.map { ($0, value()) }) }
        for number in 0..<2_000 {
            let original = predicate(6)
            let simplified = try original.simplified()
            for record in records {
                let before = PredicateEvaluator.evaluate(original) { record[$0] ?? .null }
                let after = PredicateEvaluator.evaluate(simplified) { record[$0] ?? .null }
                #expect(before == after, "predicate \(number): \(original) became \(simplified)")
            }
        }
    }
}
