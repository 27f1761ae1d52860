import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import FileArchiveBackend

private struct Document: Codable, Equatable {
    var title: String
    var pages: [Int]
    var body: Data
    var child: [String: String]?
}

private struct Node: Codable {
    var children: [Node]
}

/// Reads `bytes` as a document file and expects a `StorageError` naming the file.
private func expectCorruptFile(
    _ bytes: [UInt8],
    in directory: URL,
    sourceLocation: SourceLocation = #_sourceLocation
)
    throws
{
    let url = directory.appendingPathComponent("damaged.archive")
    try Data(bytes).write(to: url)
    do {
        _ = try FileArchive.read(Document.self, from: url)
        Issue.record("damaged bytes decoded", sourceLocation: sourceLocation)
    } catch let error as StorageError {
        #expect(error.path == url.path, "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains(url.path), "\(error)", sourceLocation: sourceLocation)
    }
}

private let document = Document(title: "t", pages: [1, 2, 3], body: Data(repeating: 7, count: 40), child: ["k": "v"])

@Test func everyFlippedByteAndEveryTruncationIsDetected() throws {
    try TemporaryDirectory.with("archive-corruption") { directory in
        let bytes = try ArchiveEncoder().encodeBytes(document, kind: .document)
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= 0x5a
            try expectCorruptFile(flipped, in: directory)
        }
        for length in 0..<bytes.count {
            try expectCorruptFile(Array(bytes.prefix(length)), in: directory)
        }
    }
}

@Test func randomBytesAreRefused() throws {
    try TemporaryDirectory.with("archive-corruption") { directory in
        for round in 0..<300 {
            var bytes = (0..<Int.random(in: 0...200)).map { _ in UInt8.random(in: 0...255) }
            // Half of them start like an archive, to get past the magic bytes.
            if round % 2 == 0 { bytes = ArchiveLayout.magic + [1, 0, 0, 0] + bytes }
            try expectCorruptFile(bytes, in: directory)
        }
    }
}

/// An archive with a valid checksum whose string claims 2^63 bytes.
private func archiveWithHugeLength() -> [UInt8] {
    var writer = ArchiveWriter(kind: .document)
    let container = writer.beginContainer(.keyed)
    writer.appendKey("title")
    writer.incrementCount(ofContainerAt: container)
    writer.append(.string)
    writer.appendVarint(1 << 63)
    writer.appendFixed(UInt32(0x6162_6364))
    writer.endContainer(at: container)
    return writer.finish()!
}

@Test func aLengthOf2To63IsRefusedWithoutAllocating() throws {
    try TemporaryDirectory.with("archive-corruption") { directory in
        try expectCorruptFile(archiveWithHugeLength(), in: directory)
        // Also when the checksum is not checked, as the fuzzer runs the parser.
        #expect(throws: StorageError.self) {
            try ArchiveDecoder().decode(
                Document.self,
                from: archiveWithHugeLength(),
                path: nil,
                verifyingChecksum: false
            )
        }
    }
}

@Test func nestingDeeperThanTheLimitIsRefused() throws {
    var node = Node(children: [])
    for _ in 0..<100 { node = Node(children: [node]) }
    // Written past the limit the encoder keeps, as a hostile file would be.
    let bytes = try ArchiveEncoder().encodeBytes(node, kind: .document, maximumDepth: .max)
    do {
        _ = try ArchiveDecoder().decode(Node.self, from: bytes, path: "deep.archive")
        Issue.record("100 levels decoded")
    } catch let error as StorageError {
        #expect(error.code == .corrupt)
        #expect(error.message.contains("nested deeper"))
    }
    var shallow = Node(children: [])
    for _ in 0..<30 { shallow = Node(children: [shallow]) }
    _ = try ArchiveDecoder().decode(
        Node.self,
        from: try ArchiveEncoder().encodeBytes(shallow, kind: .document),
        path: nil
    )
}

@Test func aDamagedRecordFileIsNamedWhenTheStoreOpens() throws {
    try TemporaryDirectory.with("archive-corruption") { directory in
        let path = directory.appendingPathComponent("store").path
        let store = try ObjectStore(backend: .fileArchive(directory: path))
        try store.insert(dictionaries: [["id": 1, "name": "a"], ["id": 2, "name": "b"]], into: "items")
        let folder = path + "/" + (try FileNames.folder(for: "items"))
        let record = folder + "/" + (try FileNames.record(for: .integer(2), in: "items"))
        var bytes = try #require(try FileSystem.readFile(record))
        bytes[bytes.count / 2] ^= 1
        try FileSystem.remove(record)
        try FileSystem.writeNewFile(bytes, at: record, sync: false)
        do {
            _ = try FileArchiveStorageBackend(directory: path)
            Issue.record("a damaged store opened")
        } catch let error as StorageError {
            #expect(error.code == .corrupt)
            #expect(error.path == record)
        }
    }
}
