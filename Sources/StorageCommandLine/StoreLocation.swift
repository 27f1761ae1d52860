import FileArchiveBackend
import Foundation
import LMDBBackend
import PostgreSQLBackend
import SQLiteBackend
package import Storage

/// Where a store is and which engine keeps it: from a URL (`sqlite:app.sqlite`, `lmdb:app.lmdb`,
/// `archive:Store/`, `postgresql://…`) or a bare path, recognised by the file's own header or
/// the folder's marker.
package enum StoreLocation: Equatable, CustomStringConvertible {
    case sqlite(String)
    case lmdb(String)
    case archive(String)
    /// A libpq connection string (a URI or `key=value` pairs), and the schema the store's tables
    /// are in (`?schema=NAME`, taken out of a URI; default `public`).
    case postgresql(url: String, schema: String)

    /// The engine's name.
    package var engine: String {
        switch self {
        case .sqlite: "sqlite"
        case .lmdb: "lmdb"
        case .archive: "archive"
        case .postgresql: "postgresql"
        }
    }

    /// The file or folder, or the user, server and database of the connection string (never
    /// its password).
    package var path: String {
        switch self {
        case .sqlite(let path), .lmdb(let path), .archive(let path): path
        case .postgresql(let url, _): (try? PostgreSQLStorageBackend.describe(url: url)) ?? "postgresql"
        }
    }

    /// `sqlite:PATH`, `lmdb:PATH`, `archive:FOLDER`, or for PostgreSQL the server's URL with
    /// no password (`postgresql://app@db1/app`): its scheme already names the engine.
    package var description: String {
        guard case .postgresql = self else { return engine + ":" + path }
        return path.hasPrefix("postgresql://") ? path : engine + ":" + path
    }

    /// SQLite's header: the first 16 bytes of every database file.
    static let sqliteHeader = Array("SQLite format 3\u{0}".utf8)
    /// LMDB's magic number, in the meta page of every environment file (after its 16-byte page
    /// header).
    static let lmdbMagic: UInt32 = 0xBEEF_C0DE

    /// The location `text` names.
    /// - Parameters:
    ///   - text: a URL or a bare path.
    ///   - mustExist: whether the store must exist (a read); otherwise a missing bare path's
    ///     engine is taken from its extension (`.sqlite`, `.db`, `.lmdb`, `.archive`).
    /// - Returns: the location.
    /// - Throws: `StorageError` with `.cannotOpen` for a missing store or one of no engine
    ///   known, `UsageError` for a path whose engine cannot be told.
    package static func parse(_ text: String, mustExist: Bool) throws -> StoreLocation {
        if PostgreSQLStorageBackend.isConnectionString(text) {
            return try postgreSQL(text)
        }
        for (scheme, make) in [
            ("sqlite:", StoreLocation.sqlite), ("lmdb:", StoreLocation.lmdb), ("archive:", StoreLocation.archive),
        ] where text.hasPrefix(scheme) {
            let path = String(text.dropFirst(scheme.count))
            guard !path.isEmpty else { throw UsageError("'\(text)' names no path") }
            let location = make(path)
            if mustExist { try location.checkExists() }
            return location
        }
        if text.isEmpty { throw UsageError("a store path may not be empty") }
        if let scheme = text.range(of: "://") {
            // Only the scheme: the rest may hold a password.
            throw UsageError(
                "unknown store URL scheme '\(text[..<scheme.lowerBound])': use sqlite:, lmdb:, archive: or postgresql://"
            )
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: text, isDirectory: &isDirectory) {
            return try recognise(text, isDirectory: isDirectory.boolValue)
        }
        if mustExist {
            throw StorageError(.cannotOpen, "no store at '\(text)': no such file or folder", path: text)
        }
        let lowered = text.lowercased()
        if [".sqlite", ".sqlite3", ".db"].contains(where: lowered.hasSuffix) { return .sqlite(text) }
        if [".lmdb", ".mdb"].contains(where: lowered.hasSuffix) { return .lmdb(text) }
        if lowered.hasSuffix(".archive") || lowered.hasSuffix("/") { return .archive(text) }
        throw UsageError(
            "cannot tell which engine '\(text)' should be: write sqlite:\(text), lmdb:\(text) or archive:\(text)"
        )
    }

    /// The engine of an existing file or folder.
    static func recognise(_ path: String, isDirectory: Bool) throws -> StoreLocation {
        if isDirectory {
            var lockIsFile: ObjCBool = true
            let lock = (path as NSString).appendingPathComponent("lock")
            if FileManager.default.fileExists(atPath: lock, isDirectory: &lockIsFile), !lockIsFile.boolValue {
                return .archive(path)
            }
            throw StorageError(
                .cannotOpen,
                "'\(path)' is a folder but not an archive store (it has no 'lock' file)",
                path: path
            )
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StorageError(.cannotOpen, "cannot read '\(path)'", path: path)
        }
        defer { try? handle.close() }
        let header = [UInt8]((try? handle.read(upToCount: 20)) ?? Data())
        if header.count >= 16, Array(header[0..<16]) == sqliteHeader { return .sqlite(path) }
        if header.count >= 20 {
            let magic = header[16..<20].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if magic == lmdbMagic { return .lmdb(path) }
        }
        throw StorageError(
            .cannotOpen,
            "'\(path)' is not a store: its header is neither SQLite's nor LMDB's",
            path: path
        )
    }

    /// Throws when the store of a location given with a scheme does not exist, or is not of
    /// that engine.
    func checkExists() throws {
        guard case .postgresql = self else {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw StorageError(.cannotOpen, "no store at '\(path)': no such file or folder", path: path)
            }
            let found = try Self.recognise(path, isDirectory: isDirectory.boolValue)
            guard found.engine == engine else {
                throw StorageError(.cannotOpen, "'\(path)' is a \(found.engine) store, not \(engine)", path: path)
            }
            return
        }
    }

    /// The location of a PostgreSQL connection string, checked (a string libpq cannot parse, or
    /// with an invalid value, is refused here, without quoting it).
    static func postgreSQL(_ text: String) throws -> StoreLocation {
        let location: StoreLocation
        if let question = text.firstIndex(of: "?"), text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") {
            var schema = "public"
            var kept: [Substring] = []
            for item in text[text.index(after: question)...].split(separator: "&") {
                if item.hasPrefix("schema=") {
                    schema = String(item.dropFirst("schema=".count))
                } else {
                    kept.append(item)
                }
            }
            guard !schema.isEmpty else { throw UsageError("'schema=' in the URL needs a name") }
            let base = String(text[..<question])
            location = .postgresql(url: kept.isEmpty ? base : base + "?" + kept.joined(separator: "&"), schema: schema)
        } else {
            location = .postgresql(url: text, schema: "public")
        }
        if case .postgresql(let url, _) = location { _ = try PostgreSQLStorageBackend.describe(url: url) }
        return location
    }

    /// Opens the store; `readOnly`, one that exists, creating and changing nothing (every
    /// backend's `readOnly` configuration).
    /// - Parameter readOnly: whether the store is only read.
    /// - Returns: the store.
    /// - Throws: `StorageError` when the engine cannot open it (`.cannotOpen`, read-only, for a
    ///   store that does not exist).
    package func open(readOnly: Bool = false) throws -> ObjectStore {
        switch self {
        case .sqlite(let path):
            return ObjectStore(backend: try .sqlite(path: path, configuration: .init(readOnly: readOnly)))
        case .lmdb(let path):
            return ObjectStore(backend: try .lmdb(path: path, configuration: .init(readOnly: readOnly)))
        case .archive(let path):
            return ObjectStore(backend: try .fileArchive(directory: path, configuration: .init(readOnly: readOnly)))
        case .postgresql(let url, let schema):
            let configuration = PostgreSQLStorageBackend.Configuration(schema: schema, poolSize: 1, readOnly: readOnly)
            return ObjectStore(backend: try .postgreSQL(url: url, configuration: configuration))
        }
    }

    /// The bytes the store takes on disk (its files, or its folder's), or `nil` for a server.
    package func sizeOnDisk() -> Int? {
        let manager = FileManager.default
        func size(_ file: String) -> Int {
            ((try? manager.attributesOfItem(atPath: file))?[.size] as? NSNumber)?.intValue ?? 0
        }
        switch self {
        case .sqlite(let path):
            return size(path) + size(path + "-wal") + size(path + "-shm")
        case .lmdb(let path):
            return size(path) + size(path + "-lock")
        case .archive(let path):
            var total = 0
            if let walker = manager.enumerator(atPath: path) {
                for case let item as String in walker { total += size((path as NSString).appendingPathComponent(item)) }
            }
            return total
        case .postgresql:
            return nil
        }
    }
}
