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
}
