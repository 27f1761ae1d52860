import Foundation
import Storage
import Testing

// Models of the write-plan checks: a store keeps, per type, what saving it needs (its layout,
// key position, the stored types to convert to) for as long as the collection's stored schema
// stays the one that plan was made against. Each check changes the collection behind a store's
// back after that store has saved twice (the second save keeps the plan), then saves again.

struct PlanWide: Codable, Equatable, StorableModel {
    static let collectionName = "planned"
    var id: Int64
    var count: Int
    var label: String
}

struct PlanNarrow: Codable, Equatable, StorableModel {
    static let collectionName = "planned"
    var id: Int64
    var count: Int
}

/// `PlanWide` with its label optional: a look-up plan made while the collection has no `label`
/// column does not select one.
struct PlanMaybe: Codable, Equatable, StorableModel {
    static let collectionName = "planned"
    var id: Int64
    var count: Int
    var label: String?
}

/// Encodes `extra` only when it is set, so a layout learned from a value without it lacks the
/// column (a later value that has it misses the plan).
struct PlanSparse: Codable, Equatable, StorableModel {
    static let collectionName = "sparse"
    var id: Int64
    var extra: String?

    private enum CodingKeys: String, CodingKey { case id, extra }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        if let extra { try container.encode(extra, forKey: .extra) }
    }
}

extension ConformanceSuite {
    static let writePlanChecks: [ConformanceCheck] = [
        check("a save after another store dropped the collection and made it with fewer columns adds them again") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(PlanWide(id: 1, count: 1, label: "a"))
            try store.save(PlanWide(id: 2, count: 2, label: "b"))
            let other = try fixture.openStore(in: directory)
            #expect(try other.drop(collection: "planned"))
            try other.save(PlanNarrow(id: 7, count: 7))
            #expect(try other.schema(of: "planned")?.column(named: "label") == nil)

            try store.save(PlanWide(id: 3, count: 3, label: "c"))
            #expect(try store.fetch(PlanWide.self, id: 3) == PlanWide(id: 3, count: 3, label: "c"))
            #expect(try other.fetchAll(PlanNarrow.self).map(\.id) == [3, 7])
        },
        check("a save after another store made the collection again with another column type is refused") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(VersionOne(id: 1, value: 1))
            try store.save(VersionOne(id: 2, value: 2))
            let other = try fixture.openStore(in: directory)
            #expect(try other.drop(collection: "versioned"))
            try other.save(VersionBytes(id: 9, value: Data([9])))

