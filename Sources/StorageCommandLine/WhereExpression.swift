import Foundation
package import Storage

/// The `--where` language: the query operators of `Column`, written as text.
///
/// ```
/// age >= 30 && name like 'A%' && email != nil
/// (mood == 'calm' || mood in ('busy', 'away')) && !(score < 1.5)
/// ```
/// Comparisons are `==` (or `=`), `!=` (or `<>`), `<`, `<=`, `>`, `>=` between a column and a
/// value; `like 'pattern'`; `in (v, …)` and `not in (…)`; `== nil` and `!= nil` (`null` too).
/// Values are integers, reals, `'text'` or `"text"` (a quote doubled, or `\`-escaped, inside),
/// `true`, `false` and `nil`. `&&` binds tighter than `||`; `!` negates; `and`, `or` and `not`
/// may be written for them. `address.city` names the field `city` inside column `address`'s JSON
/// (a nested `Codable` value), as `Column("address", "city")` does.
package enum WhereExpression {
    /// Parses `text` into a predicate.
    /// - Throws: `WhereSyntaxError` naming the offending character.
    package static func parse(_ text: String) throws -> StoragePredicate {
        var parser = Parser(text)
        let predicate = try parser.parseOr()
        parser.skipSpace()
        if !parser.atEnd {
            throw parser.error("expected '&&', '||' or the end of the expression")
        }
        return predicate
    }

    /// The parser of the language; `SetExpression` parses its assignments with it too.
    struct Parser {
        let characters: [Character]
        var position = 0
        var depth = 0

        init(_ text: String) {
            characters = Array(text)
        }

        var atEnd: Bool { position >= characters.count }

        func error(_ message: String, at offset: Int? = nil) -> WhereSyntaxError {
            WhereSyntaxError(
                message: message,
                expression: String(characters),
                offset: min(offset ?? position, characters.count)
            )
        }

        mutating func skipSpace() {
            while !atEnd, characters[position].isWhitespace { position += 1 }
        }

        mutating func take(_ symbol: String) -> Bool {
            skipSpace()
            let symbolCharacters = Array(symbol)
            guard position + symbolCharacters.count <= characters.count,
                Array(characters[position..<position + symbolCharacters.count]) == symbolCharacters
            else { return false }
            position += symbolCharacters.count
            return true
        }

        /// A keyword (`and`, `like`, …), ignoring case, not followed by a letter of a longer word.
        mutating func takeWord(_ word: String) -> Bool {
            skipSpace()
            let start = position
            guard let found = peekWord(), found.lowercased() == word else { return false }
            position = start + found.count
            return true
        }

        func peekWord() -> String? {
            var end = position
            while end < characters.count,
                characters[end] == "_" || characters[end].isLetter
                    || (end > position && characters[end].isNumber)
            {
                end += 1
            }
            return end > position ? String(characters[position..<end]) : nil
        }

        mutating func parseOr() throws -> StoragePredicate {
            var result = try parseAnd()
            while take("||") || takeWord("or") { result = .or(result, try parseAnd()) }
            return result
        }

        mutating func parseAnd() throws -> StoragePredicate {
            var result = try parseUnary()
            while take("&&") || takeWord("and") { result = .and(result, try parseUnary()) }
            return result
        }

        mutating func parseUnary() throws -> StoragePredicate {
            skipSpace()
            if !atEnd, characters[position] == "!", position + 1 >= characters.count || characters[position + 1] != "="
            {
                position += 1
                return .not(try nested { try $0.parseUnary() })
            }
            if takeWord("not") { return .not(try nested { try $0.parseUnary() }) }
            if take("(") {
                let inner = try nested { try $0.parseOr() }
                guard take(")") else { throw error("expected ')'") }
                return inner
            }
            return try parseComparison()
        }

        /// `parse` one level deeper: parentheses and negations nest by recursion, so their depth
        /// is bounded (a hostile `!!!…` would otherwise overflow the stack).
        mutating func nested(_ parse: (inout Parser) throws -> StoragePredicate) throws -> StoragePredicate {
            depth += 1
            guard depth <= Self.maximumDepth else {
                throw error("parentheses and negations nested more than \(Self.maximumDepth) deep")
            }
            defer { depth -= 1 }
            return try parse(&self)
        }

        static let maximumDepth = 100

        mutating func parseColumn() throws -> String {
            skipSpace()
            if atEnd { throw error("expected a column name, found the end of the expression") }
            guard let word = peekWord(), !characters[position].isNumber else {
                throw error("expected a column name, found '\(characters[position])'")
            }
            position += word.count
            return word
        }

        mutating func parseComparison() throws -> StoragePredicate {
            let column = try parseColumn()
            // `column.key.key`: a field inside the column's JSON.
            var path: [String] = []
            while position < characters.count, characters[position] == "." {
                position += 1
                guard let key = peekWord() else { throw error("expected a field name after '.'") }
                position += key.count
                path.append(key)
            }
            let comparison = try parseComparison(on: column)
            return path.isEmpty ? comparison : Self.applying(path, to: comparison)
        }

        /// `predicate` (on one column; `!` of one for `not in` and `!= nil`) on the field at `path`.
        static func applying(_ path: [String], to predicate: StoragePredicate) -> StoragePredicate {
            if case .not(let inner) = predicate { return .not(.nested(path: path, inner)) }
            return .nested(path: path, predicate)
        }

        mutating func parseComparison(on column: String) throws -> StoragePredicate {
            let operatorStart: Int = {
                var copy = self
                copy.skipSpace()
                return copy.position
            }()
            if takeWord("like") {
                let start = positionAfterSpace()
                guard case .text(let pattern) = try parseValue() else {
                    throw error("'like' needs a quoted pattern", at: start)
                }
                return .like(column, pattern)
            }
            if takeWord("not") {
                guard takeWord("in") else { throw error("expected 'in' after 'not'") }
                return .not(try parseList(column))
            }
            if takeWord("in") { return try parseList(column) }
            let comparisons: [(String, StoragePredicate.Comparison)] = [
                ("==", .equal), ("!=", .notEqual), ("<>", .notEqual), ("<=", .lessOrEqual),
                (">=", .greaterOrEqual), ("=", .equal), ("<", .less), (">", .greater),
            ]
            guard let comparison = comparisons.first(where: { take($0.0) })?.1 else {
                if atEnd { throw error("expected a comparison after '\(column)', found the end of the expression") }
                throw error(
                    "expected a comparison (==, !=, <, <=, >, >=, like, in) after '\(column)'",
                    at: operatorStart
                )
            }
            let valueStart = positionAfterSpace()
            let value = try parseValue()
            if value.isNull {
                switch comparison {
                case .equal: return .isNull(column)
                case .notEqual: return .not(.isNull(column))
                default: throw error("nil can only be compared with == or !=", at: valueStart)
                }
            }
            return .compare(column, comparison, value)
        }

        mutating func positionAfterSpace() -> Int {
            skipSpace()
            return position
        }

        mutating func parseList(_ column: String) throws -> StoragePredicate {
            guard take("(") else { throw error("expected '(' after 'in'") }
            var values: [StorageValue] = []
            if take(")") { return .in(column, values) }
            repeat {
                values.append(try parseValue())
            } while take(",")
            guard take(")") else { throw error("expected ',' or ')' in the list") }
            return .in(column, values)
        }

        mutating func parseValue() throws -> StorageValue {
            skipSpace()
            guard !atEnd else { throw error("expected a value, found the end of the expression") }
            let first = characters[position]
            if first == "'" || first == "\"" { return .text(try parseString(quote: first)) }
            if first.isNumber || first == "-" || first == "+" || first == "." { return try parseNumber() }
            if let word = peekWord() {
                switch word.lowercased() {
                case "nil", "null":
                    position += word.count
                    return .null
                case "true":
                    position += word.count
                    return .integer(1)
                case "false":
                    position += word.count
                    return .integer(0)
                default:
                    throw error("expected a value, found '\(word)' (quote text: '\(word)')")
                }
            }
            throw error("expected a value, found '\(first)'")
        }

        mutating func parseString(quote: Character) throws -> String {
            let start = position
            position += 1
            var text = ""
            while !atEnd {
                let character = characters[position]
                position += 1
                if character == "\\" {
                    guard !atEnd else { break }
                    text.append(characters[position])
                    position += 1
                } else if character == quote {
                    if !atEnd, characters[position] == quote {
                        text.append(quote)
                        position += 1
                    } else {
                        return text
                    }
                } else {
                    text.append(character)
                }
            }
            throw error("the text starting here has no closing \(quote)", at: start)
        }

        mutating func parseNumber() throws -> StorageValue {
            let start = position
            if characters[position] == "-" || characters[position] == "+" { position += 1 }
            while !atEnd,
                characters[position].isNumber || "._eE".contains(characters[position])
                    || ((characters[position] == "-" || characters[position] == "+")
                        && "eE".contains(characters[position - 1]))
            {
                position += 1
            }
            let text = String(characters[start..<position]).replacingOccurrences(of: "_", with: "")
            if let integer = Int64(text) { return .integer(integer) }
            if let real = Double(text), text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                return .real(real)
            }
            throw error("'\(String(characters[start..<position]))' is not a number", at: start)
        }
    }
}

/// A `--where` expression that does not parse: what was expected, and where.
package struct WhereSyntaxError: Error, Equatable, CustomStringConvertible {
    /// What was wrong.
    package var message: String
    /// The whole expression.
    package var expression: String
    /// The offending character's position (in characters, from 0).
    package var offset: Int
    /// The option whose value it is.
    package var option = "--where"

    /// The message, the expression and a caret under the offending character.
    package var description: String {
        "\(option): \(message) at character \(offset + 1)\n  \(expression)\n  "
            + String(repeating: " ", count: offset) + "^"
    }
}
