import Foundation

/// The words of full-text search: the one tokenizer of documents and queries, the same on every
/// engine (it runs in the store, never in an engine).
///
/// A word is a run of Unicode letters, digits and combining marks (general categories L, N and
/// M). Each run is folded: lowercased (Unicode's full lowercase mapping), decomposed by
/// compatibility (NFKD: `ﬁ` → `fi`, `Ａ` → `a`), stripped of nonspacing marks (category Mn: the
/// accents, `é` → `e`), and split again at anything that is then not a word character, so a
/// token only ever holds letters, digits and spacing marks. No stemming, no stop words.
package enum SearchTokenizer {
    /// Whether `scalar` belongs to a word.
    @inline(__always)
    static func isWord(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            let value = scalar.value
            return (value >= 0x30 && value <= 0x39) || (value >= 0x41 && value <= 0x5A)
                || (value >= 0x61 && value <= 0x7A)
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
            return true
        default:
            return false
        }
    }

    /// The folded words of `text`, in order.
    /// - Parameter text: a document's field or a query's word.
    /// - Returns: the tokens, none empty.
    package static func tokens(in text: String) -> [String] {
        var tokens: [String] = []
        var run = String.UnicodeScalarView()
        var ascii = true
        func flush() {
            guard !run.isEmpty else { return }
            if ascii {
                // ASCII folds to its lowercase alone (the stdlib's fast path).
                tokens.append(String(run).lowercased())
            } else {
                tokens += folded(String(run))
            }
            run = String.UnicodeScalarView()
            ascii = true
        }
        for scalar in text.unicodeScalars {
            if isWord(scalar) {
                run.append(scalar)
                if !scalar.isASCII { ascii = false }
            } else {
                flush()
            }
        }
        flush()
        return tokens
    }

    /// The folded words of a field's value joined by single spaces, as an engine that keeps the
    /// index itself is given them; empty for a value that is not text.
    /// - Parameter value: the field's value.
    /// - Returns: the tokens separated by spaces.
    package static func joinedTokens(_ value: StorageValue) -> String {
        guard case .text(let text) = value else { return "" }
        return tokens(in: text).joined(separator: " ")
    }

    /// The tokens of one run that holds a scalar outside ASCII.
    private static func folded(_ run: String) -> [String] {
        let decomposed = run.lowercased().decomposedStringWithCompatibilityMapping
        var tokens: [String] = []
        var token = String.UnicodeScalarView()
        for scalar in decomposed.unicodeScalars {
            if scalar.properties.generalCategory == .nonspacingMark { continue }
            if isWord(scalar) {
                token.append(scalar)
            } else if !token.isEmpty {
                tokens.append(String(token))
                token = String.UnicodeScalarView()
            }
        }
        if !token.isEmpty { tokens.append(String(token)) }
        return tokens
    }
}
