import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import StorageCommandLine

@Suite("The --where language")
struct WhereExpressionTests {
    @Test func aDottedNameIsAFieldInsideTheColumnsJSON() throws {
        #expect(try WhereExpression.parse("address.city == 'Oslo'") == (Column("address", "city") == "Oslo"))
        #expect(
            try WhereExpression.parse("address.geo.lat > 1 && address.city != nil && tags.x not in (1, 2)")
                == (Column("address", "geo", "lat") > 1 && Column("address", "city") != nil
                    && !Column("tags", "x").in([1, 2]))
        )
        #expect(try WhereExpression.parse("a.b like 'x%'") == Column("a", "b").like("x%"))
        #expect(throws: (any Error).self) { try WhereExpression.parse("address. == 1") }
        #expect(throws: (any Error).self) { try WhereExpression.parse("address.1 == 1") }
    }

    @Test func expressionsParseIntoTheSamePredicatesAsColumnsOperators() throws {
        #expect(
            try WhereExpression.parse("age >= 30 && name like 'A%' && email != nil")
                == (Column("age") >= 30 && Column("name").like("A%") && Column("email") != nil)
        )
        #expect(
            try WhereExpression.parse("(mood == 'calm' || mood in ('busy', \"away\")) && !(score < 1.5)")
                == ((Column("mood") == "calm" || Column("mood").in(["busy", "away"])) && !(Column("score") < 1.5))
        )
        #expect(try WhereExpression.parse("x = null") == .isNull("x"))
        #expect(
            try WhereExpression.parse("x <> -2 and not y > 1e3 or z not in ()")
                == .or(
                    .and(.compare("x", .notEqual, -2), .not(.compare("y", .greater, .real(1000)))),
                    .not(.in("z", []))
                )
        )
        #expect(
            try WhereExpression.parse("flag == true && n <= 9223372036854775807")
                == .and(
                    .compare("flag", .equal, 1),
                    .compare("n", .lessOrEqual, .integer(.max))
                )
        )
        #expect(try WhereExpression.parse("name == 'it''s \\'x\\''") == .compare("name", .equal, "it's 'x'"))
    }

    @Test(arguments: [
        ("age >= ", 7, "expected a value, found the end of the expression"),
        ("age >= 30 &&", 12, "expected a column name, found the end of the expression"),
        ("age >= 30 & x", 10, "expected '&&', '||' or the end of the expression"),
        ("age ~ 3", 4, "expected a comparison (==, !=, <, <=, >, >=, like, in) after 'age'"),
        ("name == 'open", 8, "the text starting here has no closing '"),
        ("(a == 1", 7, "expected ')'"),
        ("a in (1, 2", 10, "expected ',' or ')' in the list"),
        ("a == bob", 5, "expected a value, found 'bob' (quote text: 'bob')"),
        ("a < nil", 4, "nil can only be compared with == or !="),
        ("a like 3", 7, "'like' needs a quoted pattern"),
        ("3 == a", 0, "expected a column name, found '3'"),
        ("a == 1.2.3", 5, "'1.2.3' is not a number"),
        (String(repeating: "(", count: 101) + "a == 1", 101, "parentheses and negations nested more than 100 deep"),
        (String(repeating: "!", count: 200_000) + "a == 1", 101, "parentheses and negations nested more than 100 deep"),
        (String(repeating: "not ", count: 101) + "a == 1", 403, "parentheses and negations nested more than 100 deep"),
    ])
    func malformedExpressionsPointAtTheOffendingCharacter(_ text: String, _ offset: Int, _ message: String) {
        do {
            let predicate = try WhereExpression.parse(text)
            Issue.record("parsed as \(predicate)")
        } catch let error as WhereSyntaxError {
            #expect(error.offset == offset)
            #expect(error.message == message)
            #expect(error.description.hasSuffix("\n  " + String(repeating: " ", count: offset) + "^"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// A random predicate the language can write (no blobs, NaN or infinities: it has no
    /// literal for them), and its text, fully parenthesized.
    static func randomPredicate(_ depth: Int, _ random: inout SeededGenerator) -> (StoragePredicate, String) {
        if depth > 0 && Bool.random(using: &random) {
            let (lhs, lhsText) = randomPredicate(depth - 1, &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                let (rhs, rhsText) = randomPredicate(depth - 1, &random)
                return (.and(lhs, rhs), "(\(lhsText) && \(rhsText))")
            case 1:
                let (rhs, rhsText) = randomPredicate(depth - 1, &random)
                return (.or(lhs, rhs), "(\(lhsText) or \(rhsText))")
            default:
                return (.not(lhs), Bool.random(using: &random) ? "!(\(lhsText))" : "not \(lhsText)")
            }
        }
        let column = ["a", "name", "_x", "b2", "Été"].randomElement(using: &random)!
        func value() -> (StorageValue, String) {
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                let number =
                    Int64.random(in: Int64.min...Int64.max, using: &random) >> Int.random(in: 0...63, using: &random)
                return (.integer(number), String(number))
            case 1:
                let number = Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 64
                return (.real(number), number == number.rounded() ? String(format: "%.1f", number) : String(number))
            default:
                let text = String(
                    (0..<Int.random(in: 0...6, using: &random)).map { _ in
                        ["a", "'", "\"", "\\", " ", "%", "é", "\u{1F600}", ")", "&"].randomElement(using: &random)!
                    }.joined()
                )
                let quote = Bool.random(using: &random) ? "'" : "\""
                var escaped = ""
                for character in text {
                    if character == "\\" {
                        escaped += "\\\\"
                    } else if String(character) == quote {
                        escaped += quote + quote
                    } else {
                        escaped.append(character)
                    }
                }
                return (.text(text), quote + escaped + quote)
            }
        }
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            return (.isNull(column), "\(column) == nil")
        case 1:
            let (pattern, text) = value()
            guard case .text(let characters) = pattern else { return (.isNull(column), "\(column) = null") }
            return (.like(column, characters), "\(column) LIKE \(text)")
        case 2:
            let values = (0..<Int.random(in: 0...3, using: &random)).map { _ in value() }
            return (.in(column, values.map(\.0)), "\(column) in (\(values.map(\.1).joined(separator: ", ")))")
        default:
            let operators: [(StoragePredicate.Comparison, String)] = [
                (.equal, "=="), (.equal, "="), (.notEqual, "!="), (.notEqual, "<>"), (.less, "<"),
                (.lessOrEqual, "<="), (.greater, ">"), (.greaterOrEqual, ">="),
            ]
            let (comparison, symbol) = operators.randomElement(using: &random)!
            let (operand, text) = value()
            return (.compare(column, comparison, operand), "\(column) \(symbol) \(text)")
        }
    }

    @Test func randomPredicatesWrittenAsTextParseBackToThemselves() throws {
        var random = SeededGenerator(seed: 31)
        for _ in 0..<2_000 {
            let (predicate, text) = Self.randomPredicate(4, &random)
            #expect(try WhereExpression.parse(text) == predicate, "\(text)")
        }
    }

    @Test func randomTextNeverCrashesTheParserAndErrorsPointInsideIt() {
        var random = SeededGenerator(seed: 32)
        let pieces = [
            "a", "b", " ", "(", ")", "'", "\"", "\\", "==", "=", "!", "<", ">", "&&", "||", "in", "not", "like",
            "nil", "true", "1", "-", "+", ".", "e", "9223372036854775808", ",", "é", "\u{1F600}", "\0", "\n",
        ]
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...14, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined()
            do {
                _ = try WhereExpression.parse(text)
            } catch let error as WhereSyntaxError {
                #expect((0...text.count).contains(error.offset), "\(text)")
            } catch {
                Issue.record("\(text): \(error)")
            }
        }
    }
}
