import Foundation
import Storage
import StorageTestSupport
import Testing

/// Which overload a call runs (issue 32). In an `async` function, `try await store.save(…)`,
/// `transaction` and `read` run the async overloads, whose work runs on the store's threads,
/// outside any task: a lazy sequence handed to `save(contentsOf:)` is iterated there, and a value
/// is encoded there. Called from a synchronous function, the same names run the blocking
/// overloads on the calling thread, inside the test's task. (Thread names cannot tell: on Linux a
/// thread takes the name of the thread that started it. scripts/typecheck-corpus.sh checks the
/// same at compile time: an `await` on a blocking overload is a warning there.)
@Suite struct AsyncOverloadTests {
    struct Member: Codable, Equatable, Sendable {
        var id: Int64
        var name: String
    }

    /// Not `Sendable` (a class with a mutable property): async code hands it over to a save.
    /// Its `encode(to:)` records whether it ran in a task.
    final class Note: Codable {
        static let encodedInTask = Locked<[Bool]>([])
        var id: Int64
        var text: String

        init(id: Int64, text: String) {
            self.id = id
            self.text = text
        }

        enum CodingKeys: String, CodingKey { case id, text }

        func encode(to encoder: any Encoder) throws {
            Self.encodedInTask.withLock { $0.append(inTask()) }
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(text, forKey: .text)
        }
    }

}

/// Whether the caller runs in a task (the store's threads run none).
private func inTask() -> Bool {
    withUnsafeCurrentTask { $0 != nil }
}

extension AsyncOverloadTests {

    @Test func asyncCodeRunsTheAsyncSaveOfALazySequenceOnTheStoresThreads() async throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        let mappedInTask = Locked<[Bool]>([])
        let keys = try await store.save(
            contentsOf: (0..<50).lazy.map {
                mappedInTask.withLock { $0.append(inTask()) }
                return Member(id: Int64($0), name: "n\($0)")
            }
        )
        #expect(keys.count == 50)
        #expect(mappedInTask.withLock { $0 } == Array(repeating: false, count: 50))
        #expect(try await store.count(Member.self) == 50)
        try await store.close()
    }

    @Test func asyncCodeHandsOverValuesOfNonSendableTypes() async throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        Note.encodedInTask.withLock { $0.removeAll() }
        try await store.save(Note(id: 1, text: "one"))
        try await store.save(contentsOf: (2...3).lazy.map { Note(id: Int64($0), text: "n\($0)") })
        let encodedInTask = Note.encodedInTask.withLock { $0 }
        #expect(encodedInTask.count >= 3)
        #expect(!encodedInTask.contains(true))
        let texts = try await store.read { tx in try tx.fetchAll(Note.self, orderBy: [.ascending("id")]).map(\.text) }
        #expect(texts == ["one", "n2", "n3"])
        try await store.close()
    }

    @Test func asyncCodeRunsTheAsyncTransactionAndReadOnTheStoresThreads() async throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        let written = try await store.transaction { tx in
            try tx.save(Member(id: 1, name: "a"))
            return inTask()
        }
        let read = try await store.read { tx in (inTask(), try tx.count(Member.self)) }
        #expect(written == false)
        #expect(read.0 == false)
        #expect(read.1 == 1)
        try await store.close()
    }

    @Test func synchronousCodeRunsTheBlockingOverloadsOnTheCallingThread() throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        #expect(try Self.saveBlocking(store) == [true, true, true])
        #expect(inTask())
        try store.close()
    }

    /// Saves a lazy sequence and runs a transaction and a read from a synchronous function;
    /// for each, whether its work ran on the thread that called it, in the caller's task.
    static func saveBlocking(_ store: ObjectStore) throws -> [Bool] {
        let caller = Thread.current
        let mappedOn = Locked<[Thread]>([])
        try store.save(
            contentsOf: (0..<5).lazy.map {
                if inTask() { mappedOn.withLock { $0.append(Thread.current) } }
                return Member(id: Int64($0), name: "n\($0)")
            }
        )
        let mappedHere = mappedOn.withLock { $0.count == 5 && $0.allSatisfy { $0 === caller } }
        let wroteHere = try store.transaction { _ in inTask() && Thread.current === caller }
        let readHere = try store.read { tx in try tx.count(Member.self) == 5 && inTask() && Thread.current === caller }
        return [mappedHere, wroteHere, readHere]
    }
}
