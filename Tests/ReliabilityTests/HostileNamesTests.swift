import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Item 8 of docs/RELIABILITY.md, the part about store paths and symbolic links. (Hostile
/// collection and column names, keys and JSON are in the conformance suite,
/// `ConformanceSuite+HostileInput.swift`, which runs on every backend.)
@Suite(.dedicatedThreads) struct HostileNamesTests {
    struct Item: Codable, Equatable {
        var id: Int64
        var text: String
    }

    static let item = Item(id: 7, text: "payload")

    /// Store names that are legal file names but mean something to a shell, a format string, a
    /// URL, SQLite (`:memory:`, `file:` URIs) or a text protocol.
    static let oddNames = [
        "new\nline", "quo\"te's", "100%25%s%n%x", "ünïcödé-名前-😀", "file:x?mode=memory", ":memory:", " lead space",
        "-dash", "semi;colon$(echo x)`y`", "back\\slash", "tab\there", String(repeating: "n", count: 200),
    ]

    /// A store at each odd name opens, keeps a record across a reopen, and creates its files under
    /// exactly that name in the folder it was given, nowhere else.
    @Test(arguments: DiskBackend.allCases)
    func oddStoreNamesWorkAndStayInTheirFolder(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("hostile-names-\(backend)") { directory in
            for name in Self.oddNames {
                let path = directory.appendingPathComponent(name).path
                try backend.openStore(path: path).save(Self.item)
                #expect(
                    try backend.openStore(path: path).fetch(Item.self, id: 7) == Self.item,
                    "\(name.debugDescription)"
                )
            }
            let entries = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            for entry in entries {
                #expect(Self.oddNames.contains { entry.hasPrefix($0) }, "unexpected file \(entry.debugDescription)")
            }
            for name in Self.oddNames {
                #expect(entries.contains(name), "no store at \(name.debugDescription)")
            }
        }
    }

    /// A path with a NUL byte names a different, shorter path for the C library (it ends at the
    /// NUL); the store refuses it instead of opening the shorter one.
    @Test(arguments: DiskBackend.allCases)
    func aPathWithANulByteIsRefused(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("hostile-nul-\(backend)") { directory in
            // Joined by hand: `appendingPathComponent` would percent-encode the NUL.
            let path = directory.path + "/store\0.evil"
            #expect(Self.roundTrip(backend, path: path) == "StorageError cannotOpen")
            let entries = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(entries.isEmpty, "created \(entries)")
        }
    }

    /// Names at and beyond the file system's 255-byte limit (the engines add `-wal`, `-shm`,
    /// `-lock` to the name), and paths beyond `PATH_MAX`: each either works completely or fails
    /// with a `StorageError`, never a trap.
    @Test(arguments: DiskBackend.allCases)
    func longNamesWorkOrFailWithAStorageError(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("hostile-long-\(backend)") { directory in
            var outcomes: [Int: String] = [:]
            for length in [240, 250, 251, 252, 253, 254, 255, 256, 300] {
                let name = String(repeating: "L", count: length - 3) + "\(length)"
                let path = directory.appendingPathComponent(name).path
                outcomes[length] = Self.roundTrip(backend, path: path)
            }
            let deep = directory.path + String(repeating: "/deeper", count: 700)
            outcomes[deep.utf8.count] = Self.roundTrip(backend, path: deep)
            for (length, outcome) in outcomes.sorted(by: { $0.key < $1.key }) {
                #expect(outcome == "ok" || outcome.hasPrefix("StorageError"), "\(length) bytes: \(outcome)")
            }
            #expect(outcomes[256] != "ok" && outcomes[300] != "ok" && outcomes[deep.utf8.count] != "ok")
            #expect(outcomes[240] == "ok")
        }
    }

    /// Saves, reopens and reads back; "ok", or the error's description.
    static func roundTrip(_ backend: DiskBackend, path: String) -> String {
        do {
            try backend.openStore(path: path).save(item)
            guard try backend.openStore(path: path).fetch(Item.self, id: 7) == item else { return "lost the record" }
            return "ok"
        } catch let error as StorageError {
            return "StorageError \(error.code)"
        } catch {
            return "not a StorageError: \(error)"
        }
    }

    /// A relative path with `..` in it, resolved against the working directory of the process
    /// that opens the store. (A child process of its own: the test runner's tests share one
    /// working directory, and one of them changes it.)
    @Test(arguments: DiskBackend.allCases)
    func aRelativePathWithDotDotNamesTheStoreItResolvesTo(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("hostile-relative-\(backend)") { directory in
            let work = directory.appendingPathComponent("work")
            let other = directory.appendingPathComponent("other")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
            let process = Process()
            process.executableURL = CrashHarness.executable
            process.currentDirectoryURL = work
            process.arguments = ["--backend", backend.rawValue, "--path", "../other/./rel.store", "--batches", "2"]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: work.path).isEmpty)
            let store = try backend.openStore(path: other.appendingPathComponent("rel.store").path)
            #expect(try CrashWorkload.verify(store, batchSize: 20, acknowledged: 2) == 2)
        }
    }

    // MARK: Symbolic links planted in a store

    /// A planted symbolic link: where it sits in the store, relative to the store path.
    struct Plant: Sendable, CustomStringConvertible {
        let backend: DiskBackend
        /// Appended to the store path (`-wal`) or inside the store folder (`/lock`).
        let suffix: String
        /// Whether the link points at a folder (else a file).
        let isFolder: Bool
        /// Whether the store exists (with a record) before the link is planted.
        let afterCreation: Bool

        var description: String { "\(backend) \(suffix)\(afterCreation ? " (existing store)" : "")" }
    }

    static let plants: [Plant] = [
        Plant(backend: .sqlite, suffix: "", isFolder: false, afterCreation: false),
        Plant(backend: .sqlite, suffix: "-wal", isFolder: false, afterCreation: false),
        Plant(backend: .sqlite, suffix: "-wal", isFolder: false, afterCreation: true),
        Plant(backend: .sqlite, suffix: "-shm", isFolder: false, afterCreation: false),
        Plant(backend: .sqlite, suffix: "-shm", isFolder: false, afterCreation: true),
        Plant(backend: .sqlite, suffix: "-journal", isFolder: false, afterCreation: false),
        Plant(backend: .sqlite, suffix: "-journal", isFolder: false, afterCreation: true),
        Plant(backend: .lmdb, suffix: "", isFolder: false, afterCreation: false),
        Plant(backend: .lmdb, suffix: "-lock", isFolder: false, afterCreation: false),
        Plant(backend: .lmdb, suffix: "-lock", isFolder: false, afterCreation: true),
        Plant(backend: .archive, suffix: "", isFolder: true, afterCreation: false),
        Plant(backend: .archive, suffix: "/lock", isFolder: false, afterCreation: true),
        Plant(backend: .archive, suffix: "/journal", isFolder: false, afterCreation: true),
        Plant(backend: .archive, suffix: "/c-item", isFolder: true, afterCreation: false),
        Plant(backend: .archive, suffix: "/c-item", isFolder: true, afterCreation: true),
        Plant(backend: .archive, suffix: "/c-item/0100000000000000ff", isFolder: false, afterCreation: true),
        Plant(backend: .archive, suffix: "/c-item/010000000000000007", isFolder: false, afterCreation: true),
        Plant(backend: .archive, suffix: "/c-item/schema", isFolder: false, afterCreation: true),
    ]

    /// A symbolic link planted where the store keeps a file or a folder, pointing outside the
    /// store at a file or a folder of someone else's: using the store either fails with a
    /// `StorageError` or works without following the link; the target is never changed.
    ///
    /// The outside targets are worth following: a folder target is a copy of a real collection
    /// folder (with its schema and a record), a file target a copy of a real file of the same
    /// role where there is one (an SQLite database, an archive record), so that an engine that
    /// followed the link would read it as its own and write into it.
    @Test(arguments: plants)
    func plantedSymbolicLinksAreNotFollowed(_ plant: Plant) throws {
        try TemporaryDirectory.with("hostile-symlink") { directory in
            let backend = plant.backend
            let path = backend.storePath(in: directory)
            let outside = directory.appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            let target = try Self.makeTarget(
                for: plant,
                in: outside,
                scratch: directory.appendingPathComponent("donor")
            )
            if plant.afterCreation {
                try backend.openStore(path: path).save(Self.item)
            } else if plant.suffix.hasPrefix("/") {
                _ = try backend.openStore(path: path)  // the store folder, empty
            }
            let link = path + plant.suffix
            if plant.afterCreation || FileManager.default.fileExists(atPath: link) {
                try? FileManager.default.removeItem(atPath: link)
            }
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target.path)
            let before = try Self.snapshot(outside)

            var failure: (any Error)?
            do {
                let store = try backend.openStore(path: path)
                try store.save(Item(id: 8, text: "written through the store"))
                _ = try store.fetchAll(Item.self)
                try store.save(contentsOf: (100..<140).map { Item(id: $0, text: "batch") })
                _ = try store.delete(Item.self, id: 7)
            } catch {
                failure = error
            }
            if let failure { #expect(failure is StorageError, "\(failure)") }
            if let refusal = failure as? StorageError {
                #expect(refusal.path != nil, "a refusal names the store's file: \(refusal)")
            }
            print("symlink \(plant): \(failure.map { "refused: \($0)" } ?? "works without following the link")")
            #expect(try Self.snapshot(outside) == before, "the target outside the store changed")
        }
    }

    /// The target of a planted link, inside `outside`: a copy of a real file or folder of the
    /// role the link stands in for, made by a donor store in `scratch`, or plain bytes.
    static func makeTarget(for plant: Plant, in outside: URL, scratch: URL) throws -> URL {
        let target = outside.appendingPathComponent("target")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let donorPath = plant.backend.storePath(in: scratch)
        let donor = try plant.backend.openStore(path: donorPath)
        try donor.save(Item(id: 255, text: "someone else's"))
        try donor.save(Item(id: 7, text: "someone else's"))
        let source: String? =
            switch (plant.backend, plant.suffix) {
            case (_, ""): donorPath
            case (.archive, "/c-item"): donorPath + "/c-item"
            case (.archive, let suffix) where suffix.hasPrefix("/c-item/"): donorPath + suffix
            default: nil
            }
        if let source {
            try FileManager.default.copyItem(atPath: source, toPath: target.path)
        } else {
            try Data("outside file: not the store's\n".utf8).write(to: target)
        }
        return target
    }

    /// Every file under `folder` with its bytes, and every folder (as empty data).
    static func snapshot(_ folder: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        while let name = enumerator?.nextObject() as? String {
            let path = folder.appendingPathComponent(name).path
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
            result[name] = isFolder.boolValue ? Data() : try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return result
    }
}
