internal import CLMDB
import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import LMDBBackend

private struct Item: Codable, Equatable, StorableModel {
    static let indexes: [IndexDefinition] = [.init(["group"]), .init(["code"], unique: true)]
    var id: String
    var group: Int
    var code: String?
    var blob: Data
}

private struct Counter: Codable, Equatable {
    var id: Int64
    var value: Int
}

@Test func theSamePathSharesOneEnvironment() throws {
    try withStorePath { directory, path in
        let first = try LMDBStorageBackend(path: path)
        // Another spelling of the same file.
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("sub"),
            withIntermediateDirectories: true
        )
        let second = try LMDBStorageBackend(path: directory.path + "/sub/../store.lmdb")
        #expect(first.environment === second.environment)
        // Writes through one are read through the other.
        try ObjectStore(backend: first).save(Counter(id: 1, value: 5))
        #expect(try ObjectStore(backend: second).fetch(Counter.self, id: 1)?.value == 5)
    }
}

@Test func storeFilesAreCreatedReadableByTheOwnerOnly() throws {
    try withStorePath { _, path in
        _ = try LMDBStorageBackend(path: path)
        for file in [path, path + "-lock"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(file)")
        }
    }
}

@Test func aSymbolicLinkIsNotOpened() throws {
    try withStorePath { directory, path in
        let target = directory.appendingPathComponent("elsewhere").path
        #expect(FileManager.default.createFile(atPath: target, contents: nil))
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        #expect(throws: StorageError.self) { try LMDBStorageBackend(path: path) }
    }
}

@Test func aSymbolicLinkInPlaceOfTheLockFileIsNotFollowed() throws {
    try withStorePath { directory, path in
        let target = directory.appendingPathComponent("planted").path
        try FileManager.default.createSymbolicLink(atPath: path + "-lock", withDestinationPath: target)
        do {
            _ = try LMDBStorageBackend(path: path)
            Issue.record("a symbolic link was followed to the lock file")
        } catch let error as StorageError {
            #expect(error.code == .cannotOpen)
            #expect(error.message.contains("lock file"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: target))
    }
}

@Test func aPrimaryKeyLongerThanLMDBAllowsIsAClearError() throws {
    try withStorePath { _, path in
        let store = try ObjectStore(backend: .lmdb(path: path))
        let fits = Item(id: String(repeating: "k", count: 400), group: 1, code: nil, blob: Data())
        try store.save(fits)
        #expect(try store.fetch(Item.self, id: fits.id) == fits)
        do {
            try store.save(Item(id: String(repeating: "k", count: 600), group: 1, code: nil, blob: Data()))
            Issue.record("a 600-byte key was accepted")
        } catch let error as StorageError {
            #expect(error.code == .invalidKey)
            #expect(error.message.contains("511"), "\(error)")
            #expect(error.collection == "Item")
        }
        #expect(try store.fetch(Item.self, id: String(repeating: "k", count: 600)) == nil)
        #expect(try store.count(Item.self, where: nil) == 1)
    }
}

@Test func anIndexedValueTooLongForAKeyIsAClearError() throws {
    try withStorePath { _, path in
        let store = try ObjectStore(backend: .lmdb(path: path))
        do {
            try store.save(Item(id: "a", group: 1, code: String(repeating: "c", count: 600), blob: Data()))
            Issue.record("a 600-byte indexed value was accepted")
        } catch let error as StorageError {
            #expect(error.code == .invalidKey)
            #expect(error.column == "code")
        }
        #expect(try store.count(Item.self, where: nil) == 0)
    }
}

@Test func valuesLargerThanAPageRoundTripAndAreCopiedOut() throws {
    try withStorePath { _, path in
        let store = try ObjectStore(backend: .lmdb(path: path))
        let big = Item(
            id: "big",
            group: 1,
            code: "x",
            blob: Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 * 7) })
        )
        let huge = Item(id: "huge", group: 2, code: "y", blob: Data(repeating: 0xAB, count: 1 << 20))
        try store.save(contentsOf: [big, huge])
        let fetched = try #require(try store.fetch(Item.self, id: "big"))
        let scanned = try store.fetchAll(Item.self)
        // Overwrite and delete the records: values handed out before must not change, since they
        // were copied out of the map before their transaction ended.
        for round in 0..<20 {
            try store.save(Item(id: "big", group: 1, code: "x", blob: Data(repeating: UInt8(round), count: 70_000)))
        }
        try store.delete(Item.self, id: "huge")
        #expect(fetched == big)
        #expect(scanned == [big, huge])
        let reopened = try ObjectStore(backend: .lmdb(path: path))
        #expect(try reopened.fetch(Item.self, id: "big")?.blob == Data(repeating: 19, count: 70_000))
    }
}

