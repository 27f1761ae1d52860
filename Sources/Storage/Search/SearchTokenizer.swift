import Foundation

/// The words of full-text search: the one tokenizer of documents and queries, the same on every
/// engine (it runs in the store, never in an engine).
///
/// A word is a run of Unicode letters, digits and combining marks (general categories L, N and
/// M). Each run is folded: lowercased (Unicode's full lowercase mapping), decomposed by
/// compatibility (NFKD: `ﬁ` → `fi`, `Ａ` → `a`), stripped of nonspacing marks (category Mn: the
/// accents, `é` → `e`), its ASCII letters lowercased again (`ℌ` and `𝐇` decompose to `H`), and
/// split again at anything that is then not a word character, so a token only ever holds
/// letters, digits and spacing marks, and never an uppercase ASCII letter (FTS5's `ascii`
/// tokenizer, which SQLite's index uses, folds those). No stemming, no stop words.
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
        return asciiJoinedTokens(text) ?? tokens(in: text).joined(separator: " ")
    }

    /// `tokens(in:)` of an ASCII `text` joined by single spaces, in one pass over its bytes:
    /// the runs of ASCII letters and digits, lowercased; `nil` when `text` holds a byte outside
    /// ASCII, which needs the Unicode folding of `tokens(in:)`.
    /// - Parameter text: a field's value.
    /// - Returns: the joined tokens, or `nil`.
    package static func asciiJoinedTokens(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            var ascii = true
            // Never longer than the text: a space is written only for a separator read.
            let joined = String(unsafeUninitializedCapacity: bytes.count) { output in
                var count = 0
                var inWord = false
                for byte in bytes {
                    if byte >= 0x80 {
                        ascii = false
                        return 0
                    }
                    let lower = byte | 0x20
                    if (byte >= 0x30 && byte <= 0x39) || (lower >= 0x61 && lower <= 0x7A) {
                        if !inWord && count > 0 {
                            output[count] = 0x20
                            count += 1
                        }
                        output[count] = byte <= 0x39 ? byte : lower
                        count += 1
                        inWord = true
                    } else {
                        inWord = false
                    }
                }
                return count
            }
            return ascii ? joined : nil
        }
    }

    /// The tokens of one run that holds a scalar outside ASCII.
    private static func folded(_ run: String) -> [String] {
        let decomposed = run.lowercased().decomposedStringWithCompatibilityMapping
        var tokens: [String] = []
        var token = String.UnicodeScalarView()
        for scalar in decomposed.unicodeScalars {
            if scalar.properties.generalCategory == .nonspacingMark { continue }
            if isWord(scalar) {
                // The decomposition of a letter without a lowercase mapping may be an uppercase
                // ASCII letter (`ℌ`, `𝐀` → `H`, `A`): lowercased too, as every ASCII letter is.
                if scalar.value >= 0x41 && scalar.value <= 0x5A {
                    token.append(Unicode.Scalar(UInt8(scalar.value) | 0x20))
                } else {
                    token.append(scalar)
                }
            } else if !token.isEmpty {
                tokens.append(String(token))
                token = String.UnicodeScalarView()
            }
        }
        if !token.isEmpty { tokens.append(String(token)) }
        return tokens
    }
}
