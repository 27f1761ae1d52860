import Foundation
import Storage

/// A claim on a name that only one writer may hold: `name` is a unique index.
struct LoadClaim: Codable, StorableModel {
    static let indexes: [IndexDefinition] = [.init(["name"], unique: true)]
    /// The writer's number.
    var id: Int64
    var name: String
}

/// Several writer processes claim the same name at once: each saves a `LoadClaim` with its own
/// key and the shared name, and prints `won` when the save commits or `lost CODE` when it throws
/// a `StorageError`. With a unique index enforced across processes, exactly one wins.
enum ClaimWorkload {
    static func run(on store: ObjectStore, writer: Int64, name: String, startAt: Date, report: (String) -> Void) throws
    {
        // Started together: every writer waits for the same moment, so the saves overlap.
        let wait = startAt.timeIntervalSinceNow
        if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        do {
            try store.save(LoadClaim(id: writer, name: name))
            report("won")
        } catch let error as StorageError {
            report("lost \(error.code)")
        }
    }
}
