import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// A record whose columns are each often null, holding the values engines are most likely to
/// change on the way: extreme integers, negative zero and infinities, text that reads as a
/// number, non-ASCII and combining characters, empty and binary blobs.
struct Sparse: Codable, Equatable, StorableModel {
    static let collectionName = "sparse"
    static let indexes: [IndexDefinition] = [.init(["b"]), .init(["i", "r"])]
    var id: Int64
    var i: Int64?
    var r: Double?
    var s: String?
    var b: Bool?
    var d: Data?
    var t: Date?
}

/// The same collection as `Sparse`, as a later version of the model wrote it: one more column.
struct SparseLater: Codable, Equatable, StorableModel {
    static let collectionName = "sparse"
    var id: Int64
    var i: Int64?
    var added: String?
}

/// Records keyed by text: keys that differ only in case, in Unicode normalization, or by a
/// trailing space, and keys that read as numbers.
struct Labelled: Codable, Equatable, StorableModel {
    static let collectionName = "labelled"
    var id: String
    var n: Int
}

/// The random values of the copy checks.
private enum CopyValues {
    static let integers: [Int64] = [.min, .min + 1, -1, 0, 1, 42, 1 << 53, (1 << 53) + 1, .max - 1, .max]
    static let reals: [Double] = [
        -.greatestFiniteMagnitude, -1e300, -2.5, -0.0, 0, .leastNonzeroMagnitude, 1e-300, 0.1, 1.0 / 3, 2.5, 1e300,
        .greatestFiniteMagnitude, .infinity, -.infinity,
    ]
    static let texts = [
        "", " ", "a", "A", "10", "010", "1e3", "-0", "2.50", "true", "null", "caf\u{E9}", "cafe\u{301}",
        "\u{1F600}", "line\nbreak", "tab\tand 'quote' \"double\"", "back\\slash", "%_", "\u{FEFF}bom",
        String(repeating: "x", count: 3_000),
    ]
    static let keys = ["a", "A", "a ", "caf\u{E9}", "cafe\u{301}", "1", "01", "1.0", "\u{1F600}", "key with spaces"]

    static func maybe<V>(_ random: inout SeededGenerator, _ make: (inout SeededGenerator) -> V) -> V? {
        Int.random(in: 0..<3, using: &random) == 0 ? nil : make(&random)
    }

