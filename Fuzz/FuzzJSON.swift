// The libFuzzer entry point for the JSON ingest path: `ObjectStore.insert(jsonArray:into:)`
// (JSON parsing, the conversion of each value into a StorageValue, column type inference and
// widening, affinity) into an in-memory store, then reading the rows back. Not a SwiftPM target:
// scripts/fuzz-run.sh compiles it with InMemoryStorageBackend and `-sanitize=fuzzer,address`.
import Foundation
import Storage

/// The first byte picks the mode; the rest is JSON.
/// - 0: one batch, then every row is read back.
/// - 1: the input split at its first newline into two batches into the same collection (the
///   second meets the schema the first created: new columns, widened types, replaced keys).
/// - 2: as 0, through `insert(dictionaries:)` with the objects `JSONSerialization` made.
/// - 3: the streamed import of the text as a file (`insert(jsonArray: URL)`, whose reader
///   splits the array and hands each element to `JSONSerialization`) beside the import of the
///   same text in memory: both store the same rows, or both refuse.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let mode = Int(data[0]) % 4
    let body = Data(bytes: data + 1, count: size - 1)
    let store = ObjectStore(backend: InMemoryStorageBackend())
    if mode == 3 {
        compareStreamed(body, in: store)
        return 0
    }
    var batches: [Data] = [body]
    if mode == 1, let newline = body.firstIndex(of: UInt8(ascii: "\n")) {
        batches = [body[..<newline], body[(newline + 1)...]].map { Data($0) }
    }
    // Keys are counted with the stores' own key equality: 2 and 2.0 name one record.
    var keys = Set<StorageKey>()
    for batch in batches {
        do {
            if mode == 2 {
                guard let rows = try? JSONSerialization.jsonObject(with: batch) as? [[String: Any]] else { continue }
                keys.formUnion(try store.insert(dictionaries: rows, into: "fuzz").map(StorageKey.init))
            } else {
                keys.formUnion(try store.insert(jsonArray: batch, into: "fuzz").map(StorageKey.init))
            }
        } catch is StorageError {
            // Refused input is fine; only a crash, a leak or an overflow is a finding.
        } catch {
            fatalError("insert threw an error that is not a StorageError: \(error)")
        }
    }
    do {
        let rows = try store.fetchDictionaries(from: "fuzz")
        // Every key the inserts returned is one stored row (a repeated key replaces the row).
        if rows.count != keys.count {
            fatalError("\(keys.count) distinct keys were returned, but \(rows.count) rows are stored")
        }
    } catch {
        fatalError("reading back what was stored failed: \(error)")
    }
    return 0
}

/// Mode 3: `body` imported from memory and streamed from a file must agree.
func compareStreamed(_ body: Data, in store: ObjectStore) {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-json-\(getpid()).json")
    defer { try? FileManager.default.removeItem(at: file) }
    do {
        try body.write(to: file)
    } catch {
        fatalError("cannot write \(file.path): \(error)")
    }
    func rows(_ collection: String, _ body: () throws -> Int) -> [[String: StorageValue]]? {
        do {
            _ = try body()
            return try store.fetchDictionaries(from: collection, orderBy: [])
        } catch is StorageError {
            return nil
        } catch {
            fatalError("insert threw an error that is not a StorageError: \(error)")
        }
    }
    let whole = rows("whole") { try store.insert(jsonArray: body, into: "whole") }
    let streamed = rows("streamed") { try store.insert(jsonArray: file, into: "streamed") }
    if (whole == nil) != (streamed == nil) {
        let memory = whole == nil ? "refused" : "stored"
        fatalError("in memory: \(memory); streamed: \(streamed == nil ? "refused" : "stored")")
    }
    if let whole, let streamed, whole.count != streamed.count {
        fatalError("\(whole.count) rows stored from memory, \(streamed.count) streamed")
    }
}

/// With `FUZZ_SEEDS=folder` set, writes a starting corpus there, then lets the run go on.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
)
    -> CInt
{
    guard let folder = ProcessInfo.processInfo.environment["FUZZ_SEEDS"] else { return 0 }
    let seeds: [(UInt8, String)] = [
        (0, #"[{"id": 1, "name": "Ann", "age": 31, "score": 1.5, "tags": ["a", "b"], "extra": null}]"#),
        (0, #"[{"name": "no id", "nested": {"x": [1, 2.5, true]}}, {"name": "second", "flag": false}]"#),
        (0, #"[{"id": "text key", "big": 18446744073709551615, "neg": -9223372036854775808, "e": 1e308}]"#),
        (1, "[{\"id\": 1, \"v\": 1}, {\"id\": 2, \"v\": 2}]\n[{\"id\": 1, \"v\": 2.5, \"w\": \"new\"}]"),
        // 2 and 2.0 are one key: the second batch replaces the row, so one key is returned twice.
        (1, "[{\"id\": 2, \"v\": 1}, {\"id\": 1}]\n[{\"id\": 2.0}]"),
        (2, #"[{"id": 7, "u": "\u00e9\u0000x", "list": [], "obj": {}}]"#),
        (3, "[{\"id\": 1, \"v\": [1, {\"w\": \"]\\\"\"}]},\n {\"id\": 2, \"v\": 2.5},]"),
        (3, #"[{"a": 1}, {"b": "x"}, {"a": "text now"}]"#),
    ]
    for (index, (mode, text)) in seeds.enumerated() {
        _ = FileManager.default.createFile(atPath: folder + "/seed-\(index)", contents: Data([mode] + Array(text.utf8)))
    }
    return 0
}
