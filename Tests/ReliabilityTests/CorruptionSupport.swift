import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The records a damaged store is built with; each one is a function of its id, so a reader
/// knows what every record should be without the original store.
struct CorruptionRecord: StorableModel, Equatable {
    static let collectionName = "damage"
    static let indexes = [IndexDefinition(["tag"])]

    var id: Int64
    var tag: String
    var score: Double
    var payload: Data
    var note: String

    static let count: Int64 = 400

    static func expected(_ id: Int64) -> CorruptionRecord {
        var generator = SeededGenerator(seed: UInt64(id))
        let payload = Data((0..<600).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return CorruptionRecord(
            id: id,
            tag: "t\(id % 7)",
            score: Double(id) * 1.5,
            payload: payload,
            note: String(repeating: "record \(id) ", count: 12)
        )
    }

    static var all: [CorruptionRecord] { (1...count).map(expected) }
}

/// One kind of damage done to a copy of a store.
enum CorruptionDamage: CustomStringConvertible {
    /// Bytes flipped in about 1% of the store's 4096-byte pages (at least one page), chosen
    /// with the seed: 1 to 4 bytes per page, each XORed with a non-zero byte.
    case flip(seed: UInt64)
    /// A store file cut to `length` bytes.
    case truncate(file: String, length: Int)

    static let pageSize = 4096

    var description: String {
        switch self {
        case .flip(let seed): "flip(seed \(seed))"
        case .truncate(let file, let length): "truncate(\(file) to \(length))"
        }
    }

    /// Applies the damage to the store files under `directory`.
    /// - Returns: what was changed, for the report.
    @discardableResult
    func apply(in directory: URL) throws -> String {
        switch self {
        case .flip(let seed):
            var generator = SeededGenerator(seed: seed)
            let files = try CorruptionFiles.list(in: directory)
            var pages: [(file: String, page: Int, size: Int)] = []
            for file in files {
                let size = try CorruptionFiles.size(directory.appendingPathComponent(file).path)
                for page in 0..<(size + Self.pageSize - 1) / Self.pageSize { pages.append((file, page, size)) }
            }
            let damaged = max(1, (pages.count + 50) / 100)
            var changes: [String] = []
            for chosen in pages.shuffled(using: &generator).prefix(damaged) {
                let path = directory.appendingPathComponent(chosen.file).path
                guard let handle = FileHandle(forUpdatingAtPath: path) else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
                }
                defer { try? handle.close() }
                let start = chosen.page * Self.pageSize
                let end = min(chosen.size, start + Self.pageSize)
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let offset = Int.random(in: start..<end, using: &generator)
                    try handle.seek(toOffset: UInt64(offset))
                    let old = try handle.read(upToCount: 1)?.first ?? 0
                    try handle.seek(toOffset: UInt64(offset))
                    try handle.write(contentsOf: [old ^ UInt8.random(in: 1...255, using: &generator)])
                    changes.append("\(chosen.file)@\(offset)")
                }
            }
            return changes.joined(separator: " ")
        case .truncate(let file, let length):
            let path = directory.appendingPathComponent(file).path
            guard Glibc.truncate(path, off_t(length)) == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
            return "\(file) cut to \(length) bytes"
        }
    }
}

/// The regular files of a store copy.
enum CorruptionFiles {
    /// Every regular file under `directory`, as relative paths, sorted.
    static func list(in directory: URL) throws -> [String] {
        var result: [String] = []
        guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        while let relative = walker.nextObject() as? String {
            let attributes = try FileManager.default.attributesOfItem(
                atPath: directory.appendingPathComponent(relative).path
            )
            if attributes[.type] as? FileAttributeType == .typeRegular { result.append(relative) }
        }
        return result.sorted()
    }

    static func size(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    /// Copies the folder `source` to `destination` (which must not exist).
    static func copy(_ source: URL, to destination: URL) throws {
        try FileManager.default.copyItem(at: source, to: destination)
    }
}

/// What reading a damaged store gave: how many reads returned the right data, how many a
/// `StorageError` saying the store is damaged, how many another `StorageError`, how many wrong
/// data without an error, and how many an error that is not a `StorageError`.
struct CorruptionTally: Equatable {
    var correct = 0
    var detected = 0
    var typed = 0
    var wrong = 0
    var untyped = 0
    /// How many of the `detected` errors name the damaged file or store (`StorageError.path`).
    var named = 0
    /// The error codes seen, and one example of each kind of problem.
    var codes: Set<String> = []
    var notes: [String] = []

    /// The codes that say the store is damaged (for a file that cannot be read or opened, the
    /// error names the file).
    static let damageCodes: Set<StorageError.Code> = [.corrupt, .io, .cannotOpen]

