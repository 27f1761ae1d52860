import Foundation
import Storage
import Testing

/// Change observation, on every backend: it is implemented once, above the backend protocol.
struct ObservationChecks {
    struct Item: Codable, Equatable {
        var id: Int64
        var name: String
    }

    struct Other: Codable {
        var id: Int64
    }

    struct Note: Codable {
        var text: String
    }

    struct Refused: Error {}

    /// Waits until `condition` holds, for at most two seconds.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<200 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    func oneChangePerCommittedTransactionOfTheObservedCollection(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("observe")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        var changes = store.changes(of: Item.self).makeAsyncIterator()

        try await store.save(Other(id: 1))  // another collection: not delivered
        #expect(throws: Refused.self) {  // rolled back: not delivered
            try store.transaction { tx in
                try tx.save(Item(id: 99, name: "never"))
                throw Refused()
            }
        }
        try await store.save(Item(id: 1, name: "a"))
        try await store.transaction { tx in
            try tx.save(contentsOf: [Item(id: 2, name: "b"), Item(id: 3, name: "c")])
            try tx.save(Other(id: 2))
            try tx.delete(Item.self, id: 1)
        }
        try await store.save(Item(id: 4, name: "d"))
        try await store.delete(Item.self, id: 4)
        #expect(try await store.delete(Item.self, id: 12345) == false)  // deleted nothing: no change
        try await store.deleteAll(Item.self, where: Column("name") == "b")

        #expect(await changes.next() == CollectionChange(collection: "Item", upserted: [.integer(1)], deleted: []))
        #expect(
            await changes.next()
                == CollectionChange(collection: "Item", upserted: [.integer(2), .integer(3)], deleted: [.integer(1)])
        )
        #expect(await changes.next() == CollectionChange(collection: "Item", upserted: [.integer(4)], deleted: []))
        #expect(await changes.next() == CollectionChange(collection: "Item", upserted: [], deleted: [.integer(4)]))
        #expect(await changes.next() == CollectionChange(collection: "Item", upserted: [], deleted: [.integer(2)]))
    }

    func aKeyIsListedOnceUnderItsLastOperation(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("observe")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        try await store.save(Item(id: 1, name: "a"))
        var changes = store.changes(of: Item.self).makeAsyncIterator()
        try await store.transaction { tx in
            try tx.save(Item(id: 5, name: "new"))
            try tx.delete(Item.self, id: 5)  // saved then deleted: deleted
            try tx.delete(Item.self, id: 1)
            try tx.save(Item(id: 1, name: "back"))  // deleted then saved: upserted
            try tx.save(Item(id: 1, name: "again"))  // twice: once
        }
        let change = await changes.next()
        #expect(change?.upserted == [.integer(1)])
        #expect(change?.deleted == [.integer(5)])
    }

    func autoAssignedKeysAndDictionaryCollectionsAreObserved(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("observe")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        var notes = store.changes(of: Note.self).makeAsyncIterator()
        // Collection names compare ignoring case, so "EVENTS" observes "events".
        var events = store.changes(in: "EVENTS").makeAsyncIterator()
        let keys = try await store.save(contentsOf: [Note(text: "x"), Note(text: "y")])
        try await store.insert(jsonArray: Data(#"[{"id": "e1", "n": 1}, {"id": "e2", "n": 2}]"#.utf8), into: "events")

        #expect(await notes.next()?.upserted == keys)
        let change = await events.next()
        #expect(change?.collection == "events")
        #expect(change?.upserted == [.text("e1"), .text("e2")])
    }

    func aConsumerThatFallsBehindNeverBlocksTheWriter(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("observe")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        let everything = store.changes(of: Item.self)
        let latest = store.changes(of: Item.self, bufferingPolicy: .bufferingNewest(3))
        // Nobody consumes while 300 transactions commit.
        for id in 1...300 { try await store.save(Item(id: Int64(id), name: "n")) }

        var seen: [StorageValue] = []
        for await change in everything {
            seen += change.upserted
            if seen.count == 300 { break }
        }
        #expect(seen == (1...300).map { .integer(Int64($0)) })
        var kept: [StorageValue] = []
        for await change in latest {
            kept += change.upserted
            if kept.count == 3 { break }
        }
        #expect(kept == [.integer(298), .integer(299), .integer(300)])
    }

    func concurrentWritersAreDeliveredOnceEachInCommitOrder(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("observe")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        let changes = store.changes(of: Item.self)
        DispatchQueue.concurrentPerform(iterations: 4) { writer in
            for index in 0..<25 {
                _ = try? store.save(Item(id: Int64(writer * 100 + index), name: "w\(writer)"))
            }
        }
        var keys: [StorageValue] = []
        for await change in changes {
            #expect(change.upserted.count == 1)
            keys += change.upserted
            if keys.count == 100 { break }
        }
        #expect(Set(keys).count == 100)
        // Each writer's own saves arrive in the order it made them.
        for writer in 0..<4 {
            let own = keys.compactMap { key -> Int64? in
                guard case .integer(let id) = key, id / 100 == Int64(writer) else { return nil }
                return id
            }
            #expect(own == own.sorted())
        }
    }

    func cancellingOrReleasingAStreamEndsItsSubscription(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("observe")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        let consumer = Task {
            var count = 0
            for await _ in store.changes(of: Item.self) { count += 1 }
            return count
        }
        #expect(await Self.eventually { store.changeSubscriberCount == 1 })
        try await store.save(Item(id: 1, name: "a"))
        consumer.cancel()
        _ = await consumer.value
        #expect(store.changeSubscriberCount == 0)

        do {
            let unused = store.changes(of: Item.self)
            #expect(store.changeSubscriberCount == 1)
            _ = unused
        }
        #expect(await Self.eventually { store.changeSubscriberCount == 0 })
        try await store.save(Item(id: 2, name: "b"))  // no subscriber left to deliver to
    }

    struct Word: Codable {
        var id: String
        var v: Int
    }

    struct Measure: Codable {
        var id: Double
        var v: Int
    }

    /// Keys whose bytes differ (NFC and NFD spellings, a case variant, a trailing space) are
    /// different keys in a change, as they are different records; `0.0` and `-0.0` are one.
    func changesNameKeysByTheirBytesAndZerosAsOneKey(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("observe")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        let (nfc, nfd, upper, spaced) = ("caf\u{E9}", "cafe\u{301}", "Caf\u{E9}", "caf\u{E9} ")
        var words = store.changes(of: Word.self).makeAsyncIterator()
        var measures = store.changes(of: Measure.self).makeAsyncIterator()
        var json = store.changes(in: "entries").makeAsyncIterator()
        try await store.transaction { tx in
            try tx.save(contentsOf: [nfc, nfd, upper, spaced].map { Word(id: $0, v: 1) })
            try tx.delete(Word.self, id: nfd)
        }
        try await store.transaction { tx in
            try tx.save(Measure(id: 0.0, v: 1))
            try tx.save(Measure(id: -0.0, v: 2))
        }
        let rows = [nfc, nfd].map { ["id": $0, "v": 1] as [String: Any] }
        try await store.insert(jsonArray: try JSONSerialization.data(withJSONObject: rows), into: "entries")

        let change = await words.next()
        // `StorageValue`'s `==` compares text by its bytes.
        #expect(change?.upserted == [.text(nfc), .text(upper), .text(spaced)])
        #expect(change?.deleted == [.text(nfd)])
        #expect(try await store.count(Word.self) == 3)
        let zeros = await measures.next()
        #expect(zeros?.upserted.count == 1 && zeros?.deleted == [])
        #expect(try await store.count(Measure.self) == 1)
        let entries = await json.next()
        #expect(entries?.upserted.count == 2)
    }

    /// What one committed transaction should report: the keys whose last operation was a save,
    /// and those whose last operation deleted a stored record.
    struct ExpectedChange: Equatable, CustomStringConvertible {
        var upserted: Set<Int64> = []
        var deleted: Set<Int64> = []
        var isEmpty: Bool { upserted.isEmpty && deleted.isEmpty }
        var description: String { "upserted \(upserted.sorted()) deleted \(deleted.sorted())" }

        init() {}
        init(_ change: CollectionChange) {
            for key in change.upserted { if case .integer(let id) = key { upserted.insert(id) } }
            for key in change.deleted { if case .integer(let id) = key { deleted.insert(id) } }
        }

        mutating func saved(_ id: Int64) {
            deleted.remove(id)
            upserted.insert(id)
        }
        mutating func removed(_ id: Int64) {
            upserted.remove(id)
            deleted.insert(id)
        }
    }

    /// 150 random saves, batches, deletes and transactions (some rolled back) of `Item`s; returns
    /// what each commit that changed the collection should report, in order, and the records left.
    /// Synchronous, so that the store's blocking calls are the ones made.
    static func makeRandomCommits(_ store: ObjectStore) throws -> ([ExpectedChange], [Int64: Item]) {
        var random = SeededGenerator(seed: 77)
        var stored: [Int64: Item] = [:]
        var expected: [ExpectedChange] = []
        func someID() -> Int64 { Int64.random(in: 1...30, using: &random) }
        func item(_ id: Int64) -> Item { Item(id: id, name: String(Int.random(in: 0..<5, using: &random))) }
        for _ in 0..<150 {
            var change = ExpectedChange()
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                let saved = item(someID())
                try store.save(saved)
                stored[saved.id] = saved
                change.saved(saved.id)
            case 1:
                let batch = (0..<Int.random(in: 1...6, using: &random)).map { _ in item(someID()) }
                try store.save(contentsOf: batch)
                for saved in batch {
                    stored[saved.id] = saved
                    change.saved(saved.id)
                }
            case 2:
                let id = someID()
                let existed = stored.removeValue(forKey: id) != nil
                #expect(try store.delete(Item.self, id: id) == existed)
                if existed { change.removed(id) }
            case 3:
                let name = String(Int.random(in: 0..<5, using: &random))
                let doomed = stored.values.filter { $0.name == name }.map(\.id)
                #expect(try store.deleteAll(Item.self, where: Column("name") == name) == doomed.count)
                for id in doomed {
                    stored[id] = nil
                    change.removed(id)
                }
            default:
                // Several operations in one transaction, committed or rolled back.
                let commits = Bool.random(using: &random)
                var after = stored
                // PostgreSQL runs the closure again after a serialization failure: each attempt
                // starts from the same draws and the same expectations.
                let draws = random
                do {
                    try store.transaction { transaction in
                        random = draws
                        after = stored
                        change = ExpectedChange()
                        for _ in 0..<Int.random(in: 1...5, using: &random) {
                            let id = someID()
                            if Bool.random(using: &random) {
                                let saved = item(id)
                                try transaction.save(saved)
                                after[id] = saved
                                change.saved(id)
                            } else if try transaction.delete(Item.self, id: id) {
                                after[id] = nil
                                change.removed(id)
                            }
                        }
                        if !commits { throw Refused() }
                    }
                } catch is Refused {}
                if commits { stored = after } else { change = ExpectedChange() }
            }
            if !change.isEmpty { expected.append(change) }
        }
        return (expected, stored)
    }

    func randomCommitsAreReportedOnceEachAsTheyChangedTheCollection(_ fixture: BackendFixture) async throws {
        let directory = try TemporaryDirectory("observe")
        defer { directory.remove() }
        let store = try fixture.openStore(in: directory.url)
        var changes = store.changes(of: Item.self).makeAsyncIterator()
        let (expected, stored) = try Self.makeRandomCommits(store)
        // Every committed change, in commit order, and nothing more: read up to a last save's
        // change, which commits after all of them (a missing change fails, it does not hang).
        try await store.save(Item(id: 1_000, name: "last"))
        var marker = ExpectedChange()
        marker.saved(1_000)
        var delivered: [ExpectedChange] = []
        while let next = await changes.next().map(ExpectedChange.init), next != marker {
            delivered.append(next)
        }
        #expect(delivered == expected)
        #expect(Set(try await store.fetchAll(Item.self).map(\.id)) == Set(stored.keys).union([1_000]))
    }
}

