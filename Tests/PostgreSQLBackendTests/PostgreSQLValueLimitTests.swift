import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Values over PostgreSQL's limits (issue 31): refused with `.limitExceeded` before anything is
/// sent, instead of a message the server answers by ending the connection (`.connectionLost`).
///
/// The blobs are `Data(count:)`, whose pages are never touched (the refusal reads only their
/// size), so the gigabytes cost no memory or time; the one text over the limit is made once
/// (about 1 GB, in a second or two) and the suite runs its tests one at a time, so that no two such
/// values are in memory at once.
@Suite(.dedicatedThreads, .serialized) struct PostgreSQLValueLimitTests {
    struct Payload: Codable, Equatable {
        var id: Int64
        var name: String
        var data: Data
    }

    /// PostgreSQL's largest value: `MaxAllocSize` (`0x3fffffff`) bytes with the 4-byte header.
    static let valueLimit = 0x3fff_ffff - 4

    /// Expects the refusal to name the collection, the column, the key and the limit.
    static func expectNamed(_ error: StorageError?, _ collection: String, key: StorageValue, limit: Int) {
        #expect(error?.collection == collection, "\(String(describing: error))")
        #expect(error?.column == "data", "\(String(describing: error))")
        #expect(error?.key == key, "\(String(describing: error))")
        #expect(error?.message.contains("\(limit) bytes") == true, "\(String(describing: error))")
    }

    /// A 1 GiB blob and one a byte over the limit, saved alone, in a batch (`COPY`) and as
    /// untyped records: `.limitExceeded` naming where, nothing stored, and the same store (on
    /// the same connection: a pool of one) keeps working.
    @Test func aValueOverPostgreSQLsLimitIsRefusedBeforeItIsSent() throws {
        try withStore("value-limit", configuration: .init(poolSize: 1)) { store, _ in
            try store.save(Payload(id: 1, name: "small", data: Data([1, 2, 3])))
            for size in [1 << 30, Self.valueLimit + 1] {
                let huge = Data(count: size)
                let alone = expectStorageError(.limitExceeded) {
                    try store.save(Payload(id: 2, name: "huge", data: huge))
                }
                Self.expectNamed(alone, "Payload", key: .integer(2), limit: Self.valueLimit)
                expectStorageError(.limitExceeded) {
                    try store.save(contentsOf: [
                        Payload(id: 3, name: "before", data: Data([3])), Payload(id: 4, name: "huge", data: huge),
                    ])
                }
                // As a `StorageValue`: a `Data` in a dictionary is copied (bridged to `NSData`)
                // by each failed cast to a Foundation class of the dictionary path, on Linux.
                let untyped = expectStorageError(.limitExceeded) {
                    try store.insert(dictionaries: [["id": 5, "data": StorageValue.blob(huge)]], into: "Untyped")
                }
                Self.expectNamed(untyped, "Untyped", key: .integer(5), limit: Self.valueLimit)
                #expect(try store.fetchAll(Payload.self) == [Payload(id: 1, name: "small", data: Data([1, 2, 3]))])
                #expect(try store.fetchDictionaries(from: "Untyped").isEmpty)
            }
            // Exactly the limit passes the value's check; a record of such a value and another
            // column is over the record's (the message carrying it would be over the protocol's).
            let atLimit = expectStorageError(.limitExceeded) {
                try store.save(Payload(id: 6, name: "at the limit", data: Data(count: Self.valueLimit)))
            }
            #expect(atLimit?.message.contains("record of") == true, "\(String(describing: atLimit))")
            // A query whose value is over the limit is refused the same way.
            expectStorageError(.limitExceeded) {
                _ = try store.count(in: "Payload", where: Column("data") == Data(count: 1 << 30))
            }
            try store.save(Payload(id: 7, name: "after", data: Data([7])))
            #expect(try store.fetchAll(Payload.self).map(\.id) == [1, 7])
        }
    }

    /// Text a byte over the limit, as a typed save: refused the same way.
    @Test func textOverPostgreSQLsLimitIsRefusedBeforeItIsSent() throws {
        try withStore("text-limit", configuration: .init(poolSize: 1)) { store, _ in
            struct Note: Codable, Equatable {
                var id: Int64
                var data: String
            }
            try store.save(Note(id: 1, data: "small"))
            let refused = expectStorageError(.limitExceeded) {
                // Made in one go (`String(repeating:count:)` appends a character at a time).
                let text = String(unsafeUninitializedCapacity: Self.valueLimit + 1) { buffer in
                    buffer.initialize(repeating: UInt8(ascii: "x"))
                    return buffer.count
                }
                try store.save(Note(id: 2, data: text))
            }
            Self.expectNamed(refused, "Note", key: .integer(2), limit: Self.valueLimit)
            #expect(try store.fetchAll(Note.self) == [Note(id: 1, data: "small")])
        }
    }
}
