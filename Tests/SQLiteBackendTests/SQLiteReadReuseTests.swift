import Foundation
import Storage
import Testing

@testable import SQLiteBackend

/// What the read path keeps from one read to the next: the read transaction object of each
/// reader connection, the connection's last key look-up and last schema, and the idle readers.
/// Another backend on the same file stands in for another process.
@Suite struct SQLiteReadReuseTests {
    private static let columns = ["id", "name"]

    /// A backend on a fresh file with `people` 1 to 3 named "a", "b", "c".
    private func withPeople(_ body: (SQLiteStorageBackend, String) throws -> Void) throws {
        try withBackend { backend, path in
            try backend.write { transaction in
                _ = try transaction.prepareCollection(peopleSchema)
                try transaction.put(
                    [[.integer(1), .text("a")], [.integer(2), .text("b")], [.integer(3), .text("c")]],
                    into: "people",
                    columns: Self.columns
                )
            }
            try body(backend, path)
        }
    }

    /// The `name` of record `key` of `people`, looked up in `transaction`.
    private func name(_ key: Int64, in transaction: any BackendReadTransaction) throws -> String? {
        var name: String?
        _ = try transaction.get("people", key: .integer(key), columns: Self.columns) { row in
            if case .text(let text) = row.value(at: 1) { name = text }
        }
        return name
    }

    private func identity(of transaction: any BackendReadTransaction) -> ObjectIdentifier {
        ObjectIdentifier(transaction as AnyObject)
    }

    /// The connection `transaction` reads on.
    private func connection(of transaction: any BackendReadTransaction) -> ObjectIdentifier? {
        (transaction as? SQLiteReadTransaction).map { ObjectIdentifier($0.connection) }
    }

    @Test func aTransactionKeptPastItsReadStaysInvalidWhenItsConnectionReadsAgain() throws {
        try withPeople { backend, _ in
            let kept = try backend.read { $0 }
            // The next reads run on the same (only idle) connection.
            try backend.read { transaction throws -> Void in
                #expect(identity(of: transaction) != identity(of: kept))
                #expect(try name(1, in: transaction) == "a")
                #expect(throwsStorageError(.misuse) { _ = try name(1, in: kept) })
            }
            let keptUnpinned = try backend.readSingleQuery { $0 }
            try backend.readSingleQuery { transaction throws -> Void in
                #expect(try name(2, in: transaction) == "b")
                #expect(throwsStorageError(.misuse) { _ = try name(2, in: keptUnpinned) })
                #expect(throwsStorageError(.misuse) { _ = try name(2, in: kept) })
            }
        }
    }

    @Test func nestedReadsOnOneThreadEachHaveTheirOwnTransaction() throws {
        try withPeople { backend, _ in
            for _ in 0..<3 {
                try backend.read { outer throws -> Void in
                    #expect(try name(1, in: outer) == "a")
                    try backend.readSingleQuery { inner throws -> Void in
                        #expect(identity(of: inner) != identity(of: outer))
                        #expect(connection(of: inner) != connection(of: outer))
                        #expect(try name(2, in: inner) == "b")
                        try backend.read { innermost throws -> Void in
                            #expect(identity(of: innermost) != identity(of: inner))
                            #expect(connection(of: innermost) != connection(of: inner))
                            #expect(connection(of: innermost) != connection(of: outer))
                            #expect(try name(3, in: innermost) == "c")
                        }
                        #expect(try name(3, in: inner) == "c")
                    }
                    // The outer transaction is still valid after the inner ones ended.
                    #expect(try name(1, in: outer) == "a")
                }
            }
        }
    }

    @Test func aLookUpInsideALookUpOfTheSameCollectionKeepsTheOuterRow() throws {
        try withPeople { backend, _ in
            try backend.read { transaction throws -> Void in
                // The outer look-up's statement is the connection's last one, and in use.
                #expect(try name(1, in: transaction) == "a")
                var outer: [String] = []
                _ = try transaction.get("people", key: .integer(1), columns: Self.columns) { row throws -> Void in
                    #expect(try name(2, in: transaction) == "b")
                    if case .text(let text) = row.value(at: 1) { outer.append(text) }
                }
                #expect(outer == ["a"])
                #expect(try name(3, in: transaction) == "c")
            }
        }
    }

