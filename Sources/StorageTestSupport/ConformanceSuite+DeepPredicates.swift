import Foundation
import Storage
import Testing

extension ConformanceSuite {
    /// `!` nested `count` times around `term`.
    static func negated(_ term: StoragePredicate, _ count: Int) -> StoragePredicate {
        var predicate = term
        for _ in 0..<count { predicate = !predicate }
        return predicate
    }

    /// `id == k || (id != k' && (… age >= 30))`, alternating `&&` and `||` `levels` deep (so
    /// `levels` deep once simplified: no two neighbours merge), and whether a member matches it,
    /// worked out without the store.
    static func alternating(_ levels: Int) -> (predicate: StoragePredicate, matches: (Member) -> Bool) {
        var predicate: StoragePredicate = Column("age") >= 30
        for level in 0..<levels {
            let key = Int64(level % 45 + 1)
            predicate = level % 2 == 0 ? (Column("id") != key && predicate) : (Column("id") == key || predicate)
        }
        let matches = { (member: Member) -> Bool in
            var holds = member.age >= 30
            for level in 0..<levels {
                let key = Int64(level % 45 + 1)
                holds = level % 2 == 0 ? (member.id != key && holds) : (member.id == key || holds)
            }
            return holds
        }
        return (predicate, matches)
    }

    /// Runs `body` in a detached task (on Swift's cooperative pool, whose threads' stacks are the
    /// ones a server's handlers have) and waits for it.
    static func inTask<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) throws -> Result {
        let outcome = OneResult<Result>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            outcome.set(Swift.Result { try body() })
            done.signal()
        }
        done.wait()
        return try outcome.get()
    }

    static let deepPredicateChecks: [ConformanceCheck] = [
        check("! nested 1,000, 5,000 and 10,000 times answers as the simplified predicate, here and in a task") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all)
            let term = Column("age") >= 30
            let expected = Member.all.filter { $0.age >= 30 }.map(\.id)
            let opposite = Member.all.filter { $0.age < 30 }.map(\.id)
            for count in [1_000, 5_000, 10_000, 10_001] {
                let predicate = negated(term, count)
                let wanted = count % 2 == 0 ? expected : opposite
                let found = try store.fetchAll(Member.self, where: predicate, orderBy: [.ascending("id")]).map(\.id)
                #expect(found == wanted, "\(count) negations")
                #expect(try store.count(Member.self, where: predicate) == wanted.count)
                #expect(try store.count(in: Member.collectionName, where: predicate) == wanted.count)
                let inTask = try inTask { try store.count(Member.self, where: predicate) }
                #expect(inTask == wanted.count, "\(count) negations in a task")
            }
        },
        check("&& and || alternating 1,000 deep answer, in every call that takes a predicate, here and in a task") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all)
            let (predicate, matches) = alternating(StoragePredicate.maximumDepth)
            let expected = Member.all.filter(matches).map(\.id)
            #expect(!expected.isEmpty && expected.count < Member.all.count)
            let found = try store.fetchAll(Member.self, where: predicate, orderBy: [.ascending("id")]).map(\.id)
            #expect(found == expected)
            #expect(try store.count(Member.self, where: predicate) == expected.count)
            let rows = try store.fetchDictionaries(
                from: Member.collectionName,
                where: predicate,
                orderBy: [.ascending("id")]
            )
            #expect(rows.map { $0["id"] } == expected.map { .integer($0) })
            var streamed: [Int64] = []
            try store.forEach(Member.self, where: predicate, orderBy: [.ascending("id")]) { streamed.append($0.id) }
            #expect(streamed == expected)
            let inTask = try inTask {
                try store.fetchAll(Member.self, where: predicate, orderBy: [.ascending("id")]).map(\.id)
            }
            #expect(inTask == expected)
            #expect(try store.deleteAll(Member.self, where: predicate) == expected.count)
            #expect(try store.fetchAll(Member.self).map(\.id) == Member.all.map(\.id).filter { !expected.contains($0) })
        },
        check("&& and || alternating past the depth limit are .invalidQuery everywhere, naming the limit, nothing done")
        {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(contentsOf: Member.all)
            for levels in [StoragePredicate.maximumDepth + 1, 5_000, 10_000] {
                let predicate = alternating(levels).predicate
                let error = expectError(.invalidQuery) { _ = try store.fetchAll(Member.self, where: predicate) }
                #expect(
                    error?.message.contains("\(StoragePredicate.maximumDepth)") == true,
                    "\(String(describing: error))"
                )
                expectError(.invalidQuery) { _ = try store.count(Member.self, where: predicate) }
                expectError(.invalidQuery) { _ = try store.count(in: Member.collectionName, where: predicate) }
                expectError(.invalidQuery) {
                    _ = try store.fetchDictionaries(from: Member.collectionName, where: predicate)
                }
                expectError(.invalidQuery) { try store.forEach(Member.self, where: predicate) { _ in } }
                expectError(.invalidQuery) { _ = try store.deleteAll(Member.self, where: predicate) }
                expectError(.invalidQuery) { _ = try store.deleteAll(from: Member.collectionName, where: predicate) }
                expectError(.invalidQuery) { try store.transaction { _ = try $0.count(Member.self, where: predicate) } }
                // The same answer for a collection that was never stored, and in a task.
                expectError(.invalidQuery) { _ = try store.fetchAll(Country.self, where: predicate) }
                expectError(.invalidQuery) { _ = try store.count(in: "never_stored", where: predicate) }
                expectError(.invalidQuery) {
                    _ = try inTask { try store.count(Member.self, where: predicate) }
                }
            }
            #expect(try store.count(Member.self) == Member.all.count)
        },
    ]
}

/// The outcome of work done elsewhere, set once and read after.
private final class OneResult<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<Value, any Error>?

    func set(_ result: Result<Value, any Error>) {
        lock.withLock { self.result = result }
    }

    func get() throws -> Value {
        try lock.withLock { result! }.get()
    }
}
