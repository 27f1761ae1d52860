public import Foundation
import Storage

/// One Codable value in one file: a user profile, a document, settings, in an app's folder.
///
/// ```swift
/// try FileArchive.write(profile, to: folder.appendingPathComponent("profile.archive"))
/// let profile = try FileArchive.read(Profile.self, from: folder.appendingPathComponent("profile.archive"))
/// ```
///
/// The file is replaced atomically and durably (temporary file with mode 0600, fsync, rename,
/// fsync of the folder): after a crash it holds the old value or the new one, never a mix. A
/// crash in the middle of a write can leave a `.tmp-…` file beside it, which nothing reads.
public enum FileArchive {
    /// How a value is written.
    public enum Format: Sendable, Hashable {
        /// The keyed binary archive of docs/ARCHIVE_FORMAT.md: compact, fast, checksummed. Every
        /// `Date` reads back equal.
        case binary
        /// JSON, for reading or exchanging the file with other tools. Every `Date` reads back
        /// equal (seconds since 2001, `JSONEncoder`'s default).
        case json
        /// An XML property list, for Apple's tools. Dates are kept to the second: the format's
        /// `<date>` has no fractions.
        case propertyList
    }

    /// Writes `value` to the file at `url`, replacing it atomically.
    /// - Parameters:
    ///   - value: the value.
    ///   - url: a file URL; its folder must exist.
    ///   - format: the file's format; `.binary` by default.
    /// - Throws: `StorageError` with code `.io` when the file cannot be written;
    ///   `.limitExceeded` when `read(_:from:)` would refuse the file: larger than 2 GiB, or (in
    ///   the binary format) values nested deeper than 64 levels; nothing is written then. Or the
    ///   encoder's error when the value cannot be encoded.
    public static func write(_ value: some Encodable, to url: URL, format: Format = .binary) throws {
        try write(value, to: url, format: format, maximumSize: FileSystem.maximumFileSize)
    }

    /// Writes `value` to the file at `url`, as the public `write(_:to:format:)` does.
    /// - Parameters:
    ///   - value: the value.
    ///   - url: a file URL; its folder must exist.
    ///   - format: the file's format.
    ///   - maximumSize: the largest file written; smaller only in tests.
    /// - Throws: `StorageError` with code `.io` or `.limitExceeded`, as `write(_:to:format:)`.
    static func write(_ value: some Encodable, to url: URL, format: Format, maximumSize: Int) throws {
        let bytes: [UInt8]
        do {
            bytes = try encode(value, format: format, maximumSize: maximumSize)
        } catch var error as StorageError {
            error.path = url.path
            throw error
        }
        // The folder is opened once and the temporary file, the rename and the fsync all go
        // through it: they act on one folder even if its path changes meanwhile.
        let folder = try Folder(path: url.deletingLastPathComponent().path, followingLink: true)
        let name = url.lastPathComponent
        let temporary = FileSystem.temporaryName()
        do {
            try folder.writeNewFile(temporary, bytes, sync: true)
            try folder.rename(temporary, to: name)
        } catch {
            try? folder.remove(temporary)
            throw error
        }
        try folder.sync()
    }

    /// The file's bytes in `format`, refused when `read(_:from:)` would refuse them.
    private static func encode(_ value: some Encodable, format: Format, maximumSize: Int) throws -> [UInt8] {
        let bytes: [UInt8]
        switch format {
        case .binary:
            // The encoder checks the size before copying a large value.
            return try ArchiveEncoder().encodeBytes(value, kind: .document, maximumSize: maximumSize)
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            bytes = [UInt8](try encoder.encode(value))
        case .propertyList:
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .xml
            bytes = [UInt8](try encoder.encode(value))
        }
        guard bytes.count <= maximumSize else {
            throw StorageError(
                .limitExceeded,
                "the file would be \(bytes.count) bytes, more than the \(maximumSize) bytes an archive file may be"
                    + " (a reader refuses it); nothing was written"
            )
        }
        return bytes
    }

    /// Reads a value of `type` from the file at `url`, whichever format it was written in.
    /// - Parameters:
    ///   - type: the type to read.
    ///   - url: a file URL.
    /// - Returns: the value.
    /// - Throws: `StorageError` naming the file: `.io` when it is missing or unreadable,
    ///   `.corrupt` when it is damaged, `.typeMismatch` or `.missingValue` when it holds
    ///   something else than a `type`.
    public static func read<T: Decodable>(_ type: T.Type, from url: URL) throws -> T {
        let path = url.path
        guard let bytes = try FileSystem.readFile(path) else {
            throw StorageError(.io, "no archive at \(path)", path: path)
        }
        do {
            if bytes.starts(with: ArchiveLayout.magic) {
                return try ArchiveDecoder().decode(type, from: bytes, path: path)
            }
            if bytes.starts(with: Array("<?xml".utf8)) || bytes.starts(with: Array("bplist".utf8)) {
                return try PropertyListDecoder().decode(type, from: Data(bytes))
            }
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch let error as StorageError {
            throw error
        } catch let error as DecodingError {
            throw storageError(error, path: path)
        } catch {
            throw StorageError(.corrupt, "cannot read \(path): \(error)", path: path, underlying: nil)
        }
    }

    private static func storageError(_ error: DecodingError, path: String) -> StorageError {
        func describe(_ context: DecodingError.Context) -> String {
            let location = context.codingPath.map(\.stringValue).joined(separator: ".")
            return (location.isEmpty ? "" : "at '\(location)': ") + context.debugDescription
        }
        switch error {
        case .keyNotFound(let key, let context):
            return StorageError(
                .missingValue,
                "\(path) has no value for '\(key.stringValue)' " + describe(context),
                column: key.stringValue,
                path: path
            )
        case .valueNotFound(_, let context):
            return StorageError(.missingValue, "\(path): " + describe(context), path: path)
        case .typeMismatch(_, let context):
            return StorageError(.typeMismatch, "\(path): " + describe(context), path: path)
        case .dataCorrupted(let context):
            return StorageError(.corrupt, "\(path): " + describe(context), path: path)
        @unknown default:
            return StorageError(.corrupt, "cannot read \(path): \(error)", path: path)
        }
    }
}
