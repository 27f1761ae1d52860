import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The record the long copies move.
struct Member: Codable {
    var id: Int64
    var name: String
    var email: String
    var age: Int
    var score: Double
}

/// Fills a new SQLite store at `path` with `count` members, in transactions of 50,000.
func makeSource(_ path: String, count: Int) throws {
    let store = try DiskBackend.sqlite.openStore(path: path)
    defer { try? store.close() }
    var next = 0
    while next < count {
        let end = min(count, next + 50_000)
        try store.save(
            contentsOf: (next..<end).map {
                Member(
                    id: Int64($0),
                    name: "member \($0)",
                    email: "m\($0)@example.org",
                    age: $0 % 90,
                    score: Double($0) / 7
                )
            }
        )
        next = end
    }
}

/// What a process held at most: its resident set (`VmHWM`) and its anonymous resident memory
/// (`RssAnon`, sampled every 10 ms: the heap and stacks, without the file pages it maps).
struct MemoryPeak {
    var status: Int32 = 0
    var resident = 0
    var anonymous = 0
}

/// Runs `storage` with `arguments` in `directory`, sampling its memory until it exits.
func runMeasuringMemory(_ arguments: [String], in directory: URL) throws -> MemoryPeak {
    let output = directory.appendingPathComponent(".measured-\(UUID().uuidString)").path
    let pid = try StorageProcess.launch(StorageProcess.executable, arguments, in: directory, input: nil, output: output)
    var peak = MemoryPeak()
    var status: Int32 = 0
    while true {
        if let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard fields.count >= 2, let kilobytes = Int(fields[1]) else { continue }
                if fields[0] == "VmHWM:" { peak.resident = max(peak.resident, kilobytes * 1024) }
                if fields[0] == "RssAnon:" { peak.anonymous = max(peak.anonymous, kilobytes * 1024) }
            }
        }
        let waited = waitpid(pid, &status, WNOHANG)
        if waited == pid { break }
        if waited < 0 && errno != EINTR { break }
        usleep(10_000)
    }
    peak.status = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return peak
}

/// The size of the file at `path`, in bytes.
func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
}

