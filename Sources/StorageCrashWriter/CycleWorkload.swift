import Foundation
import Storage

/// A small record read and written by the cycle workload.
struct CycleRecord: Codable {
    var id: Int64
    var text: String
}

/// Opens and closes a store many times in a process of its own, so that its file descriptor count
/// and resident memory are not disturbed by other tests running in parallel.
///
/// Each cycle opens the store, reads one record, writes one every `writeEvery` cycles (cycling
/// through 100 keys, so the data does not grow), and releases the store. The report lines are
/// `base fds=F`, before the first cycle; `warm fds=F rss=KIB`, after a tenth of the cycles;
/// `end fds=F rss=KIB cycles=N seconds=S`.
enum CycleWorkload {
    static func run(
        cycles: Int,
        writeEvery: Int,
        open: () throws -> ObjectStore,
        report: (String) -> Void
    ) throws {
        try open().save(CycleRecord(id: 0, text: "seed"))
        report("base fds=\(openDescriptors())")
        let warmUp = max(1, cycles / 10)
        let clock = ContinuousClock()
        let start = clock.now
        for cycle in 1...cycles {
            try oneCycle(cycle, writeEvery: writeEvery, open: open)
            if cycle == warmUp { report("warm fds=\(openDescriptors()) rss=\(residentKiB())") }
        }
        let seconds = (clock.now - start) / .seconds(1)
        report("end fds=\(openDescriptors()) rss=\(residentKiB()) cycles=\(cycles) seconds=\(seconds)")
    }

    private static func oneCycle(_ cycle: Int, writeEvery: Int, open: () throws -> ObjectStore) throws {
        let store = try open()
        guard try store.fetch(CycleRecord.self, id: 0)?.text == "seed" else {
            throw StorageError(.corrupt, "cycle \(cycle): the seed record is missing")
        }
        if writeEvery > 0 && cycle % writeEvery == 0 {
            let id = Int64(cycle % 100 + 1)
            try store.save(CycleRecord(id: id, text: "cycle \(cycle)"))
            guard try store.fetch(CycleRecord.self, id: id)?.text == "cycle \(cycle)" else {
                throw StorageError(.corrupt, "cycle \(cycle): the record just written reads back differently")
            }
        }
    }

    /// The process's open file descriptors.
    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// The process's resident memory in KiB (`VmRSS` in `/proc/self/status`).
    static func residentKiB() -> Int { statusKiB("VmRSS:") }

    /// A figure in KiB from `/proc/self/status` (`VmRSS:`, `VmHWM:`).
    static func statusKiB(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? -1
        }
        return -1
    }
}
