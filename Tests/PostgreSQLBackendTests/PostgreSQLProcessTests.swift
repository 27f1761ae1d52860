import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Several processes, each with its own `ObjectStore`, on one PostgreSQL database.
@Suite(.dedicatedThreads) struct PostgreSQLProcessTests {
    struct LoadCounter: Codable {
        var id: Int64
        var value: Int64
    }

    struct LoadTick: Codable {
        var id: Int64
        var writer: Int64
        var value: Int64
    }

    /// Four processes each increment one shared counter 500 times in read-modify-write
    /// transactions. The counter ends at exactly 2,000, and the ticks hold every value 1...2,000
    /// once: serialization failures were retried, no update was lost.
    @Test func fourProcessesIncrementingOneCounterLoseNoUpdate() throws {
        let writers = 4
        let increments = 500
        try withStore("counter") { store, path in
            try store.save(LoadCounter(id: 1, value: 0))
            let children = try (1...writers).map { writer in
                try Child(
                    CrashHarness.executable.path,
                    [
                        "--backend", "postgresql", "--path", path, "--workload", "counter",
                        "--writer", String(writer), "--count", String(increments),
                    ]
                )
            }
            for (index, child) in children.enumerated() {
                let (status, lines) = child.wait()
                #expect(status == 0, "writer \(index + 1): \(lines.suffix(3))")
                #expect(lines.filter { $0.hasPrefix("ack ") }.count == increments)
            }
            #expect(try store.fetch(LoadCounter.self, id: 1)?.value == Int64(writers * increments))
            let values = try store.fetchAll(LoadTick.self).map(\.value).sorted()
            #expect(values == (1...Int64(writers * increments)).map { $0 })
        }
    }

    /// Four processes save a record with the same unique name at the same moment, three rounds,
    /// the first on a collection none of them has created yet: exactly one commits, the others
    /// get `.constraintViolation`, and one record is stored.
    @Test func aUniqueIndexRaceBetweenProcessesHasExactlyOneWinner() throws {
        struct LoadClaim: Codable, StorableModel {
            static let indexes: [IndexDefinition] = [.init(["name"], unique: true)]
            var id: Int64
            var name: String
        }
        try withStore("claims") { store, path in
            // No collection yet: the first round also races on creating the table, its unique
            // index and its catalog entry.
            for round in 1...3 {
                let startAt = Date().timeIntervalSince1970 + 1.5
                let children = try (1...4).map { writer in
                    try Child(
                        CrashHarness.executable.path,
                        [
                            "--backend", "postgresql", "--path", path, "--workload", "claim",
                            "--writer", String(round * 10 + writer), "--name", "name-\(round)",
                            "--start-at", String(startAt),
                        ]
                    )
                }
                // Each child claims once and exits: one that goes on running is killed and fails.
                let deadline = ContinuousClock.now + .seconds(60)
                let outcomes = children.map { $0.wait(deadline: deadline) }
                for outcome in outcomes {
                    #expect(outcome.status == 0, "\(outcome.lines.prefix(5))")
                    #expect(outcome.lines.count == 1, "\(outcome.lines.prefix(5))")
                }
                let lines = outcomes.flatMap(\.lines)
                #expect(lines.filter { $0 == "won" }.count == 1, "\(lines)")
                #expect(lines.filter { $0 == "lost constraintViolation" }.count == 3, "\(lines)")
                #expect(try store.count(LoadClaim.self, where: Column("name") == "name-\(round)") == 1)
            }
        }
    }
}