@Test func queriesUseTheKeyAndTheIndexes() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path)
        let store = ObjectStore(backend: backend)
        let items = (0..<50).map { Item(id: String(format: "i%02d", $0), group: $0 % 5, code: "c\($0)", blob: Data()) }
        try store.save(contentsOf: items)
        try backend.read { transaction in
            let info = try #require(try (transaction as? LMDBReadTransaction)?.info(of: "Item"))
            func source(_ predicate: StoragePredicate) -> String { "\(LMDBQueryPlan(predicate, info).source)" }
            #expect(source(Column("id") == "i07").hasPrefix("key"))
            #expect(source(Column("id") >= "i07").hasPrefix("primary(lower: Optional"))
            #expect(source(Column("group") == 3 && Column("blob") != nil).contains("group"))
            #expect(source(Column("code") > "c4").contains("code"))
            #expect(source(Column("blob") == Data()).hasPrefix("primary(lower: nil, upper: nil"))
        }
        #expect(
            try store.fetchAll(Item.self, where: Column("group") == 3).map(\.id) == [
                "i03", "i08", "i13", "i18", "i23", "i28", "i33", "i38", "i43", "i48",
            ]
        )
        #expect(
            try store.fetchAll(Item.self, where: Column("group") >= 3 && Column("group") < 4, limit: 2).map(\.id) == [
                "i03", "i08",
            ]
        )
        #expect(try store.fetchAll(Item.self, where: Column("id") > "i45").map(\.id) == ["i46", "i47", "i48", "i49"])
        #expect(try store.count(Item.self, where: Column("code") == "c7") == 1)
        // Index entries follow updates and deletes.
        try store.save(Item(id: "i03", group: 4, code: "c3", blob: Data()))
        try store.delete(Item.self, id: "i08")
        #expect(try store.fetchAll(Item.self, where: Column("group") == 3).count == 8)
        #expect(try store.fetchAll(Item.self, where: Column("group") == 4).count == 11)
        // The freed unique value can be taken by another record.
        try store.save(Item(id: "new", group: 0, code: "c8", blob: Data()))
        #expect(throws: StorageError.self) { try store.save(Item(id: "other", group: 0, code: "c8", blob: Data())) }
    }
}

@Test func nestedReadsOnOneThreadWork() throws {
    // Without MDB_NOTLS a second read transaction on a thread fails (MDB_BAD_RSLOT), and a
    // reader slot would belong to a thread that a Swift task may leave.
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path)
        var flags: UInt32 = 0
        mdb_env_get_flags(backend.environment.env, &flags)
        #expect(flags & UInt32(MDB_NOTLS) != 0)
        let store = ObjectStore(backend: backend)
        try store.save(contentsOf: (1...3).map { Counter(id: $0, value: Int($0)) })
        var inner: [Int] = []
        try store.forEach(Counter.self) { counter in
            inner.append(try store.fetch(Counter.self, id: 4 - counter.id)?.value ?? 0)
        }
        #expect(inner == [3, 2, 1])
    }
}

// Synchronous, so the calls resolve to the synchronous API: the read transactions are made on
// whichever thread the task is on.
private func saveCounters(in store: ObjectStore) throws {
    try store.save(contentsOf: (1...100).map { Counter(id: $0, value: Int($0)) })
}

private func fetchValue(in store: ObjectStore, id: Int64) throws -> Int {
    try store.fetch(Counter.self, id: id)?.value ?? 0
}

@Test func readsFromTasksThatHopThreads() async throws {
    let directory = try TemporaryDirectory("lmdb-test")
    defer { directory.remove() }
    let store = try ObjectStore(backend: .lmdb(path: directory.url.appendingPathComponent("s.lmdb").path))
    try saveCounters(in: store)
    let total = try await withThrowingTaskGroup(of: Int.self) { group in
        for task in 0..<16 {
            group.addTask {
                var sum = 0
                for round in 0..<20 {
                    sum += try fetchValue(in: store, id: Int64((task * 20 + round) % 100 + 1))
                    await Task.yield()
                }
                return sum
            }
        }
        return try await group.reduce(0, +)
    }
    #expect(total == (0..<320).map { $0 % 100 + 1 }.reduce(0, +))
}

@Test func aWriteInsideAWriteOnTheSameThreadIsMisuseNotADeadlock() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path)
        try backend.write { _ in
            do {
                try backend.write { _ in }
                Issue.record("a nested write was started")
            } catch let error as StorageError {
                #expect(error.code == .misuse)
            }
        }
    }
}

@Test func aTransactionUsedAfterItsClosureIsMisuse() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path)
        let escaped = try backend.read { $0 }
        #expect(throws: StorageError.self) { _ = try escaped.schema(of: "Counter") }
        let escapedWrite = try backend.write { $0 }
        #expect(throws: StorageError.self) { _ = try escapedWrite.delete(from: "Counter", key: 1) }
    }
}

@Test func oneWriterAtATimeLosesNoUpdate() throws {
    try withStorePath { _, path in
        let store = try ObjectStore(backend: .lmdb(path: path))
        try store.save(Counter(id: 1, value: 0))
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<25 {
                try? store.transaction { tx in
                    let current = try tx.fetch(Counter.self, id: 1)!
                    try tx.save(Counter(id: 1, value: current.value + 1))
                }
            }
        }
        #expect(try store.fetch(Counter.self, id: 1)?.value == 200)
    }
}

