import Storage
import StorageTestSupport
import Testing

/// The one-pass ASCII tokenizing that an engine keeping the index itself is given
/// (`SearchTokenizer.asciiJoinedTokens`) gives exactly `tokens(in:)` joined by single spaces, and
/// leaves text outside ASCII to it.
@Suite struct SearchTokenizerFastPathTests {
    static func slow(_ text: String) -> String { SearchTokenizer.tokens(in: text).joined(separator: " ") }

    @Test func asciiTextGivesTheSlowPathsTokens() {
        var texts = [
            "", " ", "a", "A", "Star Wars: Episode IV - A New Hope",
            "  leading and trailing  ", "x1 2y Z9z", "@[`{", "AZaz09", "tab\tnew\nline\r\u{7F}\u{0}end",
            "spider-man's 1,000 ways!!", "ABC...def___GHI", "9", "...",
        ]
        // Every ASCII byte, alone and between words.
        for value in 0..<128 {
            let character = String(UnicodeScalar(UInt8(value)))
            texts += [character, "ab" + character + "CD", character + "x" + character]
        }
        // Random ASCII strings, fixed by the seed.
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<2_000 {
            var text = ""
            for _ in 0..<(Int(state % 24)) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text.unicodeScalars.append(UnicodeScalar(UInt8(state >> 57)))
            }
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            texts.append(text)
        }
        for text in texts {
            #expect(SearchTokenizer.asciiJoinedTokens(text) == Self.slow(text), "\(Array(text.utf8))")
            #expect(SearchTokenizer.joinedTokens(.text(text)) == Self.slow(text))
        }
    }

    @Test func textOutsideASCIIIsLeftToTheUnicodeFolding() {
        for text in ["Café", "Amélie", "ﬁne", "Ａ", "naïve words", "東京", "a\u{301}", "end é"] {
            #expect(SearchTokenizer.asciiJoinedTokens(text) == nil, "\(text)")
            #expect(SearchTokenizer.joinedTokens(.text(text)) == Self.slow(text))
        }
        #expect(SearchTokenizer.joinedTokens(.text("Café Amélie")) == "cafe amelie")
        #expect(SearchTokenizer.joinedTokens(.integer(3)) == "")
        #expect(SearchTokenizer.joinedTokens(.null) == "")
    }
}