@Suite("Long copies", .dedicatedThreads, .serialized)
struct LongCopyTests {
    /// The progress line appears on a terminal and is redrawn in place; with standard error in a
    /// file, only the summary is written.
    @Test func theProgressLineIsRedrawnOnATerminalAndOnlyTheSummaryGoesToAFile() throws {
        try TemporaryDirectory.with("storage-progress") { directory in
            try makeSource(directory.appendingPathComponent("source.sqlite").path, count: 20_000)
            let command = [StorageProcess.executable, "copy", "source.sqlite", "lmdb:tty.lmdb", "--batch-size", "20"]
                .joined(separator: " ")
            let terminal = try StorageProcess.spawn(
                "/usr/bin/script",
                ["-qfec", command, "/dev/null"],
                in: directory,
                input: nil
            )
            #expect(terminal.status == 0, "\(terminal.stdout)")
            let redraws = terminal.stdout.components(separatedBy: "\r\u{1B}[2K").filter { $0.contains("records/s") }
            #expect(redraws.count >= 2, "\(terminal.stdout.debugDescription)")
            #expect(redraws.contains { $0.hasPrefix("copying Member: ") && $0.contains("%") && $0.contains("left") })
            #expect(terminal.stdout.contains("copied 20,000 records in 1 collection"))

            let file = try StorageProcess.run(
                ["copy", "source.sqlite", "lmdb:file.lmdb", "--batch-size", "20"],
                in: directory
            )
            #expect(file.status == 0)
            #expect(!file.stderr.contains("\r"))
            #expect(!file.stderr.contains("records/s"))
            #expect(file.stderr.split(separator: "\n").count == 1)
            #expect(
                file.stderr.hasPrefix(
                    "copied 20,000 records in 1 collection from sqlite:source.sqlite to lmdb:file.lmdb, verified"
                )
            )
        }
    }

    /// On a terminal, every long command draws its progress line: an import of each format
    /// (both passes: the check of the input, then the storing with the percentage the first
    /// pass made known), a verification, and an export to a file.
    @Test func everyLongCommandShowsProgressOnATerminal() throws {
        try TemporaryDirectory.with("storage-import-progress") { directory in
            let count = 120_000
            var csv = "id,name,score\n"
            var lines = ""
            for id in 0..<count {
                csv += "\(id),name \(id),\(Double(id) / 8)\n"
                lines += "{\"id\": \(id), \"name\": \"name \(id)\", \"score\": \(Double(id) / 8)}\n"
            }
            try Data(csv.utf8).write(to: directory.appendingPathComponent("big.csv"))
            try Data(lines.utf8).write(to: directory.appendingPathComponent("big.ndjson"))
            let array = "[" + lines.split(separator: "\n").joined(separator: ",\n") + "]"
            try Data(array.utf8).write(to: directory.appendingPathComponent("big.json"))
            /// The progress lines `arguments` drew on a terminal.
            func redraws(_ arguments: [String]) throws -> [String] {
                let command = ([StorageProcess.executable] + arguments).joined(separator: " ")
                let run = try StorageProcess.spawn(
                    "/usr/bin/script",
                    ["-qfec", command, "/dev/null"],
                    in: directory,
                    input: nil
                )
                #expect(run.status == 0, "\(arguments): \(run.stdout)")
                return run.stdout.components(separatedBy: "\r\u{1B}[2K").filter { $0.contains("records/s") }
            }
            for file in ["big.csv", "big.ndjson", "big.json"] {
                let store = "sqlite:" + file.replacingOccurrences(of: ".", with: "-") + ".sqlite"
                let lines = try redraws(["import", store, "People", file])
                #expect(lines.contains { $0.hasPrefix("reading People: ") }, "\(file): \(lines)")
                #expect(
                    lines.contains { $0.hasPrefix("importing into People: ") && $0.contains("%") },
                    "\(file): \(lines)"
                )
            }
            #expect(
                try StorageProcess.run(
                    ["copy", "sqlite:big-csv.sqlite", "lmdb:copy.lmdb", "--no-verify"],
                    in: directory
                ).status == 0
            )
            let verifying = try redraws(["verify", "sqlite:big-csv.sqlite", "lmdb:copy.lmdb"])
            #expect(verifying.contains { $0.hasPrefix("verifying People: ") }, "\(verifying)")
            let exporting = try redraws(["export", "sqlite:big-ndjson.sqlite", "People", "--output", "out.json"])
            #expect(exporting.contains { $0.hasPrefix("exporting People: ") && $0.contains("%") }, "\(exporting)")
        }
    }

    /// A copy killed half way leaves a prefix of the records; the same copy with `--merge`
    /// completes it, and the stores verify.
    @Test func aCopyKilledHalfWayIsCompletedByCopyingAgainWithMerge() throws {
        try TemporaryDirectory.with("storage-kill") { directory in
            let total = 60_000
            try makeSource(directory.appendingPathComponent("source.sqlite").path, count: total)
            let pid = try StorageProcess.start(
                ["copy", "source.sqlite", "lmdb:destination.lmdb", "--batch-size", "50"],
                in: directory
            )
            // Wait until some batches are committed, then kill it.
            var copied = 0
            let deadline = ContinuousClock.now + .seconds(120)
            while copied == 0 && ContinuousClock.now < deadline {
                usleep(20_000)
                let info = try StorageProcess.run(["info", "destination.lmdb", "--json"], in: directory)
                guard info.status == 0, let object = try? info.json() as? [String: Any] else { continue }
                copied = ((object["collections"] as? [[String: Any]])?.first?["records"] as? Int) ?? 0
            }
            kill(pid, SIGKILL)
            let status = StorageProcess.wait(pid)
            #expect(status & 0x7f == SIGKILL, "the copy ended before it was killed")

            let destination = try DiskBackend.lmdb.openStore(
                path: directory.appendingPathComponent("destination.lmdb").path
            )
            let keys = try destination.fetchDictionaries(from: "Member", orderBy: [.ascending("id")]).map { $0["id"] }
            try destination.close()
            #expect(keys.count > 0 && keys.count < total, "\(keys.count) records at the kill")
            #expect(keys == (0..<keys.count).map { StorageValue.integer(Int64($0)) }, "not a prefix")

            let refused = try StorageProcess.run(["copy", "source.sqlite", "lmdb:destination.lmdb"], in: directory)
            #expect(refused.status == 1)
            let merged = try StorageProcess.run(
                ["copy", "source.sqlite", "lmdb:destination.lmdb", "--merge", "--json"],
                in: directory
            )
            #expect(merged.status == 0, "\(merged.stderr)")
            #expect((try merged.json() as? [String: Any])?["records"] as? Int == total)
            let verified = try StorageProcess.run(["verify", "source.sqlite", "destination.lmdb"], in: directory)
            #expect(verified.status == 0, "\(verified.stderr)")
        }
    }

    /// A large copy SQLite → LMDB (verification included) holds no more memory than a small one:
    /// its anonymous memory grows by less than 64 MB, and so does its resident set beyond the
    /// pages of LMDB's memory map of the destination file (LMDB reads and writes its file through
    /// that map, so the whole file becomes resident as verification reads it; those are file
    /// pages the kernel can drop, not memory the copy holds).
    ///
    /// 200,000 records by default, so that a debug build runs it in well under a minute, in
    /// batches of 2,000 so that a copy holding every record (about 30 MB of values at 200,000)
    /// would break the bound; `STORAGE_COPY_MEMORY_RECORDS=1000000` runs the million.
    /// (A release build copies a million with the default 10,000-record batches in about 8 s,
    /// its anonymous memory peaking 13 MB above a copy of 1,000; README, "Changing engines".)
    ///
    /// Not under a sanitizer (`.ci/run` sets `TSAN_OPTIONS` for its thread-sanitizer run): its
    /// shadow memory is anonymous memory too.
    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment["TSAN_OPTIONS"] == nil
                && ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil
        )
    )
    func aLargeCopyRunsInBoundedMemory() throws {
        let count = ProcessInfo.processInfo.environment["STORAGE_COPY_MEMORY_RECORDS"].flatMap(Int.init) ?? 200_000
        try TemporaryDirectory.with("storage-memory") { directory in
            try makeSource(directory.appendingPathComponent("small.sqlite").path, count: 1_000)
            try makeSource(directory.appendingPathComponent("large.sqlite").path, count: count)
            let batches = ["--batch-size", "2000"]
            let small = try runMeasuringMemory(["copy", "small.sqlite", "lmdb:small.lmdb"] + batches, in: directory)
            let large = try runMeasuringMemory(["copy", "large.sqlite", "lmdb:large.lmdb"] + batches, in: directory)
            #expect(small.status == 0 && large.status == 0)
            let mapped = fileSize(directory.appendingPathComponent("large.lmdb").path)
            let anonymousGrowth = large.anonymous - small.anonymous
            let residentGrowth = large.resident - small.resident - mapped
            let figures =
                "anonymous \(small.anonymous >> 20) → \(large.anonymous >> 20) MB, resident"
                + " \(small.resident >> 20) → \(large.resident >> 20) MB, LMDB file \(mapped >> 20) MB"
            // 64 MB for a million, in proportion for fewer (at least 16 MB).
            let bound = max(16 << 20, (64 << 20) / 1_000_000 * count)
            #expect(anonymousGrowth < bound, "\(figures)")
            print("memory of the copies: \(figures)")
            #expect(residentGrowth < 64 << 20, "\(figures)")
            let info = try StorageProcess.run(["info", "large.lmdb", "--json"], in: directory)
            let records = ((try info.json() as? [String: Any])?["collections"] as? [[String: Any]])?.first?["records"]
            #expect(records as? Int == count)
        }
    }
}