    mutating func add(_ other: CorruptionTally) {
        correct += other.correct
        detected += other.detected
        typed += other.typed
        wrong += other.wrong
        untyped += other.untyped
        named += other.named
        codes.formUnion(other.codes)
        for text in other.notes { note(text) }
    }

    mutating func note(_ text: String) {
        if notes.count < 3 { notes.append(text) }
    }

    /// Runs one read: `body` returns whether the data was right.
    mutating func read(_ what: String, _ body: () throws -> Bool) {
        do {
            if try body() {
                correct += 1
            } else {
                wrong += 1
                note("wrong data: \(what)")
            }
        } catch let error as StorageError {
            codes.insert(error.code.rawValue)
            if Self.damageCodes.contains(error.code) {
                detected += 1
                if error.path != nil { named += 1 }
            } else {
                typed += 1
                note("\(what): \(error.code)")
            }
        } catch {
            untyped += 1
            note("\(what): not a StorageError: \(error)")
        }
    }

    /// One line: `correct=1 detected=2 typed=0 wrong=0 untyped=0 codes=corrupt note=...`.
    var line: String {
        let fields = [
            "correct=\(correct)", "detected=\(detected)", "typed=\(typed)", "wrong=\(wrong)",
            "untyped=\(untyped)", "named=\(named)", "codes=\(codes.sorted().joined(separator: ","))",
        ]
        let note = notes.joined(separator: " | ").replacingOccurrences(of: "\n", with: " ")
        return fields.joined(separator: " ") + " note=" + note
    }

    init() {}

    /// Parses `line`.
    init?(line: Substring) {
        var fields: [Substring: Substring] = [:]
        let (head, note) =
            line.firstRange(of: " note=").map { (line[..<$0.lowerBound], line[$0.upperBound...]) }
            ?? (line, "")
        for field in head.split(separator: " ") {
            let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard let correct = fields["correct"].flatMap({ Int($0) }),
            let detected = fields["detected"].flatMap({ Int($0) }),
            let typed = fields["typed"].flatMap({ Int($0) }), let wrong = fields["wrong"].flatMap({ Int($0) }),
            let untyped = fields["untyped"].flatMap({ Int($0) })
        else { return nil }
        self.correct = correct
        self.detected = detected
        self.typed = typed
        self.wrong = wrong
        self.untyped = untyped
        named = fields["named"].flatMap { Int($0) } ?? 0
        codes = Set((fields["codes"] ?? "").split(separator: ",").map(String.init))
        notes = note.isEmpty ? [] : [String(note)]
    }
}

/// Opens a damaged store and reads everything in it, every way: a scan, each record by key, an
/// index query, a count.
enum CorruptionReader {
    static func readEverything(_ backend: DiskBackend, path: String) -> CorruptionTally {
        var tally = CorruptionTally()
        var store: ObjectStore?
        tally.read("open") {
            store = try backend.openStore(path: path)
            return true
        }
        guard let store else { return tally }
        let all = CorruptionRecord.all
        var differences: [String] = []
        tally.read("scan") {
            let found = try store.fetchAll(CorruptionRecord.self)
            if found != all { differences.append("scan: \(difference(found, all))") }
            return found == all
        }
        for expected in all {
            tally.read("record \(expected.id)") { try store.fetch(CorruptionRecord.self, id: expected.id) == expected }
        }
        tally.read("index query") {
            let found = try store.fetchAll(CorruptionRecord.self, where: Column("tag") == "t3")
            let wanted = all.filter { $0.tag == "t3" }
            if found != wanted { differences.append("index query: \(difference(found, wanted))") }
            return found == wanted
        }
        tally.read("count") { try store.count(CorruptionRecord.self) == all.count }
        for text in differences { tally.note(text) }
        return tally
    }

    private static func difference(_ found: [CorruptionRecord], _ expected: [CorruptionRecord]) -> String {
        let wanted = Dictionary(uniqueKeysWithValues: expected.map { ($0.id, $0) })
        let changed = found.filter { wanted[$0.id] != nil && wanted[$0.id] != $0 }.count
        let foreign = found.filter { wanted[$0.id] == nil }.count
        let ids = Set(found.map(\.id))
        let missing = expected.filter { !ids.contains($0.id) }.count
        return "\(found.count) records: \(changed) changed, \(missing) missing, \(foreign) not written"
    }
}

/// Runs the reads of many damaged stores in child processes (the test runner itself, filtered
/// to `CorruptionTests.childEntry`), so that a store that crashes an engine cannot take the test
/// run down: a case whose child dies is counted as a crash, and a new child goes on with the
/// next case.
enum CorruptionChild {
    /// The plan a child runs: one case a line, `backend<TAB>store path`.
    static let planVariable = "STORAGE_CORRUPTION_PLAN"
    static let firstVariable = "STORAGE_CORRUPTION_FIRST"

