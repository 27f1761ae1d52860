import Foundation

/// Where one indexed word occurs in one record: the record's length in words (every indexed
/// field together) and the positions of the word in each field, as stored.
package struct SearchPosting: Sendable {
    /// The record's key, encoded (`SearchIndexKeys.document(_:)`).
    package var document: String
    /// The number of words of the record, all indexed fields together.
    package var length: Int
    /// The positions as stored: `field:position,position;field:position`.
    package var encodedPositions: String

    /// A posting of `positions` (by field index, counting words from 0 in each field).
    package init(document: String, length: Int, positions: [Int: [Int]]) {
        self.document = document
        self.length = length
        encodedPositions = positions.keys.sorted().map { field in
            "\(field):" + positions[field]!.map(String.init).joined(separator: ",")
        }.joined(separator: ";")
    }

    /// A posting as read back.
    package init(document: String, length: Int, encodedPositions: String) {
        self.document = document
        self.length = length
        self.encodedPositions = encodedPositions
    }

    /// The positions of the word, by field index; parsed only for phrases.
    package var positions: [Int: [Int]] {
        var result: [Int: [Int]] = [:]
        for part in encodedPositions.split(separator: ";") {
            guard let colon = part.firstIndex(of: ":"), let field = Int(part[..<colon]) else { continue }
            result[field] = part[part.index(after: colon)...].split(separator: ",").compactMap { Int($0) }
        }
        return result
    }

    /// How many times the word occurs in the record: one more than the separators of positions
    /// (`,` within a field, `;` between fields), read without parsing.
    package var hits: Int {
        var count = 0
        for byte in encodedPositions.utf8 where byte == UInt8(ascii: ",") || byte == UInt8(ascii: ";") { count += 1 }
        return encodedPositions.isEmpty ? 0 : count + 1
    }
}

