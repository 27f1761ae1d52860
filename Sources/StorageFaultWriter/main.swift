// The child process of the fault-injection and durability-order tests: opens a store, saves one
// crash-test batch (see `CrashWorkload`) with the fault shim armed, reports how the save ended,
// then saves the next batch on the same store with the shim disarmed.
//
// Run under `LD_PRELOAD=faultshim.so` (scripts/faultshim/faultshim.c) it arms the shim only
// around the first save, so opening the store is never faulted. Without the shim it just saves.
// Each step is reported on its own line of standard output:
//
//     begin                      (the faulted save starts)
//     save ok | save error CODE MESSAGE | save threw MESSAGE (not a StorageError)
//     calls N failures F         (calls the shim counted and failed during the save)
//     next ok | next error CODE MESSAGE
//
// Usage: StorageFaultWriter --backend sqlite|lmdb|archive --path PATH [--batch-size N]
//            [--synchronous normal|full] [--pause] [--no-next]
//   --pause    waits for a line on standard input after the "calls" line, before the next save
import FileArchiveBackend
import Foundation
import LMDBBackend
import SQLiteBackend
import Storage
import StorageTestBackends
import StorageTestSupport

#if canImport(Glibc)
import Glibc
#endif

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// Writes a line to stdout at once (no buffering).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// A function of the preloaded fault shim, or `nil` when the shim is not loaded.
func shimFunction(_ name: String) -> (@convention(c) () -> Int)? {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) () -> Int).self)
}

func openStore(backend: DiskBackend, path: String) throws -> ObjectStore {
    switch (backend, option("--synchronous")) {
    case (.sqlite, "full"):
        try ObjectStore(backend: .sqlite(path: path, configuration: .init(synchronous: .full)))
    case (.sqlite, "normal"):
        try ObjectStore(backend: .sqlite(path: path, configuration: .init(synchronous: .normal)))
    default:
        try backend.openStore(path: path)
    }
}

/// Saves the batch after the store's tally, as the crash writer does.
func saveNextBatch(_ store: ObjectStore, batchSize: Int) throws {
    try CrashWorkload.run(on: store, batchSize: batchSize, limit: 1) { _ in }
}

func describe(_ error: any Error) -> String {
    if let error = error as? StorageError {
        return "error \(error.code) \(error.message.replacingOccurrences(of: "\n", with: " "))"
    }
    return "threw \(String(describing: error).replacingOccurrences(of: "\n", with: " "))"
}

guard let name = option("--backend"), let backend = DiskBackend(rawValue: name), let path = option("--path") else {
    say("usage: StorageFaultWriter --backend sqlite|lmdb|archive --path PATH [--batch-size N]")
    exit(2)
}
let batchSize = option("--batch-size").flatMap(Int.init) ?? 5
let store: ObjectStore
do {
    store = try openStore(backend: backend, path: path)
} catch {
    say("open \(describe(error))")
    exit(1)
}

say("begin")
shimFunction("faultshim_arm").map { _ = $0() }
let outcome: String
do {
    try saveNextBatch(store, batchSize: batchSize)
    outcome = "ok"
} catch {
    outcome = describe(error)
}
let calls = shimFunction("faultshim_disarm").map { $0() } ?? -1
let failures = shimFunction("faultshim_failures").map { $0() } ?? -1
say("save \(outcome)")
say("calls \(calls) failures \(failures)")

if CommandLine.arguments.contains("--pause") {
    // The parent looks at the store from another process, then sends a line.
    _ = readLine()
}

if !CommandLine.arguments.contains("--no-next") {
    do {
        try saveNextBatch(store, batchSize: batchSize)
        say("next ok")
    } catch {
        say("next \(describe(error))")
    }
}