extension ConformanceSuite {
    static let observationAsyncChecks: [ConformanceCheck] = [
        asyncCheck("one change per committed transaction of the observed collection") { fixture, _ in
            try await ObservationChecks().oneChangePerCommittedTransactionOfTheObservedCollection(fixture)
        },
        asyncCheck("a key is listed once under its last operation") { fixture, _ in
            try await ObservationChecks().aKeyIsListedOnceUnderItsLastOperation(fixture)
        },
        asyncCheck("auto assigned keys and dictionary collections are observed") { fixture, _ in
            try await ObservationChecks().autoAssignedKeysAndDictionaryCollectionsAreObserved(fixture)
        },
        asyncCheck("a consumer that falls behind never blocks the writer") { fixture, _ in
            try await ObservationChecks().aConsumerThatFallsBehindNeverBlocksTheWriter(fixture)
        },
        asyncCheck("concurrent writers are delivered once each in commit order") { fixture, _ in
            try await ObservationChecks().concurrentWritersAreDeliveredOnceEachInCommitOrder(fixture)
        },
        asyncCheck("cancelling or releasing a stream ends its subscription") { fixture, _ in
            try await ObservationChecks().cancellingOrReleasingAStreamEndsItsSubscription(fixture)
        },
        asyncCheck("changes name keys by their bytes and zeros as one key") { fixture, _ in
            try await ObservationChecks().changesNameKeysByTheirBytesAndZerosAsOneKey(fixture)
        },
        asyncCheck("random commits are reported once each as they changed the collection") { fixture, _ in
            try await ObservationChecks().randomCommitsAreReportedOnceEachAsTheyChangedTheCollection(fixture)
        },
    ]
}
