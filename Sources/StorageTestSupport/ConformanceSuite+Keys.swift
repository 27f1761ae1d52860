import Foundation
import Storage
import Testing

/// A record keyed by text, for keys that Swift's `String` calls equal but whose bytes differ.
struct TextKeyed: Codable, Equatable {
    var id: String
    var v: Int64
}

/// A record keyed by a real, for `0.0` and `-0.0`.
struct RealKeyed: Codable, Equatable {
    var id: Double
    var v: Int64
}

/// An account whose e-mail is unique.
struct Account: Codable, Equatable, StorableModel {
    static let indexes: [IndexDefinition] = [.init(["email"], unique: true)]
    var id: Int64
    var email: String
}

/// Keys that are distinct in SQLite (text compares by its bytes) though Swift's `String` calls
/// some of them equal: the NFC and NFD spellings of one word, a case variant, a trailing space.
let distinctTextKeys = ["caf\u{E9}", "cafe\u{301}", "Caf\u{E9}", "caf\u{E9} "]

extension ConformanceSuite {
    static let keyChecks: [ConformanceCheck] = [
        check("text keys differing only in normalization, case or a trailing space are separate records") {
            fixture,
            directory in
            let keys = distinctTextKeys
            let paths: [(String, (ObjectStore) throws -> Void)] = [
                ("one save each", { store in for (v, key) in keys.enumerated() { try store.save(doc(key, v)) } }),
                ("save(contentsOf:)", { try $0.save(contentsOf: keys.enumerated().map { doc($1, $0) }) }),
                (
                    "transaction",
                    { store in
                        try store.transaction { tx in
                            for (v, key) in keys.enumerated() { try tx.save(doc(key, v)) }
                            try expectRecords(
                                tx.fetchAll(TextKeyed.self),
                                keys,
                                "inside the transaction",
                                values: positions(of: keys)
                            )
                        }
                    }
                ),
                (
                    "insert(jsonArray:)",
                    { store in
                        let rows = keys.enumerated().map { ["id": $1, "v": $0] as [String: Any] }
                        let json = try JSONSerialization.data(withJSONObject: rows)
                        #expect(try store.insert(jsonArray: json, into: "TextKeyed") == keys.count)
                    }
                ),
            ]
            try inFolders(paths, under: directory) { path, write, folder in
                do {
                    let store = try fixture.openStore(in: folder)
                    try write(store)
                    try expectRecords(store, keys, path)
                }
                var store = try fixture.openStore(in: folder)
                try expectRecords(store, keys, "\(path), reopened")
                // Deleting one spelling deletes that record alone.
                #expect(try store.delete(TextKeyed.self, id: keys[1]), "\(path)")
                let remaining = [keys[0]] + keys[2...]
                try expectRecords(store, remaining, "\(path), after a delete")
                store = try fixture.openStore(in: folder)
                try expectRecords(store, remaining, "\(path), after a delete, reopened")
            }
        },
        check("a deleted record whose key differs from another's only in normalization stays deleted") {
            fixture,
            directory in
            let (nfc, nfd) = (distinctTextKeys[0], distinctTextKeys[1])
            do {
                let store = try fixture.openStore(in: directory)
                try store.save(TextKeyed(id: nfc, v: 1))
                try store.save(TextKeyed(id: nfd, v: 2))
                #expect(try store.delete(TextKeyed.self, id: nfd))
                try expectRecords(store, [nfc], "before reopening", values: [1])
            }
            try expectRecords(try fixture.openStore(in: directory), [nfc], "after reopening", values: [1])
        },
        check("0.0 and -0.0 are one key: a save of one replaces the other") { fixture, directory in
            let paths: [(String, (ObjectStore) throws -> Void)] = [
                (
                    "two saves",
                    {
                        try $0.save(RealKeyed(id: 0.0, v: 1))
                        try $0.save(RealKeyed(id: -0.0, v: 2))
                    }
                ),
                (
                    "save(contentsOf:)",
                    { try $0.save(contentsOf: [RealKeyed(id: 0.0, v: 1), RealKeyed(id: -0.0, v: 2)]) }
                ),
                (
                    "transaction",
                    { store in
                        try store.transaction { tx in
                            try tx.save(RealKeyed(id: -0.0, v: 1))
                            try tx.save(RealKeyed(id: 0.0, v: 2))
                        }
                    }
                ),
                (
                    "insert(jsonArray:)",
                    {
                        try $0.insert(
                            jsonArray: Data(#"[{"id": 0.0, "v": 1}, {"id": -0.0, "v": 2}]"#.utf8),
                            into: "RealKeyed"
                        )
                    }
                ),
            ]
            try inFolders(paths, under: directory) { path, write, folder in
                do {
                    let store = try fixture.openStore(in: folder)
                    try write(store)
                    try expectOneZeroKey(store, v: 2, path)
                }
                let store = try fixture.openStore(in: folder)
                try expectOneZeroKey(store, v: 2, "\(path), reopened")
                #expect(try store.delete(RealKeyed.self, id: StorageValue.real(-0.0)), "\(path)")
                #expect(try store.count(RealKeyed.self) == 0, "\(path)")
                #expect(try fixture.openStore(in: folder).count(RealKeyed.self) == 0, "\(path), deleted and reopened")
            }
        },
        check("a unique index tells NFC and NFD spellings of one e-mail apart") { fixture, directory in
            let store = try fixture.openStore(in: directory)
            try store.save(Account(id: 1, email: "jos\u{E9}@example.com"))
            try store.save(Account(id: 2, email: "jose\u{301}@example.com"))
            try store.save(Account(id: 3, email: "Jos\u{E9}@example.com"))
            expectError(.constraintViolation) { try store.save(Account(id: 4, email: "jose\u{301}@example.com")) }
            #expect(try store.count(Account.self) == 3)
            let found = try store.fetchAll(Account.self, where: Column("email") == "jose\u{301}@example.com")
            #expect(found.map(\.id) == [2])
            let reopened = try fixture.openStore(in: directory)
            #expect(try reopened.count(Account.self) == 3)
            expectError(.constraintViolation) { try reopened.save(Account(id: 5, email: "jos\u{E9}@example.com")) }
        },
    ]

    /// Runs `body` for each write path, with a fresh folder of its own under `directory`.
    private static func inFolders(
        _ paths: [(String, (ObjectStore) throws -> Void)],
        under directory: URL,
        _ body: (String, (ObjectStore) throws -> Void, URL) throws -> Void
    ) throws {
        for (number, (path, write)) in paths.enumerated() {
            let folder = directory.appendingPathComponent("\(number)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try body(path, write, folder)
        }
    }

    private static func doc(_ key: String, _ v: Int) -> TextKeyed {
        TextKeyed(id: key, v: Int64(v))
    }

    /// Expects exactly the records keyed by `keys` (compared byte for byte), with the values
    /// given, or their positions in `distinctTextKeys`.
    static func expectRecords(
        _ store: ObjectStore,
        _ keys: [String],
        _ context: String,
        values: [Int64]? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let values = values ?? positions(of: keys)
        #expect(try store.count(TextKeyed.self) == keys.count, "\(context)", sourceLocation: sourceLocation)
        try expectRecords(store.fetchAll(TextKeyed.self), keys, context, values: values, sourceLocation: sourceLocation)
        for (key, value) in zip(keys, values) {
            let found = try store.fetch(TextKeyed.self, id: key)
            #expect(found.map { Array($0.id.utf8) } == Array(key.utf8), "\(context)", sourceLocation: sourceLocation)
            #expect(found?.v == value, "\(context): \(key.debugDescription)", sourceLocation: sourceLocation)
        }
        let gone = distinctTextKeys.filter { key in !keys.contains { $0.utf8.elementsEqual(key.utf8) } }
        for key in gone {
            #expect(try store.fetch(TextKeyed.self, id: key) == nil, "\(context)", sourceLocation: sourceLocation)
        }
    }

    /// The positions of `keys` in `distinctTextKeys`: the values the checks save under them.
    private static func positions(of keys: [String]) -> [Int64] {
        keys.map { key in Int64(distinctTextKeys.firstIndex { $0.utf8.elementsEqual(key.utf8) }!) }
    }

    static func expectRecords(
        _ records: [TextKeyed],
        _ keys: [String],
        _ context: String,
        values: [Int64],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        // Described by their bytes: `String`'s `==` would call the NFC and NFD spellings equal.
        func describe(_ key: String, _ value: Int64) -> String {
            key.utf8.map { String($0, radix: 16) }.joined(separator: " ") + " → \(value)"
        }
        let found = records.map { describe($0.id, $0.v) }.sorted()
        let expected = zip(keys, values).map(describe).sorted()
        #expect(found == expected, "\(context)", sourceLocation: sourceLocation)
    }

    private static func expectOneZeroKey(
        _ store: ObjectStore,
        v: Int64,
        _ context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(try store.fetchAll(RealKeyed.self).map(\.v) == [v], "\(context)", sourceLocation: sourceLocation)
        #expect(try store.count(RealKeyed.self) == 1, "\(context)", sourceLocation: sourceLocation)
        for key in [0.0, -0.0] {
            let found = try store.fetch(RealKeyed.self, id: StorageValue.real(key))
            #expect(found?.v == v, "\(context): fetch(\(key))", sourceLocation: sourceLocation)
        }
    }
}
