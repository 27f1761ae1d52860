import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--cli-import`: the release `storage import` command run as a child process on generated
/// files of `rows` people (CSV, NDJSON, a JSON array), into a new store of each backend, beside
/// the `sqlite3` shell importing the same file into a typed table: wall time as rows/s, and each
/// child's peak resident set (`wait4`'s `ru_maxrss`).
enum CLIImportBenchmarks {
    /// The formats measured, as `storage import --format` names them, with their file names.
    static let formats = ["csv", "ndjson", "json"]

    /// What each format's `sqlite3` baseline runs.
    static let baselines: [String: String] = [
        "csv": "sqlite3 shell, .import --csv into a typed table",
        "ndjson": "sqlite3 shell, .import of the lines into a temp table, INSERT … SELECT line->>'key'",
        "json": "sqlite3 shell, INSERT … SELECT value->>'key' FROM json_each(readfile(…))",
    ]

    static let table = """
        CREATE TABLE Person (id INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, email TEXT,
        age INTEGER, height REAL, score REAL, isActive INTEGER, createdAt REAL, avatar TEXT)
        """

    static let keys = [
        "id", "firstName", "lastName", "email", "age", "height", "score", "isActive", "createdAt", "avatar",
    ]

    /// One child process's run.
    struct ChildRun {
        var seconds: Double
        /// The child's peak resident set, in bytes.
        var peakBytes: Int
        var output: Data
    }

    /// Generates the files, runs every import (`backends` of "sqlite" and "lmdb", `formats` of
    /// the three) once, and records a figure for each.
    static func run(
        _ harness: inout Harness,
        rows: Int,
        backends: [String],
        formats: [String],
        storage: String,
        sqlite3: String,
        directory: URL
    ) throws {
        let files = directory.appendingPathComponent("cli-import")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: files) }
        // The resident set of `storage import` doing (almost) nothing, which the growth is from.
        let one = files.appendingPathComponent("one.ndjson")
        try write(rows: 1, format: "ndjson", to: one)
        let idle = try importing(
            one,
            format: "ndjson",
            into: "sqlite:" + files.appendingPathComponent("one.sqlite").path,
            storage: storage,
            rows: 1
        )
        progress("storage import of one record: peak resident set \(Harness.megabytes(idle.peakBytes))")
        for format in formats {
            let file = files.appendingPathComponent("people." + format)
            let started = ContinuousClock.now
            try write(rows: rows, format: format, to: file)
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
            progress(
                "wrote \(rows) people as \(format), \(Harness.megabytes(size)), in "
                    + String(format: "%.1f s", Harness.seconds(ContinuousClock.now - started))
            )
            let baselineStore = files.appendingPathComponent("baseline.sqlite").path
            removeStore(baselineStore)
            let baseline = try baselineImport(file, format: format, into: baselineStore, sqlite3: sqlite3, rows: rows)
            removeStore(baselineStore)
            for backend in backends {
                let store = files.appendingPathComponent("store." + backend).path
                removeStore(store)
                let ours = try importing(
                    file,
                    format: format,
                    into: backend + ":" + store,
                    storage: storage,
                    rows: rows
                )
                removeStore(store)
                let growth = max(0, ours.peakBytes - idle.peakBytes)
                let rate = Double(rows) / max(ours.seconds, 1e-9)
                let line =
                    "  import-\(format) → \(backend): \(Harness.format(rate)) rows/s in "
                    + String(format: "%.1f s", ours.seconds) + ", peak \(Harness.megabytes(ours.peakBytes))"
                    + " (+\(Harness.megabytes(growth)))"
                progress(line)
                harness.results.append(
                    Harness.Result(
                        backend: "storage import → \(backend)",
                        operation: "import-\(format)",
                        rowsPerSecond: rate,
                        baseline: baselines[format] ?? "",
                        baselineRowsPerSecond: Double(rows) / max(baseline.seconds, 1e-9),
                        ratio: baseline.seconds / max(ours.seconds, 1e-9),
                        memoryGrowthBytes: growth,
                        note:
                            "\(Harness.megabytes(size)) file, \(String(format: "%.1f s", ours.seconds)) (sqlite3 "
                            + String(format: "%.1f s", baseline.seconds) + "); peak resident set "
                            + "\(Harness.megabytes(ours.peakBytes)), \(Harness.megabytes(growth)) above"
                            + " the \(Harness.megabytes(idle.peakBytes)) of importing one record"
                            + "; sqlite3's peak \(Harness.megabytes(baseline.peakBytes))"
                    )
                )
            }
            try? FileManager.default.removeItem(at: file)
        }
    }

    /// Runs `storage import STORE Person FILE --format FORMAT --json` and checks that it stored
    /// `rows` records.
    static func importing(
        _ file: URL,
        format: String,
        into store: String,
        storage: String,
        rows: Int
    ) throws -> ChildRun {
        let run = try runChild([storage, "import", store, "Person", file.path, "--format", format, "--json"])
        let reply = try? JSONSerialization.jsonObject(with: run.output) as? [String: Any]
        let stored = (reply?["records"] as? NSNumber)?.intValue
        check(stored == rows, "storage import stored \(stored.map(String.init) ?? "nothing"), not \(rows) records")
        return run
    }

    /// The `sqlite3` shell's import of the same file into a typed table, with the settings the
    /// backend uses (WAL, synchronous=NORMAL); checks the count it stored.
    static func baselineImport(
        _ file: URL,
        format: String,
        into path: String,
        sqlite3: String,
        rows: Int
    ) throws -> ChildRun {
        let literal = "'" + file.path.replacingOccurrences(of: "'", with: "''") + "'"
        var commands = ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", table]
        switch format {
        case "csv":
            commands.append(".import --csv --skip 1 \"\(file.path)\" Person")
        case "ndjson":
            commands += [
                "CREATE TEMP TABLE lines (line TEXT)",
                // Unit separator for fields: each whole line is one value (JSON has no raw 0x1F).
                ".separator \"\\037\" \"\\n\"",
                ".import \"\(file.path)\" lines",
                "INSERT INTO Person SELECT " + keys.map { "line->>'\($0)'" }.joined(separator: ", ") + " FROM lines",
            ]
        default:
            commands.append(
                "INSERT INTO Person SELECT " + keys.map { "value->>'\($0)'" }.joined(separator: ", ")
                    + " FROM json_each(readfile(\(literal)))"
            )
        }
        commands.append(".mode list")
        commands.append("SELECT count(*) FROM Person")
        let run = try runChild([sqlite3, "-batch", path] + commands)
        let lines = String(decoding: run.output, as: UTF8.self).split(separator: "\n")
        check(lines.last.flatMap { Int($0) } == rows, "sqlite3 stored \(lines.last ?? "nothing"), not \(rows) records")
        return run
    }

    static func removeStore(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Runs `arguments` (the first an executable's path) with standard input from /dev/null and
    /// its output to files; returns its wall time, peak resident set and standard output, and
    /// stops the run if it failed.
    ///
    /// The peak: `wait4`'s `ru_maxrss` is exact when it is above this process's own peak, but
    /// Linux carries the spawning process's peak over `exec` into it, so below that it is this
    /// process's figure, not the child's. `VmHWM` of `/proc/PID/status`, read every 5 ms while the
    /// child runs, is the child's own; the larger of the two that is the child's is kept.
    static func runChild(_ arguments: [String]) throws -> ChildRun {
        // Linux only: the peak comes from /proc, and ru_maxrss is in kilobytes there.
        #if os(Linux)
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("bench-child-\(UUID())").path
        let (outputPath, errorPath) = (base + ".out", base + ".err")
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let inherited = PeakResident.highWaterMark() ?? 0
        var pid: pid_t = 0
        let started = ContinuousClock.now
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        check(spawned == 0, "cannot run \(arguments[0]): \(String(cString: strerror(spawned)))")
        var status: Int32 = 0
        var usage = rusage()
        var polled = 0
        while true {
            if let mark = PeakResident.highWaterMark(path: "/proc/\(pid)/status") { polled = max(polled, mark) }
            let waited = wait4(pid, &status, WNOHANG, &usage)
            if waited == pid { break }
            check(waited == 0 || errno == EINTR, "wait4 failed: \(String(cString: strerror(errno)))")
            usleep(5_000)
        }
        let seconds = Harness.seconds(ContinuousClock.now - started)
        let output = FileManager.default.contents(atPath: outputPath) ?? Data()
        let errors = FileManager.default.contents(atPath: errorPath) ?? Data()
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        check(
            exited && code == 0,
            "\(arguments.prefix(3).joined(separator: " ")) … failed (status \(status)):"
                + " \(String(decoding: errors + output, as: UTF8.self))"
        )
        let maximum = Int(usage.ru_maxrss) * 1024  // kilobytes on Linux
        let peak = maximum > inherited ? max(maximum, polled) : polled
        return ChildRun(seconds: seconds, peakBytes: peak, output: output)
        #else
        check(false, "--cli-import runs on Linux only (it reads /proc/PID/status)")
        return ChildRun(seconds: 0, peakBytes: 0, output: Data())
        #endif
    }

    /// Writes `rows` people (those of `Person.make`) as `format`, a megabyte at a time.
    static func write(rows: Int, format: String, to url: URL) throws {
        check(FileManager.default.createFile(atPath: url.path, contents: nil), "cannot create \(url.path)")
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        var buffer = Data()
        buffer.reserveCapacity(1 << 21)
        switch format {
        case "csv": buffer.append(contentsOf: Array((keys.joined(separator: ",") + "\n").utf8))
        case "json": buffer.append(UInt8(ascii: "["))
        default: break
        }
        var first = true
        for person in PeopleSequence(count: rows) {
            switch format {
            case "csv":
                buffer.append(contentsOf: Array(Person.csvLine(person).utf8))
            case "json":
                if !first { buffer.append(contentsOf: Array(",\n".utf8)) }
                buffer.append(try encoder.encode(person))
            default:
                buffer.append(try encoder.encode(person))
                buffer.append(UInt8(ascii: "\n"))
            }
            first = false
            if buffer.count >= 1 << 20 {
                try handle.write(contentsOf: buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if format == "json" { buffer.append(contentsOf: Array("]\n".utf8)) }
        try handle.write(contentsOf: buffer)
    }

    /// The `storage` executable beside this one (both are built into .build/release), or nil.
    static func siblingExecutable(_ name: String) -> String? {
        let own = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let path = own.deletingLastPathComponent().appendingPathComponent(name).path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// The first executable called `name` on PATH, or nil.
    static func onPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
