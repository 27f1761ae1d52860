import Foundation
import Storage

/// A record of the deep-predicate workload.
struct DeepRecord: Codable, StorableModel {
    var id: Int64
    var age: Int
}

/// Queries with predicates nested thousands of levels deep, on the process's main thread (whose
/// stack is the one top-level code and a command-line tool run on): for each depth, `!` nested
/// that many times and `&&`/`||` alternating that deep. Prints `not N COUNT` and `alternating N
/// COUNT`, or `alternating N CODE` for a refusal; a crash ends the process with a signal.
enum DeepPredicateWorkload {
    static func run(on store: ObjectStore, depths: [Int], report: (String) -> Void) throws {
        precondition(Thread.isMainThread, "the workload runs on the main thread")
        try store.save(contentsOf: (1...40).map { DeepRecord(id: $0, age: Int(15 + ($0 * 7) % 50)) })
        for depth in depths {
            var negated: StoragePredicate = Column("age") >= 30
            for _ in 0..<depth { negated = !negated }
            report("not \(depth) \(try store.count(DeepRecord.self, where: negated))")
            var alternating: StoragePredicate = Column("age") >= 30
            for level in 0..<depth {
                let key = Int64(level % 45 + 1)
                alternating =
                    level % 2 == 0 ? (Column("id") != key && alternating) : (Column("id") == key || alternating)
            }
            do {
                report("alternating \(depth) \(try store.count(DeepRecord.self, where: alternating))")
            } catch let error as StorageError {
                report("alternating \(depth) \(error.code)")
            }
        }
    }
}
