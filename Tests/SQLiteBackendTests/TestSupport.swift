import Foundation
import SQLiteBackend
import Storage

/// A fresh directory for one test, removed when the body returns.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("SQLiteBackendTests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// A backend on a fresh database file in a fresh directory.
func withBackend<Result>(_ body: (SQLiteStorageBackend, String) throws -> Result) throws -> Result {
    try withTemporaryDirectory { directory in
        let path = directory + "/test.sqlite"
        let backend = try SQLiteStorageBackend(path: path)
        return try body(backend, path)
    }
}

/// The schema most tests use: an integer key and one column of each type.
let peopleSchema = CollectionSchema(
    name: "people",
    columns: [
        ColumnDefinition(name: "id", type: .integer, isNullable: false),
        ColumnDefinition(name: "name", type: .text, isNullable: false),
        ColumnDefinition(name: "score", type: .real),
        ColumnDefinition(name: "photo", type: .blob),
        ColumnDefinition(name: "extra", type: .untyped),
    ],
    primaryKey: "id"
)

extension BackendReadTransaction {
    /// All rows of a request, as arrays of values.
    func rows(_ request: ScanRequest) throws -> [[StorageValue]] {
        var rows: [[StorageValue]] = []
        try scan(request) { row in
            rows.append(request.columns.indices.map { row.value(at: $0) })
            return true
        }
        return rows
    }

    /// The values of one column, in primary-key order.
    func column(
        _ name: String,
        of collection: String,
        key: String = "id",
        where predicate: StoragePredicate? = nil
    ) throws
        -> [StorageValue]
    {
        try rows(
            ScanRequest(collection: collection, columns: [name], predicate: predicate, ordering: [.ascending(key)])
        )
        .map { $0[0] }
    }
}

extension BackendWriteTransaction {
    /// Puts rows through one writer.
    @discardableResult
    func put(_ rows: [[StorageValue]], into collection: String, columns: [String]) throws -> [StorageValue] {
        let writer = try makeWriter(for: collection, columns: columns)
        return try rows.map { try writer.put($0) }
    }
}

/// Whether `body` throws a `StorageError` with `code`.
func throwsStorageError(_ code: StorageError.Code, _ body: () throws -> Void) -> Bool {
    do {
        try body()
        return false
    } catch let error as StorageError {
        return error.code == code
    } catch {
        return false
    }
}

/// Runs the sqlite3 shell on `path` and returns what it prints.
func sqliteShell(_ path: String, _ sql: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = ["-readonly", path, sql]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}
