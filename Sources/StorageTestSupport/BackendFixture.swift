public import Foundation
public import Storage

/// One backend the conformance suite runs against: a name and a way to open (or reopen) a store
/// in a folder.
public struct BackendFixture: Sendable, CustomStringConvertible {
    /// The backend's name, shown in test results.
    public let name: String
    private let open: @Sendable (URL) throws -> ObjectStore

    /// Creates a fixture.
    /// - Parameters:
    ///   - name: the backend's name.
    ///   - open: opens the store kept in the given folder; called again with the same folder, it
    ///     must give back the same data (a reopen).
    public init(_ name: String, open: @escaping @Sendable (URL) throws -> ObjectStore) {
        self.name = name
        self.open = open
    }

    /// The fixture's name, as test reports show it.
    public var description: String { name }

    /// Opens (or reopens) the store kept in `directory`.
    /// - Parameter directory: the test's folder, where the store's files go.
    /// - Returns: a store over the fixture's backend.
    /// - Throws: what opening the backend throws (a `StorageError`).
    public func openStore(in directory: URL) throws -> ObjectStore {
        try open(directory)
    }

    /// The pure-Swift in-memory backend; reopening the same folder gives the same data.
    public static let inMemory = BackendFixture("memory") { directory in
        ObjectStore(backend: InMemoryStorageBackend.named(directory.path))
    }
}

/// A fresh temporary folder for one test, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    /// The folder.
    public let url: URL

    /// Creates a new empty folder under the system's temporary directory.
    /// - Parameter label: the start of the folder's name.
    /// - Throws: the file manager's error when the folder cannot be created.
    public init(_ label: String = "storage-test") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Deletes the folder and everything in it, and forgets in-memory stores opened for it.
    public func remove() {
        InMemoryStorageBackend.remove(named: url.path)
        try? FileManager.default.removeItem(at: url)
    }

    /// Runs `body` with a fresh folder and removes it afterwards.
    /// - Parameters:
    ///   - label: the start of the folder's name.
    ///   - body: the work, given the folder's URL.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, or the file manager's error when the folder cannot be created.
    public static func with<R>(_ label: String = "storage-test", _ body: (URL) throws -> R) throws -> R {
        let directory = try TemporaryDirectory(label)
        defer { directory.remove() }
        return try body(directory.url)
    }
}