    static func blob(_ random: inout SeededGenerator) -> Data {
        Data((0..<Int.random(in: 0..<40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
    }

    static func sparse(_ id: Int64, _ random: inout SeededGenerator) -> Sparse {
        Sparse(
            id: id,
            i: maybe(&random) { integers.randomElement(using: &$0)! },
            r: maybe(&random) { reals.randomElement(using: &$0)! },
            s: maybe(&random) { texts.randomElement(using: &$0)! },
            b: maybe(&random) { Bool.random(using: &$0) },
            d: maybe(&random) { blob(&$0) },
            t: maybe(&random) {
                Date(timeIntervalSince1970: Double(Int.random(in: -1_000_000...1_000_000, using: &$0)) / 8)
            }
        )
    }

    /// A JSON value of any kind, nested ones too.
    static func json(_ random: inout SeededGenerator) -> Any {
        switch Int.random(in: 0..<7, using: &random) {
        case 0: NSNull()
        case 1: integers.randomElement(using: &random)!
        case 2: reals.filter(\.isFinite).randomElement(using: &random)!
        case 3: Bool.random(using: &random)
        case 4: ["x": Int.random(in: 0..<9, using: &random), "y": [texts.randomElement(using: &random)!]]
        default: texts.randomElement(using: &random)!
        }
    }
}

/// Copies of random data between every pair of backends: whatever the source holds, the
/// destination holds value for value (read back as stored, not only as a model decodes it), and
/// the copy's own verification agrees.
@Suite("Copy random data between backends", .dedicatedThreads)
struct CopyRandomTests {
    @Test(arguments: backendPairs)
    func randomCollectionsAreCopiedValueForValue(_ source: BackendFixture, _ destination: BackendFixture) throws {
        // A seed of its own for each pair, the same on every run.
        let seed = (source.name + ">" + destination.name).utf8.reduce(UInt64(0xC0FF_EE00)) { $0 &* 131 &+ UInt64($1) }
        var random = SeededGenerator(seed: seed)
        try withStores("copy-random", source, destination) { from, to in
            // Sparse records, rewritten, some deleted, then more by a later version of the model
            // (whose records have no value in the columns it does not know).
            let ids = (0..<80).map { _ in Int64.random(in: -40...40, using: &random) }
            for chunk in stride(from: 0, to: ids.count, by: 16) {
                try from.save(
                    contentsOf: ids[chunk..<min(chunk + 16, ids.count)].map { CopyValues.sparse($0, &random) }
                )
            }
            for id in ids.shuffled(using: &random).prefix(10) { try from.delete(Sparse.self, id: id) }
            try from.save(
                contentsOf: (41...50).map {
                    SparseLater(
                        id: Int64($0),
                        i: .random(in: -5...5, using: &random),
                        added: CopyValues.texts.randomElement(using: &random)
                    )
                }
            )

            // Text keys, and a JSON import whose objects each have some of the members.
            try from.save(contentsOf: CopyValues.keys.enumerated().map { Labelled(id: $1, n: $0) })
            let objects: [[String: Any]] = (0..<30).map { index in
                var object: [String: Any] = ["id": index]
                for member in ["p", "q", "w", "z"] where Bool.random(using: &random) {
                    object[member] = CopyValues.json(&random)
                }
                return object
            }
            try from.insert(jsonArray: try JSONSerialization.data(withJSONObject: objects), into: "imported")

            let batch = Int.random(in: 1...7, using: &random)
            let report = try from.copy(to: to, batchSize: batch)
            #expect(report.collections.allSatisfy { $0.verified })
            try to.verify(against: from)

            for (collection, key) in [("sparse", "id"), ("labelled", "id"), ("imported", "id")] {
                let original = try from.fetchDictionaries(from: collection, orderBy: [.ascending(key)])
                let copied = try to.fetchDictionaries(from: collection, orderBy: [.ascending(key)])
                #expect(copied.count == original.count, "\(collection), batches of \(batch)")
                for (left, right) in zip(original, copied) where !Self.same(left, right) {
                    Issue.record("\(collection): \(left) was copied as \(right) (batches of \(batch))")
                }
                let sourceSchema = try #require(try from.schema(of: collection))
                let copiedSchema = try #require(try to.schema(of: collection))
                for column in sourceSchema.columns {
                    #expect(
                        copiedSchema.column(named: column.name)?.type == column.type,
                        "\(collection).\(column.name)"
                    )
                }
            }
            // Typed reads agree too, for both versions of the model.
            let byID: [Ordering] = [.ascending("id")]
            let sparse = (try from.fetchAll(Sparse.self, orderBy: byID), try to.fetchAll(Sparse.self, orderBy: byID))
            #expect(sparse.0 == sparse.1)
            let later = (
                try from.fetchAll(SparseLater.self, orderBy: byID), try to.fetchAll(SparseLater.self, orderBy: byID)
            )
            #expect(later.0 == later.1)
            let labelled = try to.fetchAll(Labelled.self).sorted { $0.n < $1.n }
            #expect(labelled == CopyValues.keys.enumerated().map { Labelled(id: $1, n: $0) })
        }
    }

    /// Two records equal value for value: the same columns, each the same storage class and value
    /// (text compared by its bytes, not by Unicode equivalence; a real by its bits, but zero of
    /// either sign alike, as every backend stores -0.0 as 0.0).
    static func same(_ left: [String: StorageValue], _ right: [String: StorageValue]) -> Bool {
        guard Set(left.keys) == Set(right.keys) else { return false }
        return left.allSatisfy { name, value in
            switch (value, right[name]!) {
            case (.text(let a), .text(let b)): a.utf8.elementsEqual(b.utf8)
            case (.real(let a), .real(let b)): a.bitPattern == b.bitPattern || (a == 0 && b == 0)
            case (let a, let b): a == b
            }
        }
    }
}

extension CopyRandomTests {
    /// A record the destination cannot hold (text with a NUL character, which PostgreSQL text
    /// cannot store) stops the copy with a typed error naming the collection, and the destination
    /// collection holds a prefix of the source's records in key order, each exactly as stored.
    @Test func aValueTheDestinationCannotHoldStopsTheCopyWithATypedErrorAndAPrefix() throws {
        try withStores("copy-nul", DiskBackend.sqlite.fixture, DiskBackend.postgresql.fixture) { from, to in
            let records = (1...20).map { Labelled(id: String(format: "k%02d", $0), n: $0) }
            try from.save(contentsOf: records)
            let unstorable = Labelled(id: "k15\u{0}x", n: 0)
            try from.save(unstorable)
            do {
                try from.copy(to: to, batchSize: 4)
                Issue.record("a text with a NUL character was copied into PostgreSQL")
            } catch let error as StorageError {
                #expect(error.code == .typeMismatch)
                #expect(error.collection == "labelled")
                #expect(error.key == .text(unstorable.id))
            }
            // Batches of four in key order: the batch holding the NUL key (k13 to k15\0x) is not
            // written, every batch before it is.
            let stored = try from.fetchAll(Labelled.self, orderBy: [.ascending("id")])
            let copied = try to.fetchAll(Labelled.self, orderBy: [.ascending("id")])
            #expect(copied == Array(stored.prefix(12)))

            // With the record mended at the source, the same copy merging completes it.
            try from.delete(Labelled.self, id: unstorable.id)
            try from.copy(to: to, mode: .merge, batchSize: 4)
            #expect(try to.fetchAll(Labelled.self, orderBy: [.ascending("id")]) == records)
        }
    }
}
