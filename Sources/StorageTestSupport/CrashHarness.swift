package import Foundation
package import Storage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the `StorageCrashWriter` executable against a store and kills it with SIGKILL part-way
/// through its stream of commits.
///
/// ```swift
/// let acknowledged = try CrashHarness.runAndKill(backend: "sqlite", path: path, batchSize: 20)
/// let store = try ObjectStore(backend: .sqlite(path: path))
/// try CrashWorkload.verify(store, batchSize: 20, acknowledged: acknowledged)
/// ```
package enum CrashHarness {
    /// The crash writer, built beside the test runner by `swift build` / `swift test`.
    package static var executable: URL {
        #if os(Linux)
        // The test runner is an executable in the build's products folder.
        let folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        #else
        // No /proc, and the process is Xcode's or SwiftPM's test runner, which loads the tests'
        // .xctest bundle from the products folder: the folder of the bundle holding this code (or,
        // in an executable, the executable's folder, which is `Bundle`'s URL then).
        var folder = Bundle(for: BundleMarker.self).bundleURL.resolvingSymlinksInPath()
        if folder.pathExtension == "xctest" { folder.deleteLastPathComponent() }
        #endif
        return folder.appendingPathComponent("StorageCrashWriter")
    }

    /// Starts the crash writer on the store at `path`, waits for its first acknowledged commit,
    /// lets it run for `delay` more microseconds, and kills it with SIGKILL.
    /// - Parameters:
    ///   - backend: the backend's name, as `DiskBackend` spells it.
    ///   - path: the store's path.
    ///   - batchSize: records per committed batch.
    ///   - delay: microseconds between the first acknowledged commit and the kill.
    /// - Returns: the last batch it acknowledged (0 if it acknowledged none).
    /// - Throws: `CrashWriterFailure` when the writer reported an error; the process's error when
    ///   it cannot be started.
    package static func runAndKill(
        backend: String,
        path: String,
        batchSize: Int,
        delay: Int
    ) throws -> Int64 {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--backend", backend, "--path", path, "--batch-size", String(batchSize)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let reader = output.fileHandleForReading
        var received = Data()
        // Wait for the first acknowledgement, so the store exists and commits are under way.
        while !received.contains(UInt8(ascii: "\n")) {
            let chunk = reader.availableData
            if chunk.isEmpty { break }  // the writer ended before its first commit
            received.append(chunk)
        }
        usleep(UInt32(max(0, delay)))
        kill(process.processIdentifier, SIGKILL)
        received.append(reader.readDataToEndOfFile())
        process.waitUntilExit()
        let lines = String(decoding: received, as: UTF8.self).split(separator: "\n")
        if let failure = lines.first(where: { $0.hasPrefix("error") }) {
            throw CrashWriterFailure(description: String(failure))
        }
        return lines.compactMap { $0.hasPrefix("ack ") ? Int64($0.dropFirst(4)) : nil }.max() ?? 0
    }
}

extension CrashHarness {
    /// Kills the crash writer `kills` times on the store at `path`, each time a random
    /// `0..<maximumDelay` microseconds after its first commit, and after each kill reopens the
    /// store with `open`, checks it with `CrashWorkload.verify`, and runs `afterEach`.
    ///
    /// ```swift
    /// let committed = try CrashHarness.killRepeatedly(backend: "sqlite", path: path) {
    ///     try ObjectStore(backend: .sqlite(path: $0))
    /// }
    /// ```
    /// - Parameters:
    ///   - backend: the backend's name, as `DiskBackend` spells it.
    ///   - path: the store's path.
    ///   - kills: how many times the writer is killed.
    ///   - batchSize: records per committed batch.
    ///   - maximumDelay: the longest wait, in microseconds, between the first commit and a kill.
    ///   - open: opens the store at a path, for the checks after each kill.
    ///   - afterEach: more checks after each kill.
    /// - Returns: the last batch committed.
    /// - Throws: `CrashCheckFailure` when a kill left the store in a state a committed, atomic,
    ///   durable store cannot be in, or when a run acknowledged no new batch.
    @discardableResult
    package static func killRepeatedly(
        backend: String,
        path: String,
        kills: Int = 20,
        batchSize: Int = 20,
        maximumDelay: Int = 20_000,
        open: (String) throws -> ObjectStore,
        afterEach: () throws -> Void = {}
    ) throws -> Int64 {
        // `Int.random(in:)` rather than a `SystemRandomNumberGenerator` passed `inout`: that
        // generator is zero-sized, and ThreadSanitizer faults on an inout access to one.
        var committed: Int64 = 0
        for kill in 1...kills {
            let delay = Int.random(in: 0..<max(1, maximumDelay))
            let acknowledged = try runAndKill(backend: backend, path: path, batchSize: batchSize, delay: delay)
            guard acknowledged > committed else {
                throw CrashCheckFailure("run \(kill) acknowledged no batch after \(committed)")
            }
            let store = try open(path)
            committed = try CrashWorkload.verify(store, batchSize: batchSize, acknowledged: acknowledged)
            try afterEach()
        }
        return committed
    }
}

/// The crash writer reported an error instead of committing.
package struct CrashWriterFailure: Error, CustomStringConvertible {
    /// The writer's error line.
    package let description: String
}

#if !os(Linux)
/// A class of this module, for `Bundle(for:)`: the bundle (or executable) it was linked into.
private final class BundleMarker {}
#endif
