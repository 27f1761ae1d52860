import Foundation
package import Storage

/// The `--set` language of `storage update`: assignments of values to columns, separated by
/// commas, with the values of the `--where` language.
///
/// ```
/// city = 'moved', price = 2.25, note = nil, paid = true
/// ```
package enum SetExpression {
    /// Parses `text` into the new value of each column.
    /// - Throws: `WhereSyntaxError` (for `--set`) naming the offending character, also for a
    ///   column assigned twice.
    package static func parse(_ text: String) throws -> [String: StorageValue] {
        var parser = WhereExpression.Parser(text)
        var assignments: [String: StorageValue] = [:]
        do {
            repeat {
                let start = parser.positionAfterSpace()
                let column = try parser.parseColumn()
                guard parser.take("=") else { throw parser.error("expected '=' after the column name") }
                guard !parser.take("=") else {
                    throw parser.error("an assignment takes one '=', not a comparison")
                }
                let value = try parser.parseValue()
                guard assignments.updateValue(value, forKey: column) == nil else {
                    throw parser.error("column '\(column)' is assigned twice", at: start)
                }
            } while parser.take(",")
            parser.skipSpace()
            if !parser.atEnd { throw parser.error("expected ',' or the end of the assignments") }
        } catch var error as WhereSyntaxError {
            error.option = "--set"
            throw error
        }
        return assignments
    }
}
