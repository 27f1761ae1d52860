import Foundation
import LMDBBackend
import Storage
import StorageTestSupport
import Testing

/// The LMDB backend's store events: the map grown, and the write whose closure runs again after
/// the map filled up.
@Suite struct LMDBEventTests {
    struct Entry: Codable {
        var id: Int64
        var text: String
    }

    /// A store whose map starts at 64 KiB reports each growth (`mapGrown`, with the new size,
    /// growing) and each run again of a transaction's closure after the map filled up (`retry`,
    /// "map full"): the closure's runs are one more than the retries reported.
    @Test func aSmallMapReportsItsGrowthAndTheRetriesOfAFullMap() throws {
        try withStorePath { _, path in
            let events = Locked<[StoreEvent]>([])
            let reporter = StoreEventReporter { event in events.withLock { $0.append(event) } }
            let store = try ObjectStore(
                backend: .lmdb(path: path, configuration: .init(initialMapSize: 64 << 10, events: reporter))
            )
            let text = String(repeating: "x", count: 400)
            var runs = 0
            try store.transaction { tx in
                runs += 1
                for id in 0..<2_000 { try tx.save(Entry(id: Int64(id), text: text)) }
            }
            #expect(try store.count(Entry.self) == 2_000)
            let reported = events.withLock { $0 }
            let grown = reported.filter { $0.kind == .mapGrown }
            #expect(!grown.isEmpty)
            let sizes = grown.compactMap(\.size)
            #expect(sizes.count == grown.count)
            #expect(sizes == sizes.sorted() && sizes.first.map { $0 > 64 << 10 } == true, "\(sizes)")
            #expect(grown.allSatisfy { $0.backend == "LMDB" && $0.location == path })
            let retries = reported.filter { $0.kind == .retry }
            #expect(runs >= 2)
            #expect(retries.count == runs - 1)
            #expect(retries.map(\.attempt) == (2...runs).map { $0 })
            #expect(retries.allSatisfy { $0.reason == "map full" })
        }
    }

    /// A stream made after some growths sees only the later ones: exactly the events the
    /// reporter's handler got after the stream was made.
    @Test func aStreamMadeLaterSeesOnlyLaterGrowths() async throws {
        let directory = try TemporaryDirectory("lmdb-events")
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("store.lmdb").path
        let events = Locked<[StoreEvent]>([])
        let reporter = StoreEventReporter { event in events.withLock { $0.append(event) } }
        let store = try ObjectStore(
            backend: .lmdb(path: path, configuration: .init(initialMapSize: 64 << 10, events: reporter))
        )
        let text = String(repeating: "x", count: 400)
        try await store.save(contentsOf: (0..<500).map { Entry(id: Int64($0), text: text) })
        let before = events.withLock { $0.count }
        #expect(before > 0)
        let stream = store.events()
        try await store.save(contentsOf: (500..<5_000).map { Entry(id: Int64($0), text: text) })
        try await store.close()
        var streamed: [StoreEvent] = []
        for await event in stream { streamed.append(event) }
        let after = events.withLock { Array($0[before...]) }
        #expect(!after.isEmpty)
        #expect(streamed.map(\.date) == after.map(\.date))
        #expect(streamed.map(\.size) == after.map(\.size))
    }
}
