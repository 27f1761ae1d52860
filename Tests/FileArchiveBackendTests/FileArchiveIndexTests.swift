import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import FileArchiveBackend

private struct Reading: Codable, Equatable, StorableModel {
    static let collectionName = "readings"
    static let indexes: [IndexDefinition] = [.init(["sensor", "at"]), .init(["level"]), .init(["tag"], unique: true)]
    var id: Int64
    var sensor: Int
    var at: Int
    var level: Double?
    var tag: String?
}

/// Equality look-ups through the indexes find exactly what a full scan finds, before and after
/// updates, deletes and a reopen, with integers and reals of the same number.
@Test func indexedEqualityLookupsMatchAFullScan() throws {
    try TemporaryDirectory.with("archive-index") { directory in
        let path = directory.appendingPathComponent("store").path
        var store = try ObjectStore(backend: .fileArchive(directory: path))
        let reference = ObjectStore(backend: InMemoryStorageBackend())
        var generator = SeededGenerator(seed: 7)
        func reading(_ id: Int64) -> Reading {
            let level: Double? = generator.next() % 5 == 0 ? nil : Double(generator.next() % 6) / 2
            return Reading(
                id: id,
                sensor: Int(generator.next() % 7),
                at: Int(generator.next() % 4),
                level: level,
                tag: generator.next() % 3 == 0 ? nil : "t\(id)"
            )
        }
        let initial = (1...200).map { reading($0) }
        try store.save(contentsOf: initial)
        try reference.save(contentsOf: initial)
        func compare(_ label: String) throws {
            var predicates: [StoragePredicate] = [Column("id") == 17, Column("id") == 17.0, Column("id") == 17.5]
            for sensor in 0..<8 { predicates.append(Column("sensor") == sensor) }
            for level in [0.0, 1.0, 1.5, 2.0, 3.0] {
                predicates.append(Column("level") == level)
                predicates.append(Column("level") == StorageValue.integer(Int64(level)))
            }
            predicates.append(Column("sensor") == 3 && Column("at") == 1)
            predicates.append(Column("sensor") == 3 && Column("level") == 1)
            predicates.append(Column("sensor") == 2 || Column("level") == 1)
            predicates.append(Column("tag") == "t5")
            predicates.append(Column("level") == nil)
            for predicate in predicates {
                let ours = try store.fetchAll(Reading.self, where: predicate, orderBy: [.ascending("id")])
                let theirs = try reference.fetchAll(Reading.self, where: predicate, orderBy: [.ascending("id")])
                #expect(ours == theirs, "\(label): \(predicate)")
                #expect(try store.count(Reading.self, where: predicate) == theirs.count, "\(label): \(predicate)")
            }
        }
        try compare("initial")
        let changed = (1...200).filter { $0 % 3 == 0 }.map { reading($0) }
        try store.save(contentsOf: changed)
        try reference.save(contentsOf: changed)
        try store.deleteAll(Reading.self, where: Column("sensor") == 4)
        try reference.deleteAll(Reading.self, where: Column("sensor") == 4)
        try store.delete(Reading.self, id: 17)
        try reference.delete(Reading.self, id: 17)
        try compare("after changes")
        store = try ObjectStore(backend: .fileArchive(directory: path))
        try compare("after reopening")
    }
}

@Test func anEqualityOnAnIndexedColumnNarrowsTheCandidates() throws {
    var table = ArchiveTable(
        schema: CollectionSchema(
            name: "t",
            columns: [.init(name: "id", type: .integer), .init(name: "v", type: .real), .init(name: "w", type: .text)],
            primaryKey: "id",
            indexes: [.init(["v"])]
        ),
        folder: "c-t"
    )
    table.buildLookups()
    for id in 1...10 {
        table.setRecord(
            [.integer(Int64(id)), .real(Double(id % 3)), .text("w")],
            forKey: StorageKey(.integer(Int64(id)))
        )
    }
    #expect(
        table.candidateKeys(for: .compare("v", .equal, .integer(1))) == keys(1, 4, 7, 10)
    )
    #expect(table.candidateKeys(for: .compare("id", .equal, .real(4))) == keys(4))
    #expect(table.candidateKeys(for: .compare("w", .equal, .text("w"))) == nil)
    #expect(table.candidateKeys(for: .or(.compare("v", .equal, .integer(1)), .compare("w", .equal, .text("w")))) == nil)
    // An IN list narrows to the union of its values' records, through the key or an index.
    #expect(table.candidateKeys(for: .in("id", [.real(4), .integer(5), .null, .integer(99)])) == keys(4, 5))
    #expect(table.candidateKeys(for: .in("v", [.integer(2), .null])) == keys(2, 5, 8))
    // The smallest of the conjuncts' sets: the evaluator still tests every candidate.
    #expect(table.candidateKeys(for: .in("v", [.integer(1)]) && .in("id", [.integer(1), .integer(2)])) == keys(1, 2))
    _ = table.removeRecord(forKey: StorageKey(.integer(4)))
    #expect(table.candidateKeys(for: .compare("v", .equal, .real(1))) == keys(1, 7, 10))
}

private func keys(_ numbers: Int64...) -> Set<StorageKey> {
    Set(numbers.map { StorageKey(.integer($0)) })
}
