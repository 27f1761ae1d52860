// Bulk saves as a user writes them: sequences built by closures (lazy and eager maps, filters,
// strides, zips), single saves of values built from arithmetic, and transactions whose closures
// compute; each in a synchronous function (the blocking overloads) and again in an async one
// (the async overloads: an `await` on a blocking one would warn). The first statement of
// `mapsSync` is the snippet of issue 32, which took 33 s and then failed to type-check. Left
// out: shapes that are slow without Storage too, such as a `lazy.filter { … }.map { i in … }`
// chain building a six-argument initializer (0.2 to 0.7 s against a plain-Swift stand-in for
// the store): the corpus is there to catch what Storage adds.
import Foundation
import Storage

struct Member: Codable, Equatable, Sendable {
    var id: Int64
    var name: String
    var age: Int
    var email: String?
    var score: Double
    var active: Bool
}

/// A model that is not `Sendable`: a class with mutable properties.
final class Note: Codable {
    var id: Int64
    var text: String
    var words: Int
    init(id: Int64, text: String, words: Int) {
        self.id = id
        self.text = text
        self.words = words
    }
}

func mapsSync(store: ObjectStore) throws {
    let n = 50_000
    try store.save(
        contentsOf: (0..<n).lazy.map {
            Member(id: Int64($0), name: "n\($0)", age: $0 % 90, email: nil, score: Double($0), active: $0 % 2 == 0)
        }
    )
    try store.save(
        contentsOf: (0..<n).map {
            Member(id: Int64($0), name: "n\($0)", age: $0 % 90, email: nil, score: Double($0), active: $0 % 2 == 0)
        }
    )
}

func filteredSync(store: ObjectStore, members: [Member]) throws {
    let n = 50_000
    try store.save(contentsOf: members.lazy.filter { $0.active && $0.age >= 18 || $0.email != nil })
    let keys = try store.save(
        contentsOf: stride(from: 0, to: n, by: 7).lazy.map { i in
            Member(id: Int64(i), name: "m\(i)", age: i % 90, email: nil, score: Double(i) / 3, active: i > n / 2)
        }
    )
    print(keys.count)
}

func zippedNamesSync(store: ObjectStore) throws {
    let names = ["Ada", "Alan", "Grace"]
    let ages = [36, 41, 85]
    try store.save(
        contentsOf: zip(names, ages).enumerated().map { index, pair in
            Member(
                id: Int64(index + 1),
                name: pair.0,
                age: pair.1,
                email: "\(pair.0.lowercased())@example.org",
                score: Double(pair.1) * 1.5 - 2,
                active: pair.1 < 80
            )
        }
    )
}

func optionalElementsSync(store: ObjectStore) throws {
    try store.save(
        contentsOf: (1...100).compactMap { i -> Member? in
            if i % 4 == 0 { return nil }
            return Member(id: Int64(i), name: "c\(i)", age: i, email: nil, score: 0.5 * Double(i), active: true)
        }
    )
}

func nonSendableSync(store: ObjectStore, n: Int) throws {
    try store.save(
        contentsOf: (0..<100).lazy.map { Note(id: Int64($0), text: "note \($0 * 2 + 1)", words: $0 % 7 + 1) }
    )
    try store.save(
        Member(id: Int64(n) + 1, name: "last", age: n / 1_000, email: nil, score: Double(n) * 0.25, active: false)
    )
    try store.save(Note(id: 1, text: "a" + String(repeating: "b", count: 3), words: 2 * 3 + 1))
}

func transactionsSync(store: ObjectStore) throws {
    try store.transaction { tx in
        for i in 0..<100 {
            try tx.save(
                Member(
                    id: Int64(i + 1_000),
                    name: "t\(i)",
                    age: i % 90,
                    email: nil,
                    score: Double(i) / 2,
                    active: i % 3 == 0
                )
            )
        }
        try tx.save(contentsOf: (0..<10).lazy.map { Note(id: Int64($0 + 200), text: "\($0)", words: $0 * $0) })
    }
    let doubled = try store.transaction { tx in try tx.count(Member.self) * 2 + 1 }
    let (count, best) = try store.read { tx in
        (try tx.count(Member.self), try tx.fetchAll(Member.self, orderBy: [.descending("score")], limit: 5))
    }
    var runs = 0
    try store.transaction { tx in
        runs += 1
        try tx.save(
            Member(id: Int64(runs), name: "r", age: runs * 2, email: nil, score: Double(runs) + 0.5, active: true)
        )
    }
    let notes = try store.read { tx in try tx.fetchAll(Note.self, limit: 3) }
    print(doubled, count, best.map(\.name), runs, notes.map(\.words).reduce(0, +))
}

