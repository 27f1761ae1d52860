// The libFuzzer entry point for the archive decoder. Not a SwiftPM target: scripts/fuzz-archive.sh
// compiles it with the FileArchiveBackend sources and `-sanitize=fuzzer,address` (docs/FUZZING.md).
import Foundation
import Storage

/// A type that reaches every decoding path: primitives, optionals, nested containers,
/// collections, the Foundation types with tags of their own, and recursion.
private struct FuzzDocument: Codable {
    var text: String
    var number: Int
    var small: Int8
    var unsigned: UInt64
    var real: Double
    var single: Float
    var flag: Bool
    var optional: String?
    var date: Date
    var data: Data
    var url: URL?
    var uuid: UUID?
    var decimal: Decimal?
    var list: [Int?]
    var map: [String: [Double]]
    var children: [FuzzDocument]
}

private let kinds: [ArchiveKind] = [.document, .record, .schema, .journal]

/// The first byte picks what to decode. The rest gets a header and a valid checksum, so that
/// the fuzzer spends its time in the parser rather than on the checksum.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArchive(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = UnsafeBufferPointer(start: data, count: size)
    let mode = Int(input[0]) % 5
    let kind = kinds[mode % 4]
    var bytes = ArchiveLayout.magic + [ArchiveLayout.version, kind.rawValue, 0, 0] + input.dropFirst()
    let crc = CRC32.checksum(bytes)
    withUnsafeBytes(of: crc.littleEndian) { bytes.append(contentsOf: $0) }
    do {
        switch mode {
        case 0: _ = try ArchiveDecoder().decode(FuzzDocument.self, from: bytes, path: "fuzz")
        case 1:
            _ = try RecordArchive.decode(bytes, path: "fuzz", positions: ["id": 0, "name": 1], columnCount: 2)
        case 2: _ = try ArchiveDecoder().decode(SchemaArchive.self, from: bytes, path: "fuzz", kind: .schema)
        case 3: _ = try ArchiveDecoder().decode(JournalArchive.self, from: bytes, path: "fuzz", kind: .journal)
        default:
            // The input as a whole file, checksum and all.
            _ = try ArchiveDecoder().decode(FuzzDocument.self, from: [UInt8](input), path: "fuzz")
        }
    } catch {
        // Every refusal is fine; only a crash, a leak or an overflow is a finding.
    }
    return 0
}

/// With `FUZZ_SEEDS=folder` set, writes one valid input per mode there (the starting
/// corpus), then lets the run go on.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
)
    -> CInt
{
    guard let folder = ProcessInfo.processInfo.environment["FUZZ_SEEDS"] else { return 0 }
    let leaf = FuzzDocument(
        text: "leaf",
        number: -3,
        small: 7,
        unsigned: 9,
        real: 1.5,
        single: 2.5,
        flag: false,
        optional: nil,
        date: Date(timeIntervalSince1970: 0),
        data: Data([1, 2]),
        url: nil,
        uuid: nil,
        decimal: nil,
        list: [],
        map: [:],
        children: []
    )
    let document = FuzzDocument(
        text: "root ✓",
        number: 42,
        small: -1,
        unsigned: .max,
        real: -0.25,
        single: 3,
        flag: true,
        optional: "o",
        date: Date(timeIntervalSince1970: 1_000_000),
        data: Data([0, 255]),
        url: URL(string: "https://example.com"),
        uuid: UUID(),
        decimal: Decimal(string: "1.25"),
        list: [1, nil, 3],
        map: ["a": [1, 2]],
        children: [leaf, leaf]
    )
    let schema = SchemaArchive(
        CollectionSchema(
            name: "people",
            columns: [.init(name: "id", type: .integer), .init(name: "name", type: .text)],
            primaryKey: "id",
            indexes: [.init(["name"], unique: true)]
        ),
        lastAssignedKey: 5
    )
    let journal = JournalArchive(renames: [.init(from: "c-a/.tmp-1", to: "c-a/01")], removals: ["c-a/02"])
    let archives: [[UInt8]?] = [
        try? ArchiveEncoder().encodeBytes(document, kind: .document),
        RecordArchive.encode(
            [.integer(1), .text("n")],
            columns: [.init(name: "id", type: .integer), .init(name: "name", type: .text)]
        ),
        try? ArchiveEncoder().encodeBytes(schema, kind: .schema),
        try? ArchiveEncoder().encodeBytes(journal, kind: .journal),
    ]
    for (mode, archive) in archives.enumerated() {
        guard let archive else { continue }
        // Mode byte, then the archive without its header and checksum.
        let seed = [UInt8(mode)] + archive.dropFirst(ArchiveLayout.headerSize).dropLast(ArchiveLayout.trailerSize)
        _ = FileManager.default.createFile(atPath: folder + "/seed-\(mode)", contents: Data(seed))
    }
    if let whole = archives[0] {
        _ = FileManager.default.createFile(atPath: folder + "/seed-4", contents: Data([4] + whole))
    }
    return 0
}
