/// A parsed full-text query: clauses that must all hold, each one or more atoms joined by `OR`,
/// or one excluded atom.
///
/// The language (`ObjectStore.search(_:matching:where:limit:)`): words separated by white space
/// must all match (in any indexed field); `"a phrase"` matches its words consecutively within one
/// field; `word*` matches any word starting so; `a OR b` matches either (`OR` binds tighter than
/// the implicit AND: `star wars OR trek` is `star (wars OR trek)`); `-word` and `-"a phrase"`
/// exclude the records that match them. A bare word holds only letters and digits (anything
/// else, such as `-` inside `spider-man`, must be quoted: `"spider-man"` is the phrase
/// `spider man`). Anything else is refused with `StorageError.Code.invalidQuery`, naming the
/// position (the character's, counting from 1).
public struct SearchQuery: Hashable, Sendable {
    /// What one atom matches.
    public enum Atom: Hashable, Sendable {
        /// A word, folded.
        case word(String)
        /// Any word starting with this folded prefix.
        case prefix(String)
        /// Consecutive words within one field, folded (two or more).
        case phrase([String])
    }

    /// Atoms joined by `OR`, or one excluded atom.
    public struct Clause: Hashable, Sendable {
        /// The atoms, any of which matches.
        public package(set) var atoms: [Atom]
        /// Whether the clause excludes the records matching it.
        public package(set) var isExcluded: Bool
    }

    /// The clauses, all of which must hold.
    public package(set) var clauses: [Clause]

    /// The atoms that count in the ranking: those of the clauses that are not excluded, in order.
    package var rankedAtoms: [Atom] { clauses.filter { !$0.isExcluded }.flatMap(\.atoms) }

    /// Parses `text`.
    /// - Parameter text: the query as the user typed it.
    /// - Throws: ``StorageError`` with `.invalidQuery`, naming the position.
    package init(parsing text: String) throws {
        let characters = Array(text)
        var index = 0
        var clauses: [Clause] = []
        var joining = false  // an `OR` was just read
        var orPosition = 0

        func fail(_ position: Int, _ reason: String) -> StorageError {
            StorageError(.invalidQuery, "search query \(Self.quoted(text)): \(reason) at position \(position + 1)")
        }
        func isSpace(_ character: Character) -> Bool { character.isWhitespace }

        while index < characters.count {
            if isSpace(characters[index]) {
                index += 1
                continue
            }
            let start = index
            var excluded = false
            if characters[index] == "-" {
                excluded = true
                index += 1
                guard index < characters.count, !isSpace(characters[index]) else {
                    throw fail(start, "'-' must be followed by a word or a phrase to exclude")
                }
            }
            var atom: Atom
            if characters[index] == "\"" {
                let open = index
                index += 1
                var inner = ""
                while index < characters.count, characters[index] != "\"" {
                    inner.append(characters[index])
                    index += 1
                }
                guard index < characters.count else { throw fail(open, "a phrase's quote is not closed") }
                index += 1
                if index < characters.count, !isSpace(characters[index]) {
                    throw fail(index, "unexpected \(Self.quoted(String(characters[index]))) after a phrase")
                }
                let words = SearchTokenizer.tokens(in: inner)
                switch words.count {
                case 0: throw fail(open, "a phrase holds no word")
                case 1: atom = .word(words[0])
                default: atom = .phrase(words)
                }
            } else {
                let wordStart = index
                var word = ""
                while index < characters.count, !isSpace(characters[index]) {
                    word.append(characters[index])
                    index += 1
                }
                if !excluded, word == "OR" {
                    guard !clauses.isEmpty, !joining, clauses[clauses.count - 1].isExcluded == false else {
                        throw fail(start, "'OR' must stand between two words or phrases that are not excluded")
                    }
                    joining = true
                    orPosition = start
                    continue
                }
                var isPrefix = false
                if word.hasSuffix("*") {
                    isPrefix = true
                    word.removeLast()
                }
                for (offset, character) in word.enumerated()
                where !character.unicodeScalars.allSatisfy(SearchTokenizer.isWord) {
                    throw fail(wordStart + offset, Self.reason(for: character))
                }
                guard !word.isEmpty else { throw fail(wordStart, "'*' must end a word") }
                let words = SearchTokenizer.tokens(in: word)
                if words.isEmpty { throw fail(wordStart, "the word holds no letter or digit") }
                if isPrefix {
                    guard words.count == 1 else { throw fail(wordStart, "a prefix must be one word") }
                    atom = .prefix(words[0])
                } else {
                    atom = words.count == 1 ? .word(words[0]) : .phrase(words)
                }
            }
            if joining {
                guard !excluded else {
                    throw fail(start, "'OR' must stand between two words or phrases that are not excluded")
                }
                clauses[clauses.count - 1].atoms.append(atom)
                joining = false
            } else {
                clauses.append(Clause(atoms: [atom], isExcluded: excluded))
            }
        }
        if joining { throw fail(orPosition, "'OR' must stand between two words or phrases that are not excluded") }
        guard !clauses.isEmpty else { throw fail(0, "the query holds no word") }
        guard clauses.contains(where: { !$0.isExcluded }) else {
            throw fail(0, "a query needs at least one word or phrase that is not excluded")
        }
        self.clauses = clauses
    }

    private static func quoted(_ text: String) -> String { "'" + text + "'" }

    /// Why `character` may not stand in a bare word.
    private static func reason(for character: Character) -> String {
        switch character {
        case "*": return "'*' may only end a word"
        case "\"": return "a quote may only begin a phrase"
        default:
            return quoted(String(character))
                + " is not a letter or a digit (quote the words to search them as a phrase)"
        }
    }
}