            // A PostgreSQL store learns of the other store's change when its statement fails on
            // the column's type: it reads the schema again and runs the transaction again.
            let error = expectError(.schemaMismatch) { try store.save(VersionOne(id: 3, value: 3)) }
            #expect(error?.column == "value")
            #expect(try other.fetchAll(VersionBytes.self) == [VersionBytes(id: 9, value: Data([9]))])
        },
        check("a save after the collection was dropped and made again with another column type is checked again") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(VersionOne(id: 1, value: 1))
            try store.save(VersionOne(id: 2, value: 2))
            #expect(try store.drop(collection: "versioned"))
            try store.save(VersionBytes(id: 9, value: Data([9])))

            let error = expectError(.schemaMismatch) { try store.save(VersionOne(id: 3, value: 3)) }
            #expect(error?.column == "value")
            #expect(try store.fetchAll(VersionBytes.self) == [VersionBytes(id: 9, value: Data([9]))])
        },
        check("a save after another type widened a column of the collection is checked against the widened column") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            try store.save(VersionOne(id: 1, value: 1))
            try store.save(VersionOne(id: 2, value: 2))
            try store.save(VersionReal(id: 3, value: 0.5))

            // A real column does not narrow back to integers: the old version is refused.
            let error = expectError(.schemaMismatch) { try store.save(VersionOne(id: 4, value: 4)) }
            #expect(error?.column == "value")
            #expect(try store.fetchAll(VersionReal.self).map(\.value) == [1, 2, 0.5])
        },
        check("a save after a rolled-back transaction that created the collection creates it again") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            #expect(throws: AbortTransaction(reason: "undo")) {
                try store.transaction { tx in
                    try tx.save(PlanWide(id: 1, count: 1, label: "a"))
                    try tx.save(PlanWide(id: 2, count: 2, label: "b"))
                    throw AbortTransaction(reason: "undo")
                }
            }
            #expect(try store.schema(of: "planned") == nil)
            try store.save(PlanWide(id: 3, count: 3, label: "c"))
            #expect(try store.fetchAll(PlanWide.self) == [PlanWide(id: 3, count: 3, label: "c")])
        },
        check("a save after a rolled-back transaction that added a column adds it again") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(PlanNarrow(id: 1, count: 1))
            try store.save(PlanNarrow(id: 2, count: 2))
            #expect(throws: AbortTransaction(reason: "undo")) {
                try store.transaction { tx in
                    try tx.save(PlanWide(id: 3, count: 3, label: "c"))
                    try tx.save(PlanWide(id: 4, count: 4, label: "d"))
                    throw AbortTransaction(reason: "undo")
                }
            }
            #expect(try store.schema(of: "planned")?.column(named: "label") == nil)
            try store.save(PlanWide(id: 5, count: 5, label: "e"))
            try store.save(PlanNarrow(id: 6, count: 6))
            #expect(try store.fetch(PlanWide.self, id: 5) == PlanWide(id: 5, count: 5, label: "e"))
            #expect(try store.fetchAll(PlanNarrow.self).map(\.id) == [1, 2, 5, 6])
        },
        check("a value with a property its type's layout lacked replaces the layout for the next saves") {
            fixture,
            directory in
            // The column exists before this store learns the type's layout from a value without it.
            try fixture.openStore(in: directory).save(PlanSparse(id: 1, extra: "first"))
            let store = try fixture.openStore(in: directory)
            try store.save(PlanSparse(id: 2, extra: nil))
            try store.save(PlanSparse(id: 3, extra: nil))
            try store.save(PlanSparse(id: 2, extra: "set"))
            #expect(try store.fetch(PlanSparse.self, id: 2) == PlanSparse(id: 2, extra: "set"))
            // Saved with the layout that has the column, so the value is cleared.
            try store.save(PlanSparse(id: 2, extra: nil))
            #expect(try store.fetch(PlanSparse.self, id: 2) == PlanSparse(id: 2, extra: nil))
        },
        check("two types saved in turn into one collection each write their own columns") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            for round in 0..<3 {
                let id = Int64(round * 2)
                try store.save(PlanWide(id: id, count: round, label: "w\(round)"))
                try store.save(PlanNarrow(id: id + 1, count: round))
                // A narrow save replaces only its own columns of a wide record.
                try store.save(PlanNarrow(id: id, count: round + 100))
            }
            for round in 0..<3 {
                let wide = PlanWide(id: Int64(round * 2), count: round + 100, label: "w\(round)")
                #expect(try store.fetch(PlanWide.self, id: wide.id) == wide)
            }
            #expect(try store.fetchAll(PlanNarrow.self).map(\.count) == [100, 0, 101, 1, 102, 2])
        },
        // Look-ups keep a read plan per type, and skip the schema check while the backend's
        // schema stamp stays the one the plan was checked at (`BackendReadTransaction.schemaStamp`).
        check("a look-up after another store changed the collection's columns reads them as they are now") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            let other = try fixture.openStore(in: directory)
            try other.save(PlanNarrow(id: 1, count: 1))
            for _ in 0..<3 { #expect(try store.fetch(PlanMaybe.self, id: 1) == PlanMaybe(id: 1, count: 1)) }
            // A column added: a plan still taken for checked would not select it.
            try other.save(PlanWide(id: 1, count: 2, label: "a"))
            for _ in 0..<2 {
                #expect(try store.fetch(PlanMaybe.self, id: 1) == PlanMaybe(id: 1, count: 2, label: "a"))
            }
            // Read, changed and saved back: the label read is the label kept.
            var read = try #require(try store.fetch(PlanMaybe.self, id: 1))
            read.count += 10
            try store.save(read)
            #expect(try other.fetch(PlanWide.self, id: 1) == PlanWide(id: 1, count: 12, label: "a"))
            // Made again without it, then with it.
            #expect(try other.drop(collection: "planned"))
            try other.save(PlanNarrow(id: 1, count: 3))
            #expect(try store.fetch(PlanMaybe.self, id: 1) == PlanMaybe(id: 1, count: 3))
            #expect(try other.drop(collection: "planned"))
            try other.save(PlanWide(id: 1, count: 4, label: "b"))
            #expect(try store.fetch(PlanMaybe.self, id: 1) == PlanMaybe(id: 1, count: 4, label: "b"))
            // And inside a transaction of the store's own that adds the column back.
            #expect(try other.drop(collection: "planned"))
            try other.save(PlanNarrow(id: 1, count: 5))
            #expect(try store.fetch(PlanMaybe.self, id: 1) == PlanMaybe(id: 1, count: 5))
            try store.transaction { transaction in
                try transaction.save(PlanWide(id: 1, count: 6, label: "c"))
                #expect(try transaction.fetch(PlanMaybe.self, id: 1) == PlanMaybe(id: 1, count: 6, label: "c"))
            }
            #expect(try store.fetch(PlanMaybe.self, id: 1) == PlanMaybe(id: 1, count: 6, label: "c"))
        },
        check("a query after another store changed the collection's columns reads them as they are now") {
            fixture,
            directory in
            let store = try fixture.openStore(in: directory)
            let other = try fixture.openStore(in: directory)
            try other.save(contentsOf: [PlanNarrow(id: 1, count: 1), PlanNarrow(id: 2, count: 2)])
            for _ in 0..<2 {
                #expect(try store.fetchAll(PlanMaybe.self) == [PlanMaybe(id: 1, count: 1), PlanMaybe(id: 2, count: 2)])
                #expect(try store.fetchAll(PlanMaybe.self, where: Column("count") > 1) == [PlanMaybe(id: 2, count: 2)])
            }
            try other.save(PlanWide(id: 2, count: 3, label: "a"))
            let both = [PlanMaybe(id: 1, count: 1), PlanMaybe(id: 2, count: 3, label: "a")]
            #expect(try store.fetchAll(PlanMaybe.self, limit: 10) == both)
            try other.save(PlanWide(id: 1, count: 4, label: "b"))
            #expect(
                try store.fetchAll(PlanMaybe.self, where: Column("count") > 3)
                    == [PlanMaybe(id: 1, count: 4, label: "b")]
            )
            #expect(try other.drop(collection: "planned"))
            try other.save(PlanWide(id: 5, count: 5, label: "c"))
            #expect(try store.fetchAll(PlanMaybe.self) == [PlanMaybe(id: 5, count: 5, label: "c")])
        },
    ]
}
