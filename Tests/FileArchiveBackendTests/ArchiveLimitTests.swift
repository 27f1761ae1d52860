import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import FileArchiveBackend

// Every limit the archive's reader enforces is enforced by its writers first: what a write
// accepts reads back, and what a reader would refuse is refused at the write with
// `.limitExceeded` and nothing written (docs/ARCHIVE_FORMAT.md, "Limits").

/// A chain of classes through an optional: one level a class.
private final class Link: Codable {
    var next: Link?
    init(next: Link?) { self.next = next }
}

/// A chain of classes through arrays: two levels a class (the class and its array).
private final class Tree: Codable {
    var children: [Tree]
    init(children: [Tree]) { self.children = children }
}

/// A chain through an optional coded as a value of its own (`encode(_:forKey:)` of a `T?`,
/// as generic code does): two levels a class (the optional and the class).
private final class Boxed: Codable {
    var next: Boxed?
    var numbers: [Int64] = [1, 2]
    var ratios: [Float] = [0.5]
    init(next: Boxed?) { self.next = next }
    enum CodingKeys: String, CodingKey { case next, numbers, ratios }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        next = try container.decode(Boxed?.self, forKey: .next)
        numbers = try container.decode([Int64].self, forKey: .numbers)
        ratios = try container.decode([Float].self, forKey: .ratios)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(next, forKey: .next)
        try container.encode(numbers, forKey: .numbers)
        try container.encode(ratios, forKey: .ratios)
    }
}

/// `depth` classes, each holding the next.
private func chain<T>(_ depth: Int, _ make: (T?) -> T) -> T {
    var value = make(nil)
    for _ in 1..<depth { value = make(value) }
    return value
}

/// The deepest chain of `T` that `ArchiveEncoder` writes, checking along the way that every
/// archive written reads back and every refusal is `.limitExceeded` naming the limit.
private func deepestWritten<T: Codable>(_ make: (Int) -> T) throws -> Int {
    var deepest = 0
    for depth in 1...70 {
        let bytes: Data
        do {
            bytes = try ArchiveEncoder().encode(make(depth))
        } catch let error as StorageError {
            #expect(error.code == .limitExceeded, "\(T.self) × \(depth): \(error)")
            #expect(error.message.contains("nested deeper than 64 levels"), "\(error.message)")
            continue
        }
        #expect(throws: Never.self, "\(T.self) × \(depth) was written but cannot be read") {
            _ = try ArchiveDecoder().decode(T.self, from: bytes)
        }
        deepest = depth
    }
    return deepest
}

/// The decoder counts a level for every value that is not a primitive of the format, so a class
/// reached through an array or an optional coded as a value takes two levels: 32 such classes
/// are 64 levels, 33 are too deep. The encoder counts the same way and refuses what the decoder
/// would (it wrote 70 classes, which then could not be read).
@Test func theEncoderRefusesExactlyTheNestingTheDecoderRefuses() throws {
    #expect(try deepestWritten { chain($0, Link.init) } == 64)
    #expect(try deepestWritten { chain($0, { Tree(children: $0.map { [$0] } ?? []) }) } == 32)
    // 31 classes, and the last one's arrays of Int64 and Float at level 64: those are
    // primitives on both sides (the decoder took a level for each Int64 and Float).
    #expect(try deepestWritten { chain($0, Boxed.init) } == 32)
}

@Test func fileArchiveRefusesTooDeepAValueWithNothingWritten() throws {
    try TemporaryDirectory.with("archive-limits") { directory in
        let url = directory.appendingPathComponent("tree.archive")
        try FileArchive.write(chain(3, { Tree(children: $0.map { [$0] } ?? []) }), to: url)
        let before = try Data(contentsOf: url)
        do {
            try FileArchive.write(chain(33, { Tree(children: $0.map { [$0] } ?? []) }), to: url)
            Issue.record("33 classes through arrays were written")
        } catch let error as StorageError {
            #expect(error.code == .limitExceeded)
            #expect(error.path == url.path)
            #expect(error.message.contains("nested deeper than 64 levels at 'children.0.children.0"))
        }
        #expect(try Data(contentsOf: url) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["tree.archive"])
        _ = try FileArchive.read(Tree.self, from: url)
    }
}

/// A cycle of classes used to recurse until the stack overflowed; it now stops at the limit.
@Test func aCycleOfClassesIsRefusedInsteadOfOverflowingTheStack() throws {
    let first = Link(next: nil)
    first.next = Link(next: first)
    defer { first.next = nil }
    #expect(throws: StorageError.self) { try ArchiveEncoder().encode(first) }
}

