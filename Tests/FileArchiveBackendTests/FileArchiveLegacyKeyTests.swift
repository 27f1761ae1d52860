import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import FileArchiveBackend

private struct Word: Codable, Equatable {
    var id: String
    var v: Int64
}

private struct Measure: Codable, Equatable {
    var id: Double
    var v: Int64
}

private struct Gauge: Codable, Equatable {
    var id: Double
    var v: Int64
}

/// The name versions before key equality followed SQLite gave a record file: the hex of a type
/// byte and the key's own bytes, a real's bit pattern as it is (docs/ARCHIVE_FORMAT.md).
private func oldName(_ key: StorageValue) -> String {
    let bytes: [UInt8]
    switch key {
    case .real(let number): bytes = [2] + withUnsafeBytes(of: number.bitPattern.bigEndian) { Array($0) }
    case .text(let text): bytes = [3] + Array(text.utf8)
    default: bytes = []
    }
    return bytes.map { String(format: "%02x", $0) }.joined()
}

/// Writes a record file as those versions did: the record archive (unchanged since) under the
/// old name, mode 0600.
private func writeOldRecord(
    _ values: [String: StorageValue],
    named name: String,
    collection: String,
    in store: String
) throws {
    let backend = try FileArchiveStorageBackend(directory: store)
    let schema = try #require(try backend.read { try $0.schema(of: collection) })
    let record = schema.columns.map { values[$0.name] ?? .null }
    let bytes = try #require(RecordArchive.encode(record, columns: schema.columns))
    let path = store + "/" + (try FileNames.folder(for: collection)) + "/" + name
    #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
}

private func recordFiles(_ store: String, _ collection: String) throws -> [String] {
    let folder = store + "/" + (try FileNames.folder(for: collection))
    return try FileManager.default.contentsOfDirectory(atPath: folder).filter(FileNames.isRecord).sorted()
}

/// An archive written by the versions that compared keys by Swift's `String` and `Double`
/// equality: `save(contentsOf: [Word("café" NFC, 1), Word("café" NFD, 2)])` left one file named
/// by the NFC key holding the NFD record; saves of `0.0` and `-0.0` left two files for one key;
/// a key `3.0` was named by its bit pattern. The store opens, serves every other record, reports
/// the two damaged files, and the next write of their keys repairs the folder.
@Test func anArchiveWithKeyCollisionsFromOlderVersionsOpensAndReportsTheDamagedRecords() throws {
    try TemporaryDirectory.with("archive-legacy-keys") { directory in
        let store = directory.appendingPathComponent("store").path
        let (nfc, nfd) = ("caf\u{E9}", "cafe\u{301}")
        do {
            let objects = ObjectStore(backend: try FileArchiveStorageBackend(directory: store))
            try objects.save(Word(id: "tea", v: 5))
            try objects.save(Measure(id: 1.5, v: 9))
            try objects.save(Gauge(id: 1.5, v: 9))
        }
        // `save(contentsOf: [Gauge(id: 0.0, v: 1), Gauge(id: -0.0, v: 2)])` left one file, named by
        // 0.0's bits, holding -0.0's record: a sound record of the key 0.
        try writeOldRecord(["id": .real(-0.0), "v": 2], named: oldName(.real(0)), collection: "Gauge", in: store)
        try writeOldRecord(["id": .text(nfd), "v": 2], named: oldName(.text(nfc)), collection: "Word", in: store)
        for (key, v) in [(0.0, 1), (-0.0, 2), (3.0, 3)] as [(Double, Int64)] {
            try writeOldRecord(
                ["id": .real(key), "v": .integer(v)],
                named: oldName(.real(key)),
                collection: "Measure",
                in: store
            )
        }

        var backend = try FileArchiveStorageBackend(directory: store)
        var objects = ObjectStore(backend: backend)
        #expect(try objects.fetchAll(Word.self) == [Word(id: "tea", v: 5)])
        #expect(try objects.fetch(Word.self, id: nfc) == nil)
        #expect(try objects.count(Measure.self) == 3)
        // Of the two files for key 0, the one of the smaller name is served.
        #expect(try objects.fetch(Measure.self, id: StorageValue.real(0))?.v == 1)
        #expect(try objects.fetch(Measure.self, id: StorageValue.real(3))?.v == 3)
        #expect(try objects.fetch(Measure.self, id: StorageValue.real(1.5))?.v == 9)
        #expect(try objects.fetch(Gauge.self, id: StorageValue.real(0))?.v == 2)
        #expect(try objects.count(Gauge.self) == 2)
        let damaged = backend.damagedRecords
        #expect(
            damaged.map(\.path) == [
                store + "/c-measure/" + oldName(.real(-0.0)), store + "/c-word/" + oldName(.text(nfc)),
            ]
        )
        #expect(damaged.map(\.collection) == ["Measure", "Word"])
        #expect(damaged.first.map { $0.key == .real(-0.0) && $0.reason.contains(oldName(.real(0))) } == true)
        #expect(damaged.last?.reason.contains("does not match its file name") == true)
        #expect(damaged.last.map { Array("\($0.key)".utf8) } == Array("\(StorageValue.text(nfd))".utf8))

        // Writing or deleting a key replaces every file that holds it.
        try objects.save(Measure(id: 3, v: 4))
        #expect(try objects.delete(Measure.self, id: StorageValue.real(0)))
        try objects.save(Word(id: nfc, v: 7))
        #expect(backend.damagedRecords.isEmpty)

        backend = try FileArchiveStorageBackend(directory: store)
        objects = ObjectStore(backend: backend)
        #expect(backend.damagedRecords.isEmpty)
        #expect(
            try objects.fetchAll(Measure.self, orderBy: [.ascending("id")]) == [
                Measure(id: 1.5, v: 9), Measure(id: 3, v: 4),
            ]
        )
        let words = try objects.fetchAll(Word.self, orderBy: [.ascending("id")])
        #expect(words.map { Array($0.id.utf8) } == [Array(nfc.utf8), Array("tea".utf8)])
        #expect(words.map(\.v) == [7, 5])
        #expect(
            try recordFiles(store, "Measure")
                == [
                    try FileNames.record(for: .real(1.5), in: "Measure"),
                    try FileNames.record(for: .integer(3), in: "Measure"),
                ].sorted()
        )
        #expect(try recordFiles(store, "Word").count == 2)
        #expect(try objects.fetch(Gauge.self, id: StorageValue.real(-0.0))?.v == 2)
    }
}

/// A real key equal to an integer is named as that integer, so `0.0` and `-0.0` share a file.
@Test func equalNumericKeysShareOneFileName() throws {
    let zero = try FileNames.record(for: .integer(0), in: "c")
    #expect(try FileNames.record(for: .real(0), in: "c") == zero)
    #expect(try FileNames.record(for: .real(-0.0), in: "c") == zero)
    #expect(try FileNames.record(for: .real(-.nan), in: "c") == FileNames.record(for: .real(.nan), in: "c"))
    #expect(try FileNames.record(for: .real(0.5), in: "c") != FileNames.record(for: .real(-0.5), in: "c"))
    #expect(
        try FileNames.record(for: .text("caf\u{E9}"), in: "c") != FileNames.record(for: .text("cafe\u{301}"), in: "c")
    )
}
