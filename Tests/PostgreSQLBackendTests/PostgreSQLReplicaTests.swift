import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// A primary and one streaming-replication standby (`pg_basebackup -R`) on this machine.
@Suite(.dedicatedThreads) struct PostgreSQLReplicaTests {
    struct Entry: Codable, Equatable {
        var id: Int64
        var text: String
    }

    /// Reads outside a transaction are served by the standby (while its replay is paused they
    /// miss a new commit, which the primary has); writes and reads inside `transaction {}` go to
    /// the primary (a write on the read-only standby would fail); `readingFromPrimary` opts a
    /// read out; once replay resumes, the standby returns the committed data.
    @Test func readsGoToTheStandbyAndWritesToThePrimary() throws {
        try TemporaryDirectory.with("postgres-replica") { directory in
            let primaryFolder = directory.appendingPathComponent("primary").path
            let standbyFolder = directory.appendingPathComponent("standby").path
            let primaryURL = try PostgreSQLTestServer.run(["start", primaryFolder])
                .trimmingCharacters(in: .whitespacesAndNewlines)
            defer { _ = try? PostgreSQLTestServer.run(["stop", primaryFolder]) }
            let standbyURL = try PostgreSQLTestServer.run(["standby", primaryFolder, standbyFolder])
                .trimmingCharacters(in: .whitespacesAndNewlines)
            defer { _ = try? PostgreSQLTestServer.run(["stop", standbyFolder]) }

            let backend = try PostgreSQLStorageBackend(
                url: primaryURL,
                configuration: .init(replicaURLs: [standbyURL], observesOtherProcesses: false)
            )
            let store = ObjectStore(backend: backend)
            try store.save(Entry(id: 1, text: "one"))
            // Until the standby has replayed the store's creation, a read there fails (no catalog).
            #expect(PostgreSQLObservationTests.eventually { (try? store.fetch(Entry.self, id: 1)) != nil })

            let standby = try RawConnection(standbyURL)
            try standby.execute("SELECT pg_wal_replay_pause()")
            try store.save(Entry(id: 2, text: "two"))
            #expect(try backend.readingFromPrimary { try store.fetch(Entry.self, id: 2) } == Entry(id: 2, text: "two"))
            try store.transaction { tx throws in
                #expect(try tx.fetch(Entry.self, id: 2) == Entry(id: 2, text: "two"))
            }
            usleep(300_000)
            #expect(try store.fetch(Entry.self, id: 2) == nil, "a read outside a transaction came from the primary")
            #expect(try store.count(Entry.self) == 1)

            try standby.execute("SELECT pg_wal_replay_resume()")
            #expect(try PostgreSQLObservationTests.eventually { try store.fetch(Entry.self, id: 2) != nil })
        }
    }
}
