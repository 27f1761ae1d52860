import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// The crash writer's migration workload (`MigrationWorkload`: a column renamed, one dropped,
/// every record rewritten) is killed with SIGKILL at random moments after a migration began.
/// After every kill the reopened store is as a whole prefix of the migrations left it (records,
/// columns, ticks and the applied list agree), and a last `migrate` finishes the rest.
@Test(.dedicatedThreads, arguments: DiskBackend.everyCase)
func migrationKilledHalfWayLeavesTheStoreAsBeforeIt(_ backend: DiskBackend) throws {
    try TemporaryDirectory.with("migration-kill-\(backend)") { directory in
        let path = backend.storePath(in: directory)
        let count = 8_000
        let seeded = try backend.openStore(path: path)
        try MigrationWorkload.seed(seeded, count: count)
        try seeded.close()
        var interrupted = 0
        var outputs: [String] = []
        for _ in 0..<5 {
            let writer = try MigrationWorkload.runWriter(backend: backend.rawValue, path: path)
            let lines = MigrationWorkload.lines(of: writer, killAfter: Int.random(in: 0..<60_000))
            #expect(!lines.contains { $0.hasPrefix("error") }, "\(lines)")
            let began = lines.contains { $0.hasPrefix("begin") }
            let finished = lines.contains { $0.hasPrefix("ran") }
            if began && !finished { interrupted += 1 }
            outputs.append(lines.joined(separator: ","))
            let store = try backend.openStore(path: path)
            let applied = try MigrationWorkload.verify(store, count: count)
            try store.close()
            if applied.count == MigrationWorkload.names.count { break }
        }
        #expect(interrupted >= 1, "no kill landed inside a migration: \(outputs)")
        let store = try backend.openStore(path: path)
        _ = try MigrationWorkload.migrator().migrate(store)
        #expect(try MigrationWorkload.verify(store, count: count) == MigrationWorkload.names)
    }
}

/// Two processes migrate one store at the same moment: each migration runs exactly once (the
/// names the two report are the migrations, with none twice), and the store holds one tick per
/// migration.
@Test(.dedicatedThreads, arguments: DiskBackend.everyCase)
func twoProcessesMigratingAtOnceRunEachMigrationOnce(_ backend: DiskBackend) throws {
    try TemporaryDirectory.with("migration-race-\(backend)") { directory in
        let path = backend.storePath(in: directory)
        let count = 2_000
        let seeded = try backend.openStore(path: path)
        try MigrationWorkload.seed(seeded, count: count)
        try seeded.close()
        let start = Date().addingTimeInterval(1)
        let writers = try (0..<2).map { _ in
            try MigrationWorkload.runWriter(backend: backend.rawValue, path: path, startAt: start)
        }
        let outputs = writers.map { MigrationWorkload.lines(of: $0) }
        let ran = outputs.compactMap { lines in
            lines.first { $0.hasPrefix("ran") }.map { $0.dropFirst(4).split(separator: ",").map(String.init) }
        }
        #expect(ran.count == 2, "\(outputs)")
        #expect(ran.flatMap { $0 }.sorted() == MigrationWorkload.names.sorted(), "\(outputs)")
        let store = try backend.openStore(path: path)
        #expect(try MigrationWorkload.verify(store, count: count) == MigrationWorkload.names)
    }
}
