import Foundation
import Storage
import StorageTestSupport

/// The migration workload: runs `MigrationWorkload.migrator` on a seeded store, printing
/// "begin NAME" as each migration starts and "ran NAMES" (comma-separated, maybe none) when
/// `migrate` returns. Several writers started at the same moment race to migrate one store.
enum MigrationWorkloadRunner {
    static func run(on store: ObjectStore, startAt: Date?, report: @escaping @Sendable (String) -> Void) throws {
        if let wait = startAt?.timeIntervalSinceNow, wait > 0 { Thread.sleep(forTimeInterval: wait) }
        let ran = try MigrationWorkload.migrator(announce: report).migrate(store)
        report("ran " + ran.joined(separator: ","))
    }
}
