import CLMDB
import CSQLite
import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The package's root folder, found from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The fault writer executable, built beside the crash writer.
var faultWriter: URL {
    CrashHarness.executable.deletingLastPathComponent().appendingPathComponent("StorageFaultWriter")
}

/// A failure of the test machinery itself (a tool missing, a child that would not start).
struct FaultTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What a child process printed and how it ended.
struct ChildResult {
    var output: String
    var status: Int32
    var exitedNormally: Bool

    var lines: [String] { output.split(separator: "\n").map(String.init) }

    /// The rest of the first line starting with `prefix` and a space.
    func line(_ prefix: String) -> String? {
        lines.first { $0.hasPrefix(prefix + " ") }.map { String($0.dropFirst(prefix.count + 1)) }
    }
}

/// Runs `executable` to its end with `arguments` and extra environment variables.
func runChild(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws -> ChildResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ChildResult(
        output: String(decoding: data, as: UTF8.self),
        status: process.terminationStatus,
        exitedNormally: process.terminationReason == .exit
    )
}

/// Runs `executable` to its end like `runChild`, but when it prints a line starting with `pause`
/// calls `body` and then sends the child a line on its standard input.
func runChild(
    _ executable: URL,
    _ arguments: [String],
    environment: [String: String] = [:],
    pausingAfter pause: String,
    _ body: () throws -> Void
) throws -> ChildResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let output = Pipe()
    let input = Pipe()
    process.standardOutput = output
    process.standardInput = input
    try process.run()
    let reader = output.fileHandleForReading
    var received = Data()
    var paused = false
    defer {
        if !paused { try? input.fileHandleForWriting.close() }
    }
    while !paused {
        let chunk = reader.availableData
        if chunk.isEmpty { break }
        received.append(chunk)
        if String(decoding: received, as: UTF8.self).split(separator: "\n").contains(where: { $0.hasPrefix(pause) }) {
            paused = true
            defer {
                input.fileHandleForWriting.write(Data("go\n".utf8))
                try? input.fileHandleForWriting.close()
            }
            try body()
        }
    }
    received.append(reader.readDataToEndOfFile())
    process.waitUntilExit()
    return ChildResult(
        output: String(decoding: received, as: UTF8.self),
        status: process.terminationStatus,
        exitedNormally: process.terminationReason == .exit
    )
}

/// Finds a program on the PATH.
func findProgram(_ name: String) -> URL? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for folder in path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin"] {
        let candidate = URL(fileURLWithPath: folder).appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    return nil
}

/// The LD_PRELOAD fault shim (scripts/faultshim/faultshim.c), compiled once per test run with
/// the system's C compiler into the package's `.build/faultshim/` (not /tmp, where each run left
/// one behind). Each run compiles to a name of its own and renames it over `faultshim.so`, so
/// runs at the same time never see a half-written library (a library already loaded stays valid).
enum FaultShim {
    private static let built: Result<String, FaultTestFailure> = {
        let source = packageRoot.appendingPathComponent("scripts/faultshim/faultshim.c").path
        guard let compiler = findProgram("cc") ?? findProgram("gcc") ?? findProgram("clang") else {
            return .failure(FaultTestFailure("no C compiler (cc) for the fault shim: run scripts/setup.sh"))
        }
        let folder = packageRoot.appendingPathComponent(".build/faultshim", isDirectory: true)
        let library = folder.appendingPathComponent("faultshim.so").path
        let building = folder.appendingPathComponent("faultshim-\(getpid())-\(UUID().uuidString).so").path
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let result = try runChild(compiler, ["-shared", "-fPIC", "-O2", "-o", building, source, "-ldl"])
            guard result.status == 0 else {
                try? FileManager.default.removeItem(atPath: building)
                return .failure(FaultTestFailure("cannot build the fault shim: \(result.output)"))
            }
            guard rename(building, library) == 0 else {
                try? FileManager.default.removeItem(atPath: building)
                return .failure(FaultTestFailure("cannot move the fault shim to \(library): errno \(errno)"))
            }
        } catch {
            return .failure(FaultTestFailure("cannot build the fault shim with \(compiler.path): \(error)"))
        }
        return .success(library)
    }()

    /// The shim's path.
    static func library() throws -> String { try built.get() }

    /// The environment that loads the shim and faults the `nth` counted call (0: none).
    static func environment(
        nth: Int,
        errno: String = "EIO",
        calls: String? = nil,
        sticky: Bool = false
    ) throws -> [String: String] {
        var environment = ["LD_PRELOAD": try library(), "FAULT_NTH": String(nth), "FAULT_ERRNO": errno]
        if let calls { environment["FAULT_CALLS"] = calls }
        if sticky { environment["FAULT_STICKY"] = "1" }
        return environment
    }
}

