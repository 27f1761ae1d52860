import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A pg_auto_failover formation of the test's own (`scripts/pg-auto-failover.sh`): a monitor, a
/// primary and a synchronous secondary on 127.0.0.1, in a folder of the temporary directory that
/// names the test process (`owner`); a formation whose process is gone is stopped and removed by
/// the next one started.
struct FailoverFormation {
    let directory: String
    /// `postgresql://127.0.0.1:P1,127.0.0.1:P2/postgres?target_session_attrs=read-write&user=postgres`.
    let url: String

    static var script: String {
        URL(fileURLWithPath: PostgreSQLTestServer.script).deletingLastPathComponent()
            .appendingPathComponent("pg-auto-failover.sh").path
    }

    /// Whether pg_autoctl and the pgautofailover extension are installed (`scripts/setup.sh`
    /// installs them).
    static var available: Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let program = path.split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: $0 + "/pg_autoctl")
        }
        let shared = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/share/postgresql")) ?? []
        let extensionInstalled = shared.contains {
            FileManager.default.fileExists(atPath: "/usr/share/postgresql/\($0)/extension/pgautofailover.control")
        }
        return program && extensionInstalled
    }

    static let prefix = "storage-failover-"

    /// Starts a formation, runs `body` with it, and stops it (every process of it) and removes
    /// its folder, also when `body` throws.
    static func with<R>(_ body: (FailoverFormation) throws -> R) throws -> R {
        sweepAbandoned()
        var parent = PostgreSQLTestServer.clusterParent().path
        // The servers' socket paths (FOLDER/NODE/.s.PGSQL.PORT) must stay short.
        if parent.utf8.count > 50 { parent = "/tmp" }
        let directory = parent + "/" + prefix + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        defer {
            _ = try? PostgreSQLTestServer.run(["stop", directory], script: script)
            try? FileManager.default.removeItem(atPath: directory)
        }
        let url = try PostgreSQLTestServer.run(["start", directory], script: script)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try? String(getpid()).write(toFile: directory + "/owner", atomically: true, encoding: .utf8)
        return try body(FailoverFormation(directory: directory, url: url))
    }

    /// Runs the script's `command` on this formation and returns what it printed, trimmed.
    @discardableResult
    func run(_ command: String, _ arguments: String...) throws -> String {
        try PostgreSQLTestServer.run([command, directory] + arguments, script: Self.script)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops and removes the formations whose test process has ended without doing so.
    private static func sweepAbandoned() {
        for parent in Set([PostgreSQLTestServer.clusterParent().path, "/tmp"]) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
            for name in names where name.hasPrefix(prefix) {
                let directory = parent + "/" + name
                guard let text = try? String(contentsOfFile: directory + "/owner", encoding: .utf8),
                    let owner = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), owner > 0,
                    kill(owner, 0) != 0, errno == ESRCH
                else { continue }
                _ = try? PostgreSQLTestServer.run(["stop", directory], script: script)
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
    }
}

/// How long each phase of a test took, for its report.
final class Phases: CustomStringConvertible {
    private var phases: [(String, Duration)] = []
    private(set) var last: ContinuousClock.Instant

    init(_ start: ContinuousClock.Instant) { last = start }

    func mark(_ name: String) {
        phases.append((name, ContinuousClock.now - last))
        last = ContinuousClock.now
    }

    var description: String { phases.map { "\($0.0) \($0.1)" }.joined(separator: ", ") }
}

/// The store across an automatic failover: Debian's pg_auto_failover, a primary and a
/// synchronous secondary, the store opened on both hosts with `target_session_attrs=read-write`.
@Suite(.serialized) struct PostgreSQLFailoverTests {
    struct FailoverCounter: Codable {
        var id: Int64
        var value: Int64
    }

    struct FailoverTick: Codable {
        var id: Int64
        var writer: Int64
        var value: Int64
    }

    struct FailoverNote: Codable {
        var id: Int64
        var writer: Int64
    }