func mapsAsync(store: ObjectStore) async throws {
    let n = 50_000
    try await store.save(
        contentsOf: (0..<n).lazy.map {
            Member(id: Int64($0), name: "n\($0)", age: $0 % 90, email: nil, score: Double($0), active: $0 % 2 == 0)
        }
    )
    try await store.save(
        contentsOf: (0..<n).map {
            Member(id: Int64($0), name: "n\($0)", age: $0 % 90, email: nil, score: Double($0), active: $0 % 2 == 0)
        }
    )
}

func filteredAsync(store: ObjectStore, members: [Member]) async throws {
    let n = 50_000
    try await store.save(contentsOf: members.lazy.filter { $0.active && $0.age >= 18 || $0.email != nil })
    let keys = try await store.save(
        contentsOf: stride(from: 0, to: n, by: 7).lazy.map { i in
            Member(id: Int64(i), name: "m\(i)", age: i % 90, email: nil, score: Double(i) / 3, active: i > n / 2)
        }
    )
    print(keys.count)
}

func zippedNamesAsync(store: ObjectStore) async throws {
    let names = ["Ada", "Alan", "Grace"]
    let ages = [36, 41, 85]
    try await store.save(
        contentsOf: zip(names, ages).enumerated().map { index, pair in
            Member(
                id: Int64(index + 1),
                name: pair.0,
                age: pair.1,
                email: "\(pair.0.lowercased())@example.org",
                score: Double(pair.1) * 1.5 - 2,
                active: pair.1 < 80
            )
        }
    )
}

func optionalElementsAsync(store: ObjectStore) async throws {
    try await store.save(
        contentsOf: (1...100).compactMap { i -> Member? in
            if i % 4 == 0 { return nil }
            return Member(id: Int64(i), name: "c\(i)", age: i, email: nil, score: 0.5 * Double(i), active: true)
        }
    )
}

func nonSendableAsync(store: ObjectStore, n: Int) async throws {
    try await store.save(
        contentsOf: (0..<100).lazy.map { Note(id: Int64($0), text: "note \($0 * 2 + 1)", words: $0 % 7 + 1) }
    )
    try await store.save(
        Member(id: Int64(n) + 1, name: "last", age: n / 1_000, email: nil, score: Double(n) * 0.25, active: false)
    )
    try await store.save(Note(id: 1, text: "a" + String(repeating: "b", count: 3), words: 2 * 3 + 1))
}

func transactionsAsync(store: ObjectStore) async throws {
    try await store.transaction { tx in
        for i in 0..<100 {
            try tx.save(
                Member(
                    id: Int64(i + 1_000),
                    name: "t\(i)",
                    age: i % 90,
                    email: nil,
                    score: Double(i) / 2,
                    active: i % 3 == 0
                )
            )
        }
        try tx.save(contentsOf: (0..<10).lazy.map { Note(id: Int64($0 + 200), text: "\($0)", words: $0 * $0) })
    }
    let doubled = try await store.transaction { tx in try tx.count(Member.self) * 2 + 1 }
    let (count, best) = try await store.read { tx in
        (try tx.count(Member.self), try tx.fetchAll(Member.self, orderBy: [.descending("score")], limit: 5))
    }
    // A closure run on the store's threads cannot change a local variable: it returns the value.
    let runs = try await store.transaction { tx in
        try tx.save(Member(id: 1, name: "r", age: 2, email: nil, score: 1.5, active: true))
        return 1
    }
    print(doubled, count, best.map(\.name), runs)
}
