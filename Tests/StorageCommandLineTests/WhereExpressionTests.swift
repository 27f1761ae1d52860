import Storage
import Testing

@testable import StorageCommandLine

@Suite("The --where language")
struct WhereExpressionTests {
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
}
