import FileArchiveBackend
import Foundation
import SQLiteBackend
import Storage

/// The archive coder against Foundation's JSON coder on the same people, one archive per
/// person (as `FileArchive.write` stores a value) and one for the whole array; then the file
/// archive backend against SQLite for a batch save and a full fetch.
struct ArchiveBenchmarks {
    let directory: URL
    let people: [Person]

    func run(_ harness: inout Harness) throws {
        progress("archive coder (\(people.count) people):")
        let archiveEncoder = ArchiveEncoder()
        let archiveDecoder = ArchiveDecoder()
        let jsonEncoder = JSONEncoder()
        let jsonDecoder = JSONDecoder()

        var archives: [Data] = []
        var documents: [Data] = []
        let encodeOurs = try harness.measure { archives = try people.map { try archiveEncoder.encode($0) } }
        let encodeJSON = try harness.measure { documents = try people.map { try jsonEncoder.encode($0) } }
        harness.record(
            backend: "archive coder",
            operation: "encode one person",
            rows: people.count,
            ours: encodeOurs,
            baseline: "JSONEncoder",
            baselineTime: encodeJSON
        )
        var decoded: [Person] = []
        let decodeOurs = try harness.measure {
            decoded = try archives.map { try archiveDecoder.decode(Person.self, from: $0) }
        }
        precondition(decoded == people, "the archive coder lost data")
        let decodeJSON = try harness.measure {
            decoded = try documents.map { try jsonDecoder.decode(Person.self, from: $0) }
        }
        harness.record(
            backend: "archive coder",
            operation: "decode one person",
            rows: people.count,
            ours: decodeOurs,
            baseline: "JSONDecoder",
            baselineTime: decodeJSON
        )
        var archive = Data()
        var document = Data()
        let arrayOurs = try harness.measure {
            archive = try archiveEncoder.encode(people)
            decoded = try archiveDecoder.decode([Person].self, from: archive)
        }
        let arrayJSON = try harness.measure {
            document = try jsonEncoder.encode(people)
            decoded = try jsonDecoder.decode([Person].self, from: document)
        }
        harness.record(
            backend: "archive coder",
            operation: "encode+decode array",
            rows: people.count,
            ours: arrayOurs,
            baseline: "JSON coder",
            baselineTime: arrayJSON
        )
        progress("  sizes: archive \(archive.count) bytes, JSON \(document.count) bytes")

        let stored = Array(people.prefix(10_000))
        progress("file archive backend (\(stored.count) people, one file each):")
        var round = 0
        var archiveStore: ObjectStore?
        var sqliteStore: ObjectStore?
        func fresh() throws {
            round += 1
            let folder = directory.appendingPathComponent("archive-\(round)").path
            archiveStore = try ObjectStore(backend: .fileArchive(directory: folder))
            sqliteStore = try ObjectStore(
                backend: .sqlite(path: directory.appendingPathComponent("bench-\(round).sqlite").path)
            )
        }
        let saveOurs = try harness.measure(setUp: fresh) { try archiveStore!.save(contentsOf: stored) }
        let saveSQLite = try harness.measure(setUp: fresh) { try sqliteStore!.save(contentsOf: stored) }
        harness.record(
            backend: "file archive",
            operation: "save(contentsOf:)",
            rows: stored.count,
            ours: saveOurs,
            baseline: "sqlite",
            baselineTime: saveSQLite
        )
        try fresh()
        try archiveStore!.save(contentsOf: stored)
        try sqliteStore!.save(contentsOf: stored)
        let folder = directory.appendingPathComponent("archive-\(round)").path
        let openOurs = try harness.measure {
            let reopened = try ObjectStore(backend: .fileArchive(directory: folder))
            let count = try reopened.fetchAll(Person.self).count
            precondition(count == stored.count)
        }
        let fetchSQLite = try harness.measure {
            let count = try sqliteStore!.fetchAll(Person.self).count
            precondition(count == stored.count)
        }
        harness.record(
            backend: "file archive",
            operation: "open + fetchAll",
            rows: stored.count,
            ours: openOurs,
            baseline: "sqlite fetchAll",
            baselineTime: fetchSQLite
        )
    }
}