@Test func readersSeeWholeCommitsWhileOneWriterWrites() throws {
    // Run under `swift test --sanitize=thread`: readers and the writer share the environment.
    try withStorePath { _, path in
        let store = try ObjectStore(backend: .lmdb(path: path))
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 6) { worker in
            if worker == 0 {
                for batch in 0..<100 {
                    // Two records per commit whose values sum to zero.
                    _ = try? store.save(contentsOf: [
                        Counter(id: Int64(batch * 2), value: batch), Counter(id: Int64(batch * 2 + 1), value: -batch),
                    ])
                }
            } else {
                for _ in 0..<100 {
                    let all = (try? store.fetchAll(Counter.self)) ?? []
                    let count = (try? store.count(Counter.self, where: nil)) ?? -1
                    if all.count % 2 != 0 || all.map(\.value).reduce(0, +) != 0 || count % 2 != 0 {
                        failures.withLock { $0 += 1 }
                    }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try store.count(Counter.self, where: nil) == 200)
    }
}

@Test func aFileThatIsNotAnLMDBStoreIsRefusedWithAStorageError() throws {
    try withStorePath { _, path in
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x5A, count: 64 << 10)))
        do {
            _ = try LMDBStorageBackend(path: path)
            Issue.record("a file of garbage was opened as a store")
        } catch let error as StorageError {
            #expect(error.code == .corrupt || error.code == .cannotOpen, "\(error)")
            #expect(error.path == path)
        }
        #expect(throws: StorageError.self) { try LMDBStorageBackend(path: "") }
    }
}

/// In a collection without indexes a record is written with one `mdb_put` that refuses to
/// overwrite; a stored record it meets must still be replaced, keeping the fields the writer
/// does not name.
@Test func aReplaceWithoutIndexesKeepsTheFieldsTheWriterDoesNotName() throws {
    try withStorePath { _, path in
        let backend = try LMDBStorageBackend(path: path)
        let schema = CollectionSchema(
            name: "notes",
            columns: [
                ColumnDefinition(name: "id", type: .integer, isNullable: false),
                ColumnDefinition(name: "title", type: .text),
                ColumnDefinition(name: "body", type: .text),
            ],
            primaryKey: "id"
        )
        try backend.write { tx in
            _ = try tx.prepareCollection(schema)
            let writer = try tx.makeWriter(for: "notes", columns: ["id", "title", "body"])
            try writer.put([1, "first", "kept"])
            try writer.put([2, "second", "also kept"])
        }
        try backend.write { tx in
            let narrow = try tx.makeWriter(for: "notes", columns: ["id", "title"])
            try narrow.put([1, "renamed"])
            try narrow.put([3, "new"])
            try narrow.put([1, "renamed again"])
        }
        let rows = try backend.read { tx in
            var rows: [[StorageValue]] = []
            try tx.scan(ScanRequest(collection: "notes", columns: ["id", "title", "body"])) { row in
                rows.append((0..<3).map { row.value(at: $0) })
                return true
            }
            return rows
        }
        #expect(rows == [[1, "renamed again", "kept"], [2, "second", "also kept"], [3, "new", .null]])
    }
}

@Test func aStoreWithMoreDatabasesThanMaximumDatabasesSaysWhatToSet() throws {
    try withStorePath { _, path in
        do {
            let backend = try LMDBStorageBackend(path: path)
            try backend.write { transaction in
                for number in 0..<1_023 {
                    _ = try transaction.prepareCollection(
                        CollectionSchema(
                            name: "c\(number)",
                            columns: [.init(name: "id", type: .integer)],
                            primaryKey: "id"
                        )
                    )
                }
            }
        }
        do {
            _ = try LMDBStorageBackend(path: path, configuration: .init(maximumDatabases: 100))
            Issue.record("a store with 1,024 named databases opened with maximumDatabases: 100")
        } catch let error as StorageError {
            #expect(error.code == .limitExceeded, "\(error)")
            #expect(error.message.contains("maximumDatabases: 1024"), "\(error)")
            #expect(error.path == path)
        }
        // With what it says, it opens.
        let backend = try LMDBStorageBackend(path: path, configuration: .init(maximumDatabases: 1_024))
        #expect(try backend.read { try $0.schema(of: "c1022") } != nil)
    }
}

@Test func aCollectionPastMaximumDatabasesIsRefusedWithLimitExceededAndNothingWritten() throws {
    try withStorePath { _, path in
        let store = try ObjectStore(backend: .lmdb(path: path, configuration: .init(maximumDatabases: 3)))
        try store.insert(dictionaries: [["id": 1]], into: "a")
        try store.insert(dictionaries: [["id": 1]], into: "b")
        do {
            try store.insert(dictionaries: [["id": 1]], into: "c")
            Issue.record("a collection was created past maximumDatabases")
        } catch let error as StorageError {
            #expect(error.code == .limitExceeded, "\(error)")
            #expect(error.message.contains("maximumDatabases"), "\(error)")
        }
        #expect(try store.backend.read { try $0.schema(of: "c") } == nil)
        #expect(try store.fetchDictionaries(from: "b").count == 1)
    }
}