    /// A child's output so far, by line.
    static func lines(of child: Child) -> [String] {
        ((try? String(contentsOfFile: child.output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Waits until `condition` holds, at most `seconds`.
    static func waitUntil(_ seconds: Int, _ what: String, _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while try !condition() {
            guard ContinuousClock.now < deadline else {
                throw StorageError(.timedOut, "the failover test waited \(seconds) s for \(what)")
            }
            usleep(50_000)
        }
    }

    /// The keys after `prefix` (`ack tick `, `seen note `…) in `lines`.
    static func keys(_ prefix: String, in lines: [String]) -> Set<Int64> {
        Set(lines.compactMap { $0.hasPrefix(prefix) ? Int64($0.dropFirst(prefix.count).prefix { $0 != " " }) : nil })
    }

    /// The wall-clock milliseconds of each acknowledgement in `lines`, in order.
    static func acknowledgementTimes(in lines: [String]) -> [Int64] {
        lines.compactMap { line in
            guard line.hasPrefix("ack ") else { return nil }
            return line.split(separator: " ").last.flatMap { Int64($0) }
        }
    }

    /// Two writer processes (read-modify-write transactions on one shared counter, and records
    /// saved on their own) and one observer process (`changes(of:)`) run on the multi-host URL;
    /// the primary's postmaster is killed with SIGKILL (and its pg_autoctl, or it would restart
    /// it) mid-load. The secondary is promoted; then every acknowledged write is on it, the
    /// counter equals the number of ticks and the ticks hold every value 1...counter once (no
    /// transaction half-applied, none applied twice), both writers acknowledge commits again by
    /// themselves (the store waited for the new primary and ran again what had not committed),
    /// and the observer was delivered every record stored and nothing else.
    @Test(
        .enabled(
            if: FailoverFormation.available,
            "pg_autoctl (pg-auto-failover-cli) or the pgautofailover extension (postgresql-15-auto-failover) is not installed: run scripts/setup.sh"
        ),
        .timeLimit(.minutes(4))
    )
    func killingThePrimaryMidLoadLosesNoAcknowledgedWriteAndTheWritersResume() throws {
        let began = ContinuousClock.now
        let phases = Phases(began)
        try FailoverFormation.with { formation in
            phases.mark("formation started")
            try Self.exercise(formation, phases: phases)
        }
        print(
            "failover: test \(ContinuousClock.now - began), the formation stopped in \(ContinuousClock.now - phases.last)"
        )
    }

    /// Starts a child of the failover workload on `formation` with `role`'s arguments.
    static func child(_ role: [String], on formation: FailoverFormation, schema: String) throws -> Child {
        try Child(
            CrashHarness.executable.path,
            ["--backend", "postgresql", "--path", formation.directory, "--workload", "failover"]
                + ["--url", formation.url, "--schema", schema] + role
        )
    }

    /// The test on a formation started.
    static func exercise(_ formation: FailoverFormation, phases: Phases) throws {
        let schema = "failover_" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let store = try ObjectStore(
            backend: .postgreSQL(
                url: formation.url,
                configuration: .init(
                    schema: schema,
                    poolSize: 2,
                    connectTimeout: .seconds(2),
                    reconnectTimeout: .seconds(60)
                )
            )
        )
        defer { try? store.close() }
        try store.save(FailoverCounter(id: 1, value: 0))
        let firstPrimary = try RawConnection(formation.url).execute("SELECT inet_server_port()").first
        let observer = try child(["--observer"], on: formation, schema: schema)
        var writers: [Child] = []
        // Whatever happens, no child outlives the test.
        defer { for child in writers + [observer] { _ = child.wait(deadline: .now) } }
        try Self.waitUntil(60, "the observer to listen") { Self.lines(of: observer).contains("ready") }
        phases.mark("observer listening")
        let stopFile = formation.directory + "/stop"
        writers = try (1...2).map {
            try child(["--writer", String($0), "--stop-file", stopFile], on: formation, schema: schema)
        }
        try Self.waitUntil(60, "100 increments of each writer") {
            writers.allSatisfy { Self.keys("ack tick ", in: Self.lines(of: $0)).count >= 100 }
        }

        phases.mark("100 increments each")
        // The primary is lost mid-load.
        let killedAt = Int64(Date().timeIntervalSince1970 * 1000)
        let killed = ContinuousClock.now
        let lostPort = try formation.run("kill-primary")
        let ports = [try formation.run("state")].flatMap { $0.split(separator: "\n") }
            .compactMap { $0.split(separator: " ").dropFirst().first.map(String.init) }
        let survivor = try #require(ports.first { $0 != lostPort })
        try formation.run("wait-primary", survivor, "60")
        let promoted = ContinuousClock.now - killed
        // Each writer commits again by itself, 100 times more.
        try Self.waitUntil(90, "100 commits of each writer after the failover") {
            writers.allSatisfy { writer in
                Self.acknowledgementTimes(in: Self.lines(of: writer)).filter { $0 > killedAt }.count >= 100
            }
        }
        phases.mark("failover and 100 commits each")
        _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
        var outputs: [[String]] = []
        for (number, writer) in writers.enumerated() {
            let (status, lines) = writer.wait(deadline: .now + .seconds(60))
            #expect(status == 0, "writer \(number + 1): \(lines.suffix(5))")
            #expect(lines.last?.hasPrefix("done ") == true, "writer \(number + 1): \(lines.suffix(5))")
            let failed = lines.contains { $0.hasPrefix("error") }
            #expect(!failed, "writer \(number + 1): \(lines.suffix(5))")
            outputs.append(lines)
        }
        writers = []
        // The last records, one of each: the observer ends when it has seen them.
        try store.transaction { tx in
            try tx.save(FailoverTick(id: 0, writer: 0, value: 0))
            try tx.save(FailoverNote(id: 0, writer: 0))
        }
        let (observerStatus, seen) = observer.wait(deadline: .now + .seconds(60))
        phases.mark("writers and observer ended")
        #expect(observerStatus == 0, "observer: \(seen.suffix(5))")

        // On the new primary (the secondary, promoted).
        let primary = try RawConnection(formation.url).execute("SELECT inet_server_port()").first
        #expect(primary == survivor && primary != firstPrimary, "\(String(describing: primary)) \(survivor)")
        let ticks = try store.fetchAll(FailoverTick.self).filter { $0.id != 0 }
        let notes = try store.fetchAll(FailoverNote.self).filter { $0.id != 0 }
        let counter = try #require(try store.fetch(FailoverCounter.self, id: 1))
        // No transaction half-applied nor applied twice: one tick per increment, each value once.
        #expect(counter.value == Int64(ticks.count))
        #expect(ticks.map(\.value).sorted() == (0..<counter.value).map { $0 + 1 })
        let storedTicks = Set(ticks.map(\.id))
        let storedNotes = Set(notes.map(\.id))
        let all = outputs.flatMap { $0 }
        let ackedTicks = Self.keys("ack tick ", in: all)
        let ackedNotes = Self.keys("ack note ", in: all)
        // Every acknowledged write is there.
        #expect(ackedTicks.subtracting(storedTicks).isEmpty, "lost ticks: \(ackedTicks.subtracting(storedTicks))")
        #expect(ackedNotes.subtracting(storedNotes).isEmpty, "lost notes: \(ackedNotes.subtracting(storedNotes))")
        // The observer missed no committed change, and saw none that is not stored.
        let seenTicks = Self.keys("seen tick ", in: seen).subtracting([0])
        let seenNotes = Self.keys("seen note ", in: seen).subtracting([0])
        #expect(
            storedTicks.subtracting(seenTicks).isEmpty,
            "unseen: \(storedTicks.subtracting(seenTicks).sorted())"
        )
        #expect(
            storedNotes.subtracting(seenNotes).isEmpty,
            "unseen: \(storedNotes.subtracting(seenNotes).sorted())"
        )
        #expect(
            seenTicks.subtracting(storedTicks).isEmpty,
            "seen, not stored: \(seenTicks.subtracting(storedTicks))"
        )
        #expect(
            seenNotes.subtracting(storedNotes).isEmpty,
            "seen, not stored: \(seenNotes.subtracting(storedNotes))"
        )

        // How long each writer went without a commit (the failover's cost to it).
        let pauses = outputs.map { lines in
            let times = Self.acknowledgementTimes(in: lines)
            return zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? 0
        }
        let unknown = all.filter { $0.hasPrefix("unknown ") && !$0.hasPrefix("unknown read") }.count
        let resolvedCommitted = all.filter { $0.hasPrefix("resolved ") && $0.hasSuffix(" committed") }.count
        let resolvedAbsent = all.filter { $0.hasPrefix("resolved ") && $0.hasSuffix(" absent") }.count
        let retried = all.filter { $0.hasPrefix("busy ") || $0.hasPrefix("unavailable ") }.count
        print(
            "failover: killed the primary on port \(lostPort); \(survivor) primary after \(promoted);"
                + " writers resumed after \(pauses.map { "\($0) ms" }.joined(separator: " and ")) without a commit;"
                + " \(ackedTicks.count) increments and \(ackedNotes.count) notes acknowledged,"
                + " \(storedTicks.count) and \(storedNotes.count) stored, \(seenTicks.count) and \(seenNotes.count) observed;"
                + " \(unknown) commits of unknown outcome (\(resolvedCommitted) found committed,"
                + " \(resolvedAbsent) absent and run again); \(retried) busy or unavailable;"
                + " phases: " + phases.description
        )
        phases.mark("checked")
        for (number, pause) in pauses.enumerated() {
            #expect(pause < 60_000, "writer \(number + 1) went \(pause) ms without a commit")
        }
    }
}
