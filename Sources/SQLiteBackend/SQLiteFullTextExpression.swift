package import Storage

/// A parsed full-text query (`SearchQuery`) as an FTS5 `MATCH` expression, for an FTS5 table
/// created with `tokenize = 'ascii'` that holds the store's folded tokens joined by spaces.
///
/// The expression is made from the parsed, folded tokens only, each one double-quoted (a token
/// holds only letters and digits, so a quote never occurs in one; one would be doubled all the
/// same), and is bound as a parameter: no text the user typed reaches SQL. The ascii tokenizer
/// splits only at ASCII characters that are not letters or digits, counts every other character
/// as part of a token and folds only A–Z, so the tokens come back exactly as the store made them
/// (`café`, `ærø`, CJK runs, digits).
///
/// The shapes, with every operand in parentheses so FTS5's precedence (NOT, then AND, then OR)
/// never matters:
/// - a word is `"word"`; a prefix is `"pre"*`; a phrase is `"a b"` (FTS5 matches a phrase's
///   tokens consecutively within one column, as the store does);
/// - a clause of several atoms is `(a OR b)`; the clauses that are not excluded are joined by
///   `AND`;
/// - each excluded clause `-x` becomes `(… ) NOT x` (the parser refuses a query of exclusions
///   only, so there is always a left operand).
package enum SQLiteFullTextExpression {
    /// The `MATCH` expression for `query`.
    /// - Parameter query: the parsed query.
    /// - Returns: the FTS5 expression, to bind as the right operand of `MATCH`.
    package static func expression(for query: SearchQuery) -> String {
        let included = query.clauses.filter { !$0.isExcluded }.map(clause)
        var expression = included.count == 1 ? included[0] : included.map { "(" + $0 + ")" }.joined(separator: " AND ")
        for excluded in query.clauses where excluded.isExcluded {
            expression = "(" + expression + ") NOT " + clause(excluded)
        }
        return expression
    }

    /// One clause: its atoms joined by `OR`, in parentheses when there are several.
    private static func clause(_ clause: SearchQuery.Clause) -> String {
        let atoms = clause.atoms.map(atom)
        return atoms.count == 1 ? atoms[0] : "(" + atoms.joined(separator: " OR ") + ")"
    }

    /// One atom: a quoted word, a quoted prefix followed by `*`, or a quoted phrase.
    private static func atom(_ atom: SearchQuery.Atom) -> String {
        switch atom {
        case .word(let word): return quoted(word)
        case .prefix(let prefix): return quoted(prefix) + "*"
        case .phrase(let words): return quoted(words.joined(separator: " "))
        }
    }

    /// `text` as an FTS5 string: in double quotes, a quote within doubled.
    private static func quoted(_ text: String) -> String {
        "\"" + text.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}
