import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import FileArchiveBackend

#if canImport(Glibc)
import Glibc
#endif

private struct Settings: Codable, Equatable {
    var theme: String
    var fontSize: Double
    var recent: [URL]
    var lastOpened: Date?
}

private struct OtherShape: Codable {
    var theme: Int
}

private struct NeedsMore: Codable {
    var theme: String
    var required: Int
}

private let settings = Settings(
    theme: "dark",
    fontSize: 13.5,
    recent: [URL(string: "file:///tmp/a.txt")!],
    lastOpened: Date(timeIntervalSince1970: 1_700_000_000)
)

@Test(arguments: [FileArchive.Format.binary, .json, .propertyList])
func aValueIsWrittenToOneFileAndReadBack(format: FileArchive.Format) throws {
    try TemporaryDirectory.with("file-archive") { directory in
        let url = directory.appendingPathComponent("settings.archive")
        try FileArchive.write(settings, to: url, format: format)
        #expect(try FileArchive.read(Settings.self, from: url) == settings)
        var changed = settings
        changed.theme = "light"
        try FileArchive.write(changed, to: url, format: format)
        #expect(try FileArchive.read(Settings.self, from: url) == changed)
        var status = stat()
        #expect(stat(url.path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
        // No temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["settings.archive"])
    }
}

@Test func theBinaryFormatIsTheArchiveFormat() throws {
    try TemporaryDirectory.with("file-archive") { directory in
        let url = directory.appendingPathComponent("settings.archive")
        try FileArchive.write(settings, to: url)
        let bytes = [UInt8](try Data(contentsOf: url))
        #expect(Array(bytes.prefix(6)) == [0x53, 0x57, 0x41, 0x52, 1, 0])
        #expect(try ArchiveDecoder().decode(Settings.self, from: Data(bytes)) == settings)
    }
}

@Test func readingTheWrongTypeOrNoFileIsAStorageErrorNamingTheFile() throws {
    try TemporaryDirectory.with("file-archive") { directory in
        let url = directory.appendingPathComponent("settings.archive")
        let missing = try #require(throws: StorageError.self) { try FileArchive.read(Settings.self, from: url) }
        #expect(missing.code == .io)
        #expect(missing.path == url.path)
        try FileArchive.write(settings, to: url)
        let mismatch = try #require(throws: StorageError.self) { try FileArchive.read(OtherShape.self, from: url) }
        #expect(mismatch.code == .typeMismatch)
        #expect(mismatch.path == url.path)
        let lacking = try #require(throws: StorageError.self) { try FileArchive.read(NeedsMore.self, from: url) }
        #expect(lacking.code == .missingValue)
        #expect(lacking.column == "required")
        #expect(lacking.message.contains(url.path))
    }
}

@Test func writingIntoAMissingFolderIsAnIOError() throws {
    try TemporaryDirectory.with("file-archive") { directory in
        let url = directory.appendingPathComponent("no/such/settings.archive")
        let error = try #require(throws: StorageError.self) { try FileArchive.write(settings, to: url) }
        #expect(error.code == .io)
    }
}

private struct Stamps: Codable, Equatable {
    var dates: [Date]
    var one: Date
}

/// Random dates of every kind: `Date`'s own seconds since 2001, Unix timestamps, dates near 2001.
private func randomDates(_ count: Int) -> [Date] {
    var random = SeededGenerator(seed: 2_001)
    return (0..<count).map { index in
        let seconds = Double.random(in: -4e9...4e9, using: &random)
        switch index % 3 {
        case 0: return Date(timeIntervalSinceReferenceDate: seconds)
        case 1: return Date(timeIntervalSince1970: seconds)
        default: return Date(timeIntervalSinceReferenceDate: seconds / 1e9)
        }
    }
}

@Test(arguments: [FileArchive.Format.binary, .json])
func everyDateReadsBackEqual(format: FileArchive.Format) throws {
    try TemporaryDirectory.with("file-archive") { directory in
        let url = directory.appendingPathComponent("dates.archive")
        let value = Stamps(dates: randomDates(3_000), one: Date(timeIntervalSinceReferenceDate: 0.1))
        try FileArchive.write(value, to: url, format: format)
        let back = try FileArchive.read(Stamps.self, from: url)
        #expect(back.one == value.one, "\(back.one.timeIntervalSinceReferenceDate)")
        let differing = zip(value.dates, back.dates).filter { $0 != $1 }
        #expect(differing.isEmpty, "\(differing.count) of 3,000 differ, e.g. \(differing.prefix(3))")
    }
}

@Test func anXMLPropertyListKeepsDatesToTheSecond() throws {
    // The format's `<date>` is ISO 8601 without fractions: documented, not fixable in XML.
    try TemporaryDirectory.with("file-archive") { directory in
        let url = directory.appendingPathComponent("dates.plist")
        let value = Stamps(dates: randomDates(300), one: Date(timeIntervalSinceReferenceDate: 0.1))
        try FileArchive.write(value, to: url, format: .propertyList)
        let back = try FileArchive.read(Stamps.self, from: url)
        for (date, read) in zip(value.dates, back.dates) {
            #expect(abs(read.timeIntervalSince(date)) < 1, "\(date) read back as \(read)")
        }
    }
}

@Test func aDateWrittenAsSecondsSince1970ByAnEarlierVersionIsStillRead() throws {
    // The earlier binary format wrote tag 09 and seconds since 1970: rewrite a new archive so.
    let date = Date(timeIntervalSince1970: 1_700_000_000.5)
    var bytes = [UInt8](try ArchiveEncoder().encodeBytes(Stamps(dates: [], one: date), kind: .document))
    let written = withUnsafeBytes(of: date.timeIntervalSinceReferenceDate.bitPattern.littleEndian) { [UInt8]($0) }
    let start = try #require(
        bytes.indices.first { bytes[$0] == 0x0D && Array(bytes[($0 + 1)...].prefix(8)) == written }
    )
    bytes[start] = 0x09
    let old = withUnsafeBytes(of: date.timeIntervalSince1970.bitPattern.littleEndian) { [UInt8]($0) }
    bytes.replaceSubrange((start + 1)..<(start + 9), with: old)
    let end = bytes.count - ArchiveLayout.trailerSize
    let crc = bytes.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[..<end])) }
    bytes.replaceSubrange(end..<bytes.count, with: withUnsafeBytes(of: crc.littleEndian) { [UInt8]($0) })
    #expect(try ArchiveDecoder().decode(Stamps.self, from: Data(bytes)) == Stamps(dates: [], one: date))
}