    @Test func concurrentReadersNeverShareATransactionOrAConnection() throws {
        try withPeople { backend, _ in
            struct Tally {
                var active: Set<ObjectIdentifier> = []
                var shared = 0
                var wrong = 0
            }
            let tally = Locked(Tally())
            DispatchQueue.concurrentPerform(iterations: 6) { thread in
                for round in 0..<300 {
                    let body = { (transaction: any BackendReadTransaction) throws -> Void in
                        // Neither the transaction object nor its connection is another thread's.
                        let identities = [identity(of: transaction), connection(of: transaction)].compactMap { $0 }
                        tally.withLock { tally in
                            for identity in identities where !tally.active.insert(identity).inserted {
                                tally.shared += 1
                            }
                        }
                        defer {
                            tally.withLock { tally in for identity in identities { tally.active.remove(identity) } }
                        }
                        let key = Int64(1 + (thread + round) % 3)
                        let expected = ["a", "b", "c"][Int(key) - 1]
                        if (try? name(key, in: transaction)) != expected { tally.withLock { $0.wrong += 1 } }
                    }
                    if round.isMultiple(of: 2) {
                        try? backend.read(body)
                    } else {
                        try? backend.readSingleQuery(body)
                    }
                }
            }
            #expect(tally.withLock { $0.shared } == 0)
            #expect(tally.withLock { $0.wrong } == 0)
        }
    }

    @Test func aSchemaChangedElsewhereReachesTheNextLookUp() throws {
        try withPeople { backend, path in
            for _ in 0..<3 {
                #expect(try backend.readSingleQuery { try name(1, in: $0) } == "a")
                #expect(try backend.read { try name(1, in: $0) } == "a")
            }
            // Another connection makes `people` again with another primary key column: the
            // statement kept for `WHERE "id" = ?` is no answer any more.
            let other = try SQLiteStorageBackend(path: path)
            let renamed = CollectionSchema(
                name: "people",
                columns: [
                    ColumnDefinition(name: "name", type: .text, isNullable: false),
                    ColumnDefinition(name: "id", type: .integer),
                    ColumnDefinition(name: "code", type: .integer, isNullable: false),
                ],
                primaryKey: "code"
            )
            try other.write { transaction in
                try transaction.dropCollection("people")
                _ = try transaction.prepareCollection(renamed)
                try transaction.put(
                    [[.text("x"), .integer(1), .integer(2)], [.text("y"), .integer(2), .integer(1)]],
                    into: "people",
                    columns: ["name", "id", "code"]
                )
            }
            // Looked up by `code` now: key 1 is "y".
            #expect(try backend.readSingleQuery { try name(1, in: $0) } == "y")
            #expect(try backend.read { try name(1, in: $0) } == "y")
            #expect(try backend.read { try $0.schema(of: "people")?.primaryKey } == "code")
            try other.write { transaction in try transaction.dropCollection("people") }
            #expect(try backend.readSingleQuery { try name(1, in: $0) } == nil)
            #expect(try backend.read { try name(1, in: $0) } == nil)
            try other.close()
        }
    }

    @Test func aCollectionMadeElsewhereAfterALookUpFoundNoneIsFound() throws {
        try withBackend { backend, path in
            // The connection's last schema look-up: no `people`, at the current schema version.
            for _ in 0..<3 {
                #expect(try backend.read { try name(1, in: $0) } == nil)
                #expect(try backend.readSingleQuery { try name(1, in: $0) } == nil)
            }
            let other = try SQLiteStorageBackend(path: path)
            try other.write { transaction in
                _ = try transaction.prepareCollection(peopleSchema)
                try transaction.put([[.integer(1), .text("new")]], into: "people", columns: Self.columns)
            }
            // Unpinned, "no such collection" at the version assumed proves nothing: pinned, found.
            #expect(try backend.readSingleQuery { try name(1, in: $0) } == "new")
            #expect(try backend.read { try name(1, in: $0) } == "new")
            try other.close()
        }
    }

    @Test func aWriteTransactionDoesNotKeepALookUpPastItsOwnSchemaChange() throws {
        try withPeople { backend, _ in
            try backend.write { transaction in
                #expect(try name(1, in: transaction) == "a")
                #expect(try name(2, in: transaction) == "b")
                try transaction.dropCollection("people")
                #expect(try name(1, in: transaction) == nil)
                _ = try transaction.prepareCollection(peopleSchema)
                try transaction.put([[.integer(1), .text("z")]], into: "people", columns: Self.columns)
                #expect(try name(1, in: transaction) == "z")
            }
            #expect(try backend.read { try name(1, in: $0) } == "z")
        }
    }

    @Test func closeReleasesTheIdleReaders() throws {
        try withPeople { backend, path in
            // Reads leave their connections idle in the pool; none may be left open by close().
            for _ in 0..<5 {
                #expect(try backend.readSingleQuery { try name(1, in: $0) } == "a")
                #expect(try backend.read { try name(2, in: $0) } == "b")
            }
            try backend.read { _ in try backend.read { _ in } }
            try backend.close()
            // The last connection closed checkpoints the WAL and removes it.
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(throwsStorageError(.closed) { _ = try backend.read { try name(1, in: $0) } })
            try FileManager.default.removeItem(atPath: path)
            let reopened = try SQLiteStorageBackend(path: path)
            #expect(try reopened.read { try $0.schema(of: "people") } == nil)
            try reopened.close()
        }
    }
}