    static var planPath: String? { ProcessInfo.processInfo.environment[planVariable] }
    /// How long one child may run (it reads many stores) before it is killed.
    static let timeoutSeconds = 600

    /// In the child: runs the plan from the first case asked for, printing
    /// `corruption-start <i>` before and `corruption-result <i> <tally>` after each case.
    static func runPlan() throws {
        guard let planPath else { return }
        let first = Int(ProcessInfo.processInfo.environment[firstVariable] ?? "0") ?? 0
        let lines = try String(contentsOfFile: planPath, encoding: .utf8).split(separator: "\n")
        for (index, line) in lines.enumerated() where index >= first {
            let parts = line.split(separator: "\t", maxSplits: 1)
            guard parts.count == 2, let backend = DiskBackend(rawValue: String(parts[0])) else { continue }
            emit("corruption-start \(index)")
            let tally = CorruptionReader.readEverything(backend, path: String(parts[1]))
            emit("corruption-result \(index) \(tally.line)")
        }
    }

    private static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// The outcome of one case: its tally, or how the child ended while reading it and the
    /// frame it crashed in.
    enum Outcome {
        case read(CorruptionTally)
        case crashed(report: String, frame: String)
    }

    /// The innermost frame of the crash report in a child's standard error: AddressSanitizer's
    /// `#0` line, or the first frame of the Swift backtracer's crashed thread.
    static func crashFrame(in report: String) -> String {
        let lines = report.split(separator: "\n")
        if let frame = lines.first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("#0 ") }) {
            return frame.trimmingCharacters(in: .whitespaces)
        }
        if let crashed = lines.firstIndex(where: { $0.hasSuffix(" crashed:") }), crashed + 1 < lines.count {
            return lines[crashed + 1].trimmingCharacters(in: .whitespaces)
        }
        return "unknown"
    }

    /// In the parent: runs every case of `cases` (backend and store path), a child at a time,
    /// starting a new child after one dies.
    static func run(_ cases: [(DiskBackend, String)], in directory: URL) throws -> [Outcome?] {
        let plan = directory.appendingPathComponent("plan.txt")
        try cases.map { "\($0.0.rawValue)\t\($0.1)" }.joined(separator: "\n")
            .write(to: plan, atomically: true, encoding: .utf8)
        var outcomes = [Outcome?](repeating: nil, count: cases.count)
        var next = 0
        var attempt = 0
        while next < cases.count {
            attempt += 1
            let errors = directory.appendingPathComponent("child-\(attempt).stderr")
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            process.arguments = ["--testing-library", "swift-testing", "--filter", "CorruptionTests/childEntry"]
            var environment = ProcessInfo.processInfo.environment
            environment[planVariable] = plan.path
            environment[firstVariable] = String(next)
            // A crash report names the frame the child died in (under AddressSanitizer, its own
            // report does).
            environment["SWIFT_BACKTRACE"] =
                "enable=yes,interactive=no,color=no,threads=crashed,registers=none,images=none,output-to=stderr"
            process.environment = environment
            let output = Pipe()
            process.standardOutput = output
            process.standardError = try FileHandle(forWritingTo: errors)
            try process.run()
            // A child that hangs on a damaged store is killed, and counted as a crash.
            let pid = process.processIdentifier
            let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(timeoutSeconds), execute: watchdog)
            let data = output.fileHandleForReading.readDataToEndOfFile()
            watchdog.cancel()
            process.waitUntilExit()
            var started: Int?
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                if line.hasPrefix("corruption-start "), let index = Int(line.dropFirst(17)) {
                    started = index
                } else if line.hasPrefix("corruption-result ") {
                    let rest = line.dropFirst(18)
                    guard let space = rest.firstIndex(of: " "), let index = Int(rest[..<space]),
                        let tally = CorruptionTally(line: rest[rest.index(after: space)...])
                    else { continue }
                    outcomes[index] = .read(tally)
                    next = index + 1
                    started = nil
                }
            }
            if let started {
                let report = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
                let summary = report.split(separator: "\n").filter {
                    $0.contains("ERROR") || $0.contains("SUMMARY") || $0.contains("Fatal") || $0.contains("crashed")
                }
                let ending = process.terminationReason == .uncaughtSignal ? "signal" : "exit status"
                outcomes[started] = .crashed(
                    report: "child ended (\(ending) \(process.terminationStatus)): "
                        + summary.prefix(3).joined(separator: " / "),
                    frame: crashFrame(in: report)
                )
                next = started + 1
            } else if next < cases.count {
                // The child ended between cases without reporting the next one: it could not
                // run at all; stop instead of looping.
                let report = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
                throw StorageError(.engine, "the corruption child stopped at case \(next): \(report.suffix(2000))")
            }
        }
        return outcomes
    }
}