/// Copies the folder `source` to `target` (which must not exist), keeping file modes.
func copyFolder(_ source: URL, to target: URL) throws {
    try FileManager.default.copyItem(at: source, to: target)
}

/// The files a store's own engine check and our rules say must not be left after it reopened:
/// temporary files and journals.
func leftovers(in folder: URL) -> [String] {
    let names = FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []
    return names.filter { name in
        let last = (name as NSString).lastPathComponent
        return last.hasPrefix(".tmp-") || last == "journal" || last.hasSuffix("-journal")
    }
}

/// Runs the engine's own integrity check on a store that no object of this process has open.
/// - SQLite: `PRAGMA integrity_check` must answer `ok`.
/// - LMDB: every named database is walked with a cursor, and the entries counted must equal
///   `mdb_stat`'s count (a page that cannot be read fails the walk).
/// - Archive: opening the store decodes every schema and record file, so a store that opens
///   passes; it is opened here for that.
/// - Returns: a one-line summary.
@discardableResult
func checkIntegrity(_ backend: DiskBackend, path: String) throws -> String {
    switch backend {
    case .sqlite: return try sqliteIntegrityCheck(path)
    case .lmdb: return try lmdbFullScan(path)
    case .archive, .postgresql:
        let store = try backend.openStore(path: path)
        _ = try store.fetchAll(CrashRecord.self)
        return "ok"
    }
}

private func sqliteIntegrityCheck(_ path: String) throws -> String {
    var database: OpaquePointer?
    guard sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let database else {
        sqlite3_close(database)
        throw FaultTestFailure("cannot open \(path) to check it")
    }
    defer { sqlite3_close(database) }
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(database, "PRAGMA integrity_check", -1, &statement, nil) == SQLITE_OK else {
        throw FaultTestFailure("cannot check \(path): \(String(cString: sqlite3_errmsg(database)))")
    }
    defer { sqlite3_finalize(statement) }
    var answers: [String] = []
    while sqlite3_step(statement) == SQLITE_ROW {
        answers.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "")
    }
    guard answers == ["ok"] else { throw FaultTestFailure("integrity_check of \(path): \(answers)") }
    return "ok"
}

private func lmdbFullScan(_ path: String) throws -> String {
    var created: OpaquePointer?
    guard mdb_env_create(&created) == 0, let env = created else { throw FaultTestFailure("mdb_env_create failed") }
    defer { mdb_env_close(env) }
    mdb_env_set_maxdbs(env, 4096)
    var rc = mdb_env_open(env, path, UInt32(MDB_NOSUBDIR | MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK), 0o600)
    guard rc == 0 else { throw FaultTestFailure("cannot open \(path): \(String(cString: mdb_strerror(rc)))") }
    var transaction: OpaquePointer?
    rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &transaction)
    guard rc == 0, let transaction else { throw FaultTestFailure("cannot begin: \(String(cString: mdb_strerror(rc)))") }
    defer { mdb_txn_abort(transaction) }

    /// Walks every entry of `dbi`; returns the count, or throws when the walk fails.
    func walk(_ dbi: MDB_dbi, _ name: String, _ visit: (MDB_val) -> Void = { _ in }) throws -> Int {
        var cursor: OpaquePointer?
        var rc = mdb_cursor_open(transaction, dbi, &cursor)
        guard rc == 0, let cursor else { throw FaultTestFailure("cannot open a cursor on \(name)") }
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var data = MDB_val()
        var count = 0
        rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
        while rc == 0 {
            count += 1
            visit(key)
            rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        guard rc == MDB_NOTFOUND else {
            throw FaultTestFailure("walking \(name) failed: \(String(cString: mdb_strerror(rc)))")
        }
        var stat = MDB_stat()
        mdb_stat(transaction, dbi, &stat)
        guard stat.ms_entries == count else {
            throw FaultTestFailure("\(name): mdb_stat counts \(stat.ms_entries) entries, the walk \(count)")
        }
        return count
    }

    var main: MDB_dbi = 0
    guard mdb_dbi_open(transaction, nil, 0, &main) == 0 else { throw FaultTestFailure("cannot open the main db") }
    var names: [String] = []
    _ = try walk(main, "the main database") { key in
        names.append(String(decoding: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size), as: UTF8.self))
    }
    var entries = 0
    for name in names {
        var dbi: MDB_dbi = 0
        rc = mdb_dbi_open(transaction, name, 0, &dbi)
        guard rc == 0 else {
            throw FaultTestFailure("cannot open database \(name): \(String(cString: mdb_strerror(rc)))")
        }
        entries += try walk(dbi, name)
    }
    return "\(names.count) databases, \(entries) entries"
}