/// BM25 as SQLite's FTS5 computes `bm25()` with equal column weights, with k1 = 1.2 and b = 0.75:
///
///     score(D) = Σᵢ IDF(qᵢ) · f(qᵢ, D) · (k1 + 1) / (f(qᵢ, D) + k1 · (1 − b + b · |D| / avgdl))
///     IDF(qᵢ) = ln((N − n(qᵢ) + 0.5) / (n(qᵢ) + 0.5)), and 10⁻⁶ where that is not positive
///
/// over the query's atoms qᵢ that are not excluded, in the order written (a word, a prefix or a
/// phrase each count as one), where f(qᵢ, D) is the number of times qᵢ occurs in D's indexed
/// fields together, |D| D's number of words in them, avgdl the mean of |D| over the collection,
/// N the number of records and n(qᵢ) the number of records qᵢ occurs in. Higher is better;
/// ties are broken by primary key, ascending.
package enum SearchRanking {
    /// k1.
    package static let k1 = 1.2
    /// b.
    package static let b = 0.75

    /// The matching records of `query`, best first.
    /// - Parameters:
    ///   - query: the parsed query.
    ///   - documents: N, the number of records of the collection.
    ///   - tokens: the number of words of all its records together.
    ///   - postings: the postings of the words in `lower ..< upper` (the words' byte order).
    /// - Returns: the encoded keys of the matching records with their scores, in no order.
    /// - Throws: what `postings` throws.
    package static func evaluate(
        _ query: SearchQuery,
        documents: Int,
        tokens: Int,
        postings: (_ lower: String, _ upper: String) throws -> [SearchPosting]
    ) throws -> [String: Double] {
        try rank(query, documents: documents, tokens: tokens) { atom in
            var result: [String: (hits: Int, length: Int)] = [:]
            switch atom {
            case .word(let word):
                for posting in try postings(word + "\u{1}", word + "\u{2}") {
                    result[posting.document] = (posting.hits, posting.length)
                }
            case .prefix(let prefix):
                for posting in try postings(prefix, prefix + "\u{10FFFF}") {
                    let earlier = result[posting.document]?.hits ?? 0
                    result[posting.document] = (earlier + posting.hits, posting.length)
                }
            case .phrase(let words):
                var lists: [[String: SearchPosting]] = []
                for word in words {
                    var list: [String: SearchPosting] = [:]
                    for posting in try postings(word + "\u{1}", word + "\u{2}") { list[posting.document] = posting }
                    lists.append(list)
                }
                let shortest = lists.indices.min { lists[$0].count < lists[$1].count }!
                for (document, _) in lists[shortest] {
                    guard let first = lists[0][document],
                        lists.allSatisfy({ $0[document] != nil })
                    else { continue }
                    let hits = phraseHits([first.positions] + lists.dropFirst().map { $0[document]!.positions })
                    if hits > 0 { result[document] = (hits, first.length) }
                }
            }
            return result
        }
    }

    /// How many times a phrase occurs in one record: the starts of its first word's positions
    /// followed, within the same field, by each next word at the next position.
    /// - Parameter positions: the positions of each word of the phrase in the record, by field.
    /// - Returns: the number of occurrences.
    package static func phraseHits(_ positions: [[Int: [Int]]]) -> Int {
        guard let first = positions.first else { return 0 }
        let others = positions.dropFirst()
        var hits = 0
        for (field, starts) in first {
            let sets = others.map { Set($0[field] ?? []) }
            for start in starts where sets.enumerated().allSatisfy({ $0.element.contains(start + $0.offset + 1) }) {
                hits += 1
            }
        }
        return hits
    }

    /// The matching records of `query` with their BM25 scores, given each atom's occurrences:
    /// the core of `evaluate(_:documents:tokens:postings:)`, shared with engines that keep
    /// postings of their own (LMDB's native index).
    /// - Parameters:
    ///   - query: the parsed query.
    ///   - documents: N, the number of records of the collection.
    ///   - tokens: the number of words of all its records together.
    ///   - occurrences: for one atom, the records it occurs in, each with the number of times
    ///     and the record's length in words; asked once per distinct atom.
    /// - Returns: the matching records with their scores, in no order.
    /// - Throws: what `occurrences` throws.
    package static func rank<Document: Hashable>(
        _ query: SearchQuery,
        documents: Int,
        tokens: Int,
        occurrences: (SearchQuery.Atom) throws -> [Document: (hits: Int, length: Int)]
    ) throws -> [Document: Double] {
        var cache: [SearchQuery.Atom: [Document: (hits: Int, length: Int)]] = [:]
        func cached(_ atom: SearchQuery.Atom) throws -> [Document: (hits: Int, length: Int)] {
            if let known = cache[atom] { return known }
            let result = try occurrences(atom)
            cache[atom] = result
            return result
        }

        var matching: Set<Document>?
        var excluded: Set<Document> = []
        for clause in query.clauses {
            var union: Set<Document> = []
            for atom in clause.atoms { union.formUnion(try cached(atom).keys) }
            if clause.isExcluded {
                excluded.formUnion(union)
            } else {
                matching = matching.map { $0.intersection(union) } ?? union
            }
        }
        let found = (matching ?? []).subtracting(excluded)
        guard !found.isEmpty else { return [:] }
        let count = Double(documents)
        let averageLength = Double(tokens) / Double(max(documents, 1))
        var scores: [Document: Double] = [:]
        scores.reserveCapacity(found.count)
        for document in found { scores[document] = 0 }
        for atom in query.rankedAtoms {
            let list = try cached(atom)
            let hitCount = Double(list.count)
            var idf = log((count - hitCount + 0.5) / (hitCount + 0.5))
            if idf <= 0 { idf = 1e-6 }
            for document in found {
                guard let (hits, length) = list[document] else { continue }
                let frequency = Double(hits)
                // FTS5's expression, operation for operation (`fts5Bm25Function`), so that every
                // score rounds as SQLite's does.
                let score =
                    idf
                    * ((frequency * (k1 + 1.0)) / (frequency + k1 * (1 - b + b * Double(length) / averageLength)))
                scores[document]! += score
            }
        }
        return scores
    }
}