/// A `Data` of 2 GiB makes a file larger than the reader takes: refused before it is copied
/// (the `Data` is never touched, so its pages are never made resident).
@Test func fileArchiveRefusesTwoGiBOfDataWithNothingWritten() throws {
    try TemporaryDirectory.with("archive-limits") { directory in
        let url = directory.appendingPathComponent("big.archive")
        let huge = Data(count: ArchiveLayout.maximumSize)
        do {
            try FileArchive.write(huge, to: url)
            Issue.record("2 GiB of data were written")
        } catch let error as StorageError {
            #expect(error.code == .limitExceeded)
            #expect(error.path == url.path)
            #expect(error.message.contains("larger than 2147483648 bytes"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}

/// At the limit the archive is written; one byte over, it is refused, in every format.
@Test(arguments: [FileArchive.Format.binary, .json, .propertyList])
func fileArchiveWritesUpToTheSizeLimitExactly(_ format: FileArchive.Format) throws {
    try TemporaryDirectory.with("archive-limits") { directory in
        let url = directory.appendingPathComponent("value")
        let value = ["text": String(repeating: "x", count: 300)]
        try FileArchive.write(value, to: url, format: format)
        let size = try Data(contentsOf: url).count
        try FileManager.default.removeItem(at: url)
        #expect(throws: StorageError.self) {
            try FileArchive.write(value, to: url, format: format, maximumSize: size - 1)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        try FileArchive.write(value, to: url, format: format, maximumSize: size)
        #expect(try FileArchive.read([String: String].self, from: url) == value)
    }
}

/// `RecordArchive.encodedSize`, with which a record is checked when it is put, is the size of
/// the file `encode` writes, and `encode` refuses one byte over its limit.
@Test func aRecordsSizeIsKnownBeforeItIsWritten() throws {
    let columns = ["id", "name", "ratio", "blob", "none", "long"].map {
        ColumnDefinition(name: $0, type: .untyped, isNullable: true)
    }
    for round in 0..<200 {
        let record: [StorageValue] = [
            .integer(Int64(round)),
            .text(String(repeating: "é", count: round * 3)),
            .real(Double(round) / 7),
            .blob(Data(count: round * round)),
            .null,
            .text(String(repeating: "a", count: 16_000 + round)),
        ]
        let size = RecordArchive.encodedSize(record, columns: columns)
        let bytes = try #require(RecordArchive.encode(record, columns: columns))
        #expect(bytes.count == size)
        #expect(RecordArchive.encode(record, columns: columns, maximumSize: size) == bytes)
        #expect(RecordArchive.encode(record, columns: columns, maximumSize: size - 1) == nil)
        #expect(throws: StorageError.self) {
            try RecordArchive.checkSize(
                record,
                columns: columns,
                collection: "c",
                key: .integer(1),
                maximumSize: size - 1
            )
        }
        try RecordArchive.checkSize(record, columns: columns, collection: "c", key: .integer(1), maximumSize: size)
    }
}

private struct Attachment: Codable, Equatable, StorableModel {
    var id: Int64
    var payload: Data
}

/// A record whose file would be 2 GiB + 1 bytes is refused when it is saved, with nothing
/// written; the store keeps its records and opens again. (It was written, and then the store
/// refused to open at all.) The payload is never touched, so it costs no memory.
@Test func aRecordOverTwoGiBIsRefusedWhenSavedAndTheStoreStaysReadable() throws {
    try TemporaryDirectory.with("archive-limits") { directory in
        let path = directory.appendingPathComponent("store").path
        let store = try ObjectStore(backend: .fileArchive(directory: path))
        try store.save(Attachment(id: 1, payload: Data([1, 2, 3])))
        let columns = try #require(try store.backend.read { try $0.schema(of: "Attachment") }).columns
        // The payload size that makes the record's file exactly one byte over the limit.
        func size(_ count: Int) -> Int {
            RecordArchive.encodedSize([.integer(2), .blob(Data(count: count))], columns: columns)
        }
        var count = ArchiveLayout.maximumSize - size(0) - 8
        while size(count) <= ArchiveLayout.maximumSize { count += 1 }
        #expect(size(count) == ArchiveLayout.maximumSize + 1)
        let files = try FileManager.default.contentsOfDirectory(atPath: path + "/c-attachment").sorted()
        do {
            try store.save(Attachment(id: 2, payload: Data(count: count)))
            Issue.record("a record of 2 GiB + 1 bytes was saved")
        } catch let error as StorageError {
            #expect(error.code == .limitExceeded, "\(error)")
            #expect(error.collection == "Attachment")
            #expect(error.key == .integer(2))
            #expect(error.message.contains("2147483649 bytes"), "\(error.message)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path + "/c-attachment").sorted() == files)
        #expect(try store.fetchAll(Attachment.self) == [Attachment(id: 1, payload: Data([1, 2, 3]))])
        try store.save(Attachment(id: 3, payload: Data([3])))
        let reopened = try ObjectStore(backend: .fileArchive(directory: path))
        #expect(try reopened.fetchAll(Attachment.self, orderBy: [.ascending("id")]).map(\.id) == [1, 3])
    }
}

/// A schema whose names loading refuses (a column name over 255 bytes, here through the
/// backend used directly, which `ObjectStore` would have checked) is refused when the
/// collection is prepared; it was written, and then the whole store refused to open.
@Test func aSchemaTheStoreCouldNotLoadIsRefusedWhenPrepared() throws {
    try TemporaryDirectory.with("archive-limits") { directory in
        let path = directory.appendingPathComponent("store").path
        let backend = try FileArchiveStorageBackend(directory: path)
        let long = String(repeating: "c", count: 256)
        for schema in [
            CollectionSchema(
                name: "t",
                columns: [.init(name: "id", type: .integer), .init(name: long, type: .text)],
                primaryKey: "id"
            ),
            CollectionSchema(
                name: String(repeating: "t", count: 129),
                columns: [.init(name: "id", type: .integer)],
                primaryKey: "id"
            ),
        ] {
            let error = #expect(throws: StorageError.self) {
                try backend.write { try $0.prepareCollection(schema) }
            }
            #expect(error?.code == .invalidIdentifier, "\(String(describing: error))")
        }
        // A column added later is checked the same way.
        let good = CollectionSchema(name: "t", columns: [.init(name: "id", type: .integer)], primaryKey: "id")
        _ = try backend.write { try $0.prepareCollection(good) }
        var grown = good
        grown.columns.append(.init(name: long, type: .text))
        #expect(throws: StorageError.self) { try backend.write { try $0.prepareCollection(grown) } }
        let reopened = try FileArchiveStorageBackend(directory: path)
        #expect(try reopened.read { try $0.schema(of: "t") } == good)
    }
}
