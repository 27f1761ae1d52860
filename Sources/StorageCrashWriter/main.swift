// The child process of the crash tests: commits numbered batches of records to a store and prints
// "ack N" after each commit returns, until it is killed. See `CrashHarness` and `CrashWorkload`.
//
// Usage: StorageCrashWriter --backend sqlite|lmdb|archive --path PATH [--batch-size N] [--batches N]
import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
}

/// Writes a line to stdout at once (no buffering), so an acknowledgement is out before the next
/// commit begins.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func openStore(backend name: String, path: String) throws -> ObjectStore {
    guard let backend = DiskBackend(rawValue: name) else { throw UsageError(description: "unknown backend \(name)") }
    return try backend.openStore(path: path)
}

do {
    guard let backend = option("--backend"), let path = option("--path") else {
        throw UsageError(description: "usage: StorageCrashWriter --backend NAME --path PATH")
    }
    let store = try openStore(backend: backend, path: path)
    try CrashWorkload.run(
        on: store,
        batchSize: option("--batch-size").flatMap(Int.init) ?? 20,
        limit: option("--batches").flatMap(Int.init)
    ) { batch in
        say("ack \(batch)")
    }
} catch {
    say("error \(error)")
    exit(1)
}
