import Foundation
package import Storage

/// A record of the search crash workload: a title of words from a small vocabulary, a function
/// of its key and the batch that last wrote it.
package struct SearchCrashRecord: Codable, Equatable, StorableModel {
    package static let collectionName = "crash_titles"
    package static let indexes: [IndexDefinition] = [.fullText(["title"])]
    package var id: Int64
    package var batch: Int64
    package var title: String

    static let vocabulary = [
        "star", "wars", "love", "night", "day", "king", "moon", "blue", "dark", "city", "river", "fire", "café",
        "Amélie",
    ]

    /// The record with key `id` as batch `batch` writes it: 3 to 9 words.
    package static func make(_ id: Int64, batch: Int64) -> SearchCrashRecord {
        var state = UInt64(bitPattern: id &* 6_364_136_223_846_793_005 &+ batch &* 1_442_695_040_888_963_407)
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        let count = 3 + next() % 7
        let words = (0..<count).map { _ in vocabulary[next() % vocabulary.count] }
        return SearchCrashRecord(id: id, batch: batch, title: words.joined(separator: " "))
    }
}

/// Bulk saves of indexed records, killed part-way (`StorageCrashWriter --workload search`): each
/// transaction saves 200 new records, overwrites 50 earlier ones and deletes 10, then prints
/// "ack N". After a kill, search and fetch must agree: every query finds exactly the records
/// that hold its words, ranked as the reference ranks the records fetched.
package enum SearchCrashWorkload {
    /// Runs batches until killed (or `batches` of them).
    package static func run(on store: ObjectStore, batches: Int?, report: (String) -> Void) throws {
        var batch: Int64 = try store.fetchAll(SearchCrashRecord.self).map(\.batch).max() ?? 0
        var next: Int64 = (try store.fetchAll(SearchCrashRecord.self).map(\.id).max() ?? 0) + 1
        while batches.map({ batch < $0 }) ?? true {
            batch += 1
            let fresh = (next..<next + 200).map { SearchCrashRecord.make($0, batch: batch) }
            let overwritten =
                next > 1
                ? (0..<50).map { SearchCrashRecord.make(1 + ($0 * 7 + batch * 13) % (next - 1), batch: batch) } : []
            let deleted = next > 1 ? (0..<10).map { 1 + ($0 * 11 + batch * 17) % (next - 1) } : []
            try store.transaction { tx in
                try tx.save(contentsOf: fresh + overwritten)
                for id in deleted { try tx.delete(SearchCrashRecord.self, id: id) }
            }
            next += 200
            report("ack \(batch)")
        }
    }

    /// The queries checked after a kill.
    static let queries: [SearchReference.Query] = [
        .init(text: "star", clauses: [([.word("star")], false)]),
        .init(text: "love night", clauses: [([.word("love")], false), ([.word("night")], false)]),
        .init(text: "\"blue moon\"", clauses: [([.phrase(["blue", "moon"])], false)]),
        .init(text: "da*", clauses: [([.prefix("da")], false)]),
        .init(
            text: "cafe OR amelie -fire",
            clauses: [([.word("cafe"), .word("amelie")], false), ([.word("fire")], true)]
        ),
    ]

    /// The disagreements between search and fetch in `store`, none when they agree.
    package static func problems(in store: ObjectStore) throws -> [String] {
        let records = try store.fetchAll(SearchCrashRecord.self)
        let documents = records.map { (id: $0.id, fields: [SearchReference.words($0.title)]) }
        var problems: [String] = []
        for query in queries {
            let wanted = SearchReference.ranked(query, documents: documents)
            let found = try store.search(SearchCrashRecord.self, matching: query.text).map(\.id)
            if found != wanted {
                problems.append(
                    "\(query.text): search found \(found.count) records, fetch \(wanted.count) (or another order)"
                )
            }
            for record in try store.search(SearchCrashRecord.self, matching: query.text, limit: 5)
            where record != SearchCrashRecord.make(record.id, batch: record.batch) {
                problems.append("\(query.text): record \(record.id) is not as written")
            }
        }
        return problems
    }
}
