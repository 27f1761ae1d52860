import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// libpq leaves a connection in single-row mode after a streamed read, and does not reset it for
/// the first statement of a pipeline. A write transaction that reads its own records streams them
/// row by row; its commit's check of the cache's answer, the first statement of the commit's
/// pipeline, must not then come back row by row (it did, through a transaction pooler, and the
/// commit failed as a lost connection).
@Suite(.dedicatedThreads) struct PostgreSQLPipelineAfterStreamTests {
    struct Doc: Codable, StorableModel {
        var id: String
        var v: Int
    }

    @Test(arguments: [false, true]) func aTransactionThatReadsItsRecordsCommits(pooling: Bool) throws {
        try withStore("pipeline-after-stream-\(pooling)") { _, path in
            var configuration = PostgreSQLStorageBackend.Configuration(poolSize: 1)
            configuration.transactionPooling = pooling
            let store = try PostgreSQLTestServer.openStore(path: path, configuration: configuration)
            try store.save(Doc(id: "a", v: 0))
            for round in 1...3 {
                try store.transaction { transaction in
                    try transaction.save(Doc(id: "r\(round)", v: round))
                    #expect(try transaction.fetchAll(Doc.self).count == 2 * round)
                }
                #expect(try store.fetchAll(Doc.self).count == 2 * round)
                try store.save(Doc(id: "s\(round)", v: round))
                #expect(try store.fetchAll(Doc.self).count == 2 * round + 1)
            }
        }
    }
}
