import Foundation
import LMDBBackend
import SQLiteBackend
import Storage

/// `ObjectStore.copy(to:)` between SQLite and LMDB, verification included, beside the slower of
/// the source's `fetchAll` and the destination's `insert` (`save(contentsOf:)`) of the same
/// records, measured in the same run: a copy moves every record out of one engine and into the
/// other, so it can be no faster than the slower of the two. Goal: ratio ≥ 0.5.
enum CopyBenchmarks {
    static let goal = 0.5

    static func run(_ harness: inout Harness, people: [Person], directory: URL) throws {
        let engines: [(name: String, suffixes: [String], open: (String) throws -> ObjectStore)] = [
            ("sqlite", ["", "-wal", "-shm"], { ObjectStore(backend: try .sqlite(path: $0)) }),
            ("lmdb", ["", "-lock"], { ObjectStore(backend: try .lmdb(path: $0)) }),
        ]
        for (source, destination) in [(engines[0], engines[1]), (engines[1], engines[0])] {
            let label = "copy \(source.name)→\(destination.name)"
            progress(label)
            let sourcePath = directory.appendingPathComponent("copy-source.\(source.name)").path
            let targetPath = directory.appendingPathComponent("copy-target.\(destination.name)").path
            func removeTarget() {
                for suffix in destination.suffixes { try? FileManager.default.removeItem(atPath: targetPath + suffix) }
            }
            let from = try source.open(sourcePath)
            try from.save(contentsOf: people)
            defer {
                try? from.close()
                for suffix in source.suffixes { try? FileManager.default.removeItem(atPath: sourcePath + suffix) }
                removeTarget()
            }
            let clock = ContinuousClock()
            var copies: [Duration] = []
            var baselines: [Duration] = []
            // One untimed warm-up of each, then alternate: copy, fetchAll, insert.
            for round in 0...harness.repetitions {
                removeTarget()
                let target = try destination.open(targetPath)
                let copy = try clock.measure {
                    let report = try from.copy(to: target)
                    precondition(report.records == people.count && report.collections.allSatisfy(\.verified))
                }
                try target.close()
                removeTarget()
                let fetch = try clock.measure { consume(try from.fetchAll(Person.self)) }
                let fresh = try destination.open(targetPath)
                let insert = try clock.measure { try fresh.save(contentsOf: people) }
                try fresh.close()
                if round > 0 {
                    copies.append(copy)
                    baselines.append(max(fetch, insert))
                }
            }
            harness.record(
                backend: "\(source.name)→\(destination.name)",
                operation: .copy,
                rows: people.count,
                ours: Harness.median(copies),
                baseline: "slower of \(source.name) fetchAll and \(destination.name) insert",
                baselineTime: Harness.median(baselines),
                goal: goal
            )
        }
    }
}
