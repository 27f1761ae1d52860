import Foundation
import Storage

/// Ingests one CSV, NDJSON (`.ndjson`) or JSON array (`.json`) file into a fresh store and
/// reports the memory it took, for the tests that memory does not grow with the file (and the
/// figures in docs/BENCHMARKS.md): in a process of its own, so that no other test running at the
/// same time moves the figures.
///
/// Prints `csv rows=N rss=KIB peak=KIB seconds=S`: the records stored, the resident set before
/// the import, and the peak resident set (`VmHWM`) after it.
enum CSVWorkload {
    static func run(file: URL, open: () throws -> ObjectStore, report: (String) -> Void) throws {
        let store = try open()
        let before = CycleWorkload.statusKiB("VmRSS:")
        let start = ContinuousClock.now
        let rows: Int
        switch file.pathExtension {
        case "ndjson": rows = try store.insert(jsonLines: file, into: "ingested")
        case "json": rows = try store.insert(jsonArray: file, into: "ingested")
        default: rows = try store.insert(csv: file, into: "ingested")
        }
        let seconds = (ContinuousClock.now - start).components.seconds
        report("csv rows=\(rows) rss=\(before) peak=\(CycleWorkload.statusKiB("VmHWM:")) seconds=\(seconds)")
    }
}
