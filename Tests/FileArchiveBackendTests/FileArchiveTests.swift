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
