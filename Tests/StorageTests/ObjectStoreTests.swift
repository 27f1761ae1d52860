import Foundation
import Storage
import StorageTestSupport
import Testing

/// Behaviour of `ObjectStore` itself that no backend influences, on the in-memory backend.
@Suite struct ObjectStoreTests {
    struct Plain: Codable, Equatable {
        var id: Int64
        var name: String
    }

    struct Explicit: Codable, StorableModel {
        static let primaryKey = "code"
        var id: Int64
    }

    struct Evolving: Codable, Equatable, StorableModel {
        static let collectionName = "evolving"
        var id: Int64
        var extra: String?
    }

    struct Custom: Codable, StorableModel {
        static let collectionName = "evolving"
        var id: Int64
        var more: Int

        // Writes `extra` only for some values, so a later value meets a column the cached layout lacks.
        enum CodingKeys: String, CodingKey { case id, more, extra }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(more, forKey: .more)
            if more > 1 { try container.encode("late", forKey: .extra) }
        }

        init(id: Int64, more: Int) {
            self.id = id
            self.more = more
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int64.self, forKey: .id)
            more = try container.decode(Int.self, forKey: .more)
        }
    }

    struct NestedContainer: Encodable {
        var id: Int64
        enum CodingKeys: String, CodingKey { case id }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            var nested = container.nestedUnkeyedContainer(forKey: .id)
            try nested.encode(id)
        }
    }

    /// Encodes its nil optional with `encodeNil`, which tells the encoder no type.
    struct NilByHand: Codable {
        var id: Int64
        var count: Int?
        var label: String?

        enum CodingKeys: String, CodingKey { case id, count, label }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            if let count {
                try container.encode(count, forKey: .count)
            } else {
                try container.encodeNil(forKey: .count)
            }
            try container.encodeIfPresent(label, forKey: .label)
        }
    }

    @Test func mirrorTypesAColumnWhoseFirstValueIsAnUntypedNil() throws {
        let backend = InMemoryStorageBackend()
        let store = ObjectStore(backend: backend)
        try store.save(NilByHand(id: 1, count: nil, label: nil))
        let schema = try #require(try backend.read { try $0.schema(of: "NilByHand") })
        #expect(schema.column(named: "count")?.type == .integer)
        #expect(schema.column(named: "label")?.type == .text)
        #expect(schema.column(named: "count")?.isNullable == true)
    }

    @Test func batchesOfKeylessValuesReturnTheirNewKeys() throws {
        struct Line: Codable, Equatable { var text: String }
        let store = ObjectStore(backend: InMemoryStorageBackend())
        let keys = try store.save(contentsOf: [Line(text: "a"), Line(text: "b"), Line(text: "c")])
        #expect(Set(keys).count == 3)
        #expect(try keys.map { try store.fetch(Line.self, id: $0)?.text } == ["a", "b", "c"])
    }

    @Test func aPropertyMayNotUseTheReservedKeyName() throws {
        struct Reserved: Codable {
            var id: Int64
            var _key: Int
        }
        let store = ObjectStore(backend: InMemoryStorageBackend())
        let error = try #require(throws: StorageError.self) { try store.save(Reserved(id: 1, _key: 2)) }
        #expect(error.code == .invalidIdentifier)
        #expect(try store.count(Reserved.self) == 0)
    }

    @Test func collectionNamesDefaultToTheTypeName() throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        #expect(try store.collectionName(for: Plain.self) == "Plain")
        #expect(try store.collectionName(for: Evolving.self) == "evolving")
    }

    @Test func anExplicitKeyMustExist() throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        #expect(throws: StorageError.self) { try store.save(Explicit(id: 1)) }
    }

    @Test func aLateNewPropertyExtendsTheLayout() throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        try store.save(contentsOf: [Custom(id: 1, more: 1), Custom(id: 2, more: 2)])
        let rows = try store.fetchAll(Evolving.self)
        #expect(rows == [Evolving(id: 1, extra: nil), Evolving(id: 2, extra: "late")])
    }

    /// Writes its properties through two one-byte key types whose case numbers overlap, and
    /// leaves `b` out when it is nil: `Second.z` (case 2) then comes where `First.b` (case 2)
    /// came before.
    struct TwoKeySets: Codable, Equatable {
        var id: Int64
        var a: String
        var b: String?
        var x: String
        var z: String

        enum First: CodingKey { case id, a, b }
        enum Second: CodingKey { case x, y, z }

        init(id: Int64, a: String, b: String?, x: String, z: String) {
            (self.id, self.a, self.b, self.x, self.z) = (id, a, b, x, z)
        }

        func encode(to encoder: any Encoder) throws {
            var first = encoder.container(keyedBy: First.self)
            try first.encode(id, forKey: .id)
            try first.encode(a, forKey: .a)
            if let b { try first.encode(b, forKey: .b) }
            var second = encoder.container(keyedBy: Second.self)
            try second.encode(z, forKey: .z)
            try second.encode(x, forKey: .x)
        }

        init(from decoder: any Decoder) throws {
            let first = try decoder.container(keyedBy: First.self)
            let second = try decoder.container(keyedBy: Second.self)
            id = try first.decode(Int64.self, forKey: .id)
            a = try first.decode(String.self, forKey: .a)
            b = try first.decodeIfPresent(String.self, forKey: .b)
            x = try second.decode(String.self, forKey: .x)
            z = try second.decode(String.self, forKey: .z)
        }
    }

    /// The encoder finds a one-byte key's column by the key's byte only for the key type whose
    /// bytes it recorded: another key type's key with the same byte at the same place goes to its
    /// own column by name (with the type check removed, `z` of the second record lands in `b`).
    @Test func oneByteKeysOfTwoKeyTypesWriteTheirOwnColumns() throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        let values = [
            TwoKeySets(id: 1, a: "a1", b: "b1", x: "x1", z: "z1"),
            TwoKeySets(id: 2, a: "a2", b: nil, x: "x2", z: "z2"),
            TwoKeySets(id: 3, a: "a3", b: "b3", x: "x3", z: "z3"),
        ]
        try store.save(contentsOf: values)
        try store.save(TwoKeySets(id: 4, a: "a4", b: nil, x: "x4", z: "z4"))
        #expect(try store.fetchAll(TwoKeySets.self) == values + [TwoKeySets(id: 4, a: "a4", b: nil, x: "x4", z: "z4")])
        let rows = try store.fetchDictionaries(from: "TwoKeySets", orderBy: [.ascending("id")])
        #expect(rows.map { $0["b"] } == [.text("b1"), .null, .text("b3"), .null])
        #expect(rows.map { $0["z"] } == [.text("z1"), .text("z2"), .text("z3"), .text("z4")])
    }

    /// A type that encodes its properties in another order from one record to the next: each
    /// value still lands in its own column (the expected column's recorded key byte differs, so
    /// the key is looked up by name).
    @Test func propertiesEncodedInAnotherOrderLandInTheirColumns() throws {
        struct Shuffled: Codable, Equatable {
            var id: Int64
            var p: Int64
            var q: Int64
            enum CodingKeys: CodingKey { case id, p, q }
            init(id: Int64, p: Int64, q: Int64) { (self.id, self.p, self.q) = (id, p, q) }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(id, forKey: .id)
                if id % 2 == 0 {
                    try container.encode(q, forKey: .q)
                    try container.encode(p, forKey: .p)
                } else {
                    try container.encode(p, forKey: .p)
                    try container.encode(q, forKey: .q)
                }
            }
        }
        let store = ObjectStore(backend: InMemoryStorageBackend())
        let values = (1...6).map { Shuffled(id: $0, p: $0 * 10, q: $0 * 100) }
        try store.save(contentsOf: values)
        for value in values { try store.save(value) }
        #expect(try store.fetchAll(Shuffled.self) == values)
    }

    @Test func nestedContainersAreRefusedWithAClearError() throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        let error = try #require(throws: StorageError.self) { try store.save(NestedContainer(id: 1)) }
        #expect(error.code == .unsupportedType)
        #expect(error.column == "id")
    }

    @Test func errorsNameWhatWasWrong() throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        let error = try #require(throws: StorageError.self) {
            try store.insert(dictionaries: [["id": 1, "bad\u{0}name": 2]], into: "things")
        }
        #expect(error.code == .invalidIdentifier)
        #expect(error.description.contains(#"bad\0name"#))
        #expect(error.description.contains("row 0"))
    }

    /// `Evolving` with `extra` required: a record without it fails to decode.
    struct StrictEvolving: Codable, Equatable, StorableModel {
        static let collectionName = "evolving"
        var id: Int64
        var extra: String
    }

    /// Look-ups reuse a decoder per collection and type: one of another type, or one that failed
    /// part-way through a record, must leave the next look-up decoding its own record whole.
    @Test func lookUpsOfSeveralTypesInOneCollectionEachDecodeTheirOwnRecord() throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        try store.save(contentsOf: [Custom(id: 1, more: 1), Custom(id: 2, more: 2)])
        for _ in 0..<3 {
            #expect(try store.fetch(Evolving.self, id: 2) == Evolving(id: 2, extra: "late"))
            #expect(try store.fetch(Custom.self, id: 2)?.more == 2)
            let error = try #require(throws: StorageError.self) { try store.fetch(StrictEvolving.self, id: 1) }
            #expect(error.column == "extra")
            #expect(try store.fetch(StrictEvolving.self, id: 2) == StrictEvolving(id: 2, extra: "late"))
            #expect(try store.fetch(Evolving.self, id: 1) == Evolving(id: 1, extra: nil))
            #expect(try store.fetch(Evolving.self, id: 3) == nil)
        }
    }

    /// Look-ups from many threads at once, of two types in one collection, each get their record.
    @Test func concurrentLookUpsEachGetTheirRecord() throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        try store.save(contentsOf: (1...50).map { Evolving(id: $0, extra: "e\($0)") })
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<200 {
                let id = Int64((thread * 7 + round) % 50 + 1)
                let matched: Bool
                if round % 2 == 0 {
                    matched = (try? store.fetch(Evolving.self, id: id)) == Evolving(id: id, extra: "e\(id)")
                } else {
                    matched = (try? store.fetch(StrictEvolving.self, id: id)) == StrictEvolving(id: id, extra: "e\(id)")
                }
                if !matched { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }

    struct Doc: Codable, Equatable {
        var id: String
        var v: Int
    }

    /// Keys that Swift's `String` calls equal (NFC and NFD) are two records, and a change stream
    /// reports each under its own operation.
    @Test func keysDifferingOnlyInNormalizationAreTwoRecordsInChangeStreams() async throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        let nfc = "caf\u{E9}"
        let nfd = "cafe\u{301}"
        var changes = store.changes(of: Doc.self).makeAsyncIterator()
        try await store.transaction { tx in
            try tx.save(Doc(id: nfc, v: 1))
            try tx.save(Doc(id: nfd, v: 2))
            try tx.delete(Doc.self, id: nfd)
        }
        let change = try #require(await changes.next())
        #expect(change.upserted == [.text(nfc)])
        #expect(change.deleted == [.text(nfd)])
        #expect(try await store.fetch(Doc.self, id: nfc) == Doc(id: nfc, v: 1))
        #expect(try await store.fetch(Doc.self, id: nfd) == nil)
    }

    /// `fetchAll` decodes straight into an array sized by the backend's `expectedRowCount`;
    /// a count too small, too large (absurdly: no array of it is made) or zero loses no record,
    /// repeats none and keeps the order, also with a limit and an offset and inside a
    /// transaction.
    @Test(arguments: [-1000, -7, -1, 0, 1, 7, 1000, Int.max / 2])
    func aWrongExpectedRowCountCostsNoRecord(_ error: Int) throws {
        let store = ObjectStore(backend: InMemoryStorageBackend(expectedRowCountError: error))
        let all = (1...40).map { Plain(id: Int64($0), name: "name \($0) " + String(repeating: "x", count: $0)) }
        try store.save(contentsOf: all)
        #expect(try store.fetchAll(Plain.self) == all)
        #expect(try store.fetchAll(Plain.self, orderBy: [.descending("id")]) == all.reversed())
        #expect(try store.fetchAll(Plain.self, limit: 10, offset: 25) == Array(all[25..<35]))
        #expect(try store.fetchAll(Plain.self, where: Column("id") > 30) == Array(all[30...]))
        try store.transaction { tx in
            try tx.save(Plain(id: 41, name: "late"))
            #expect(try tx.fetchAll(Plain.self).count == 41)
        }
    }
}
