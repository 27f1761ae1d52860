import Foundation
import StorageTestBackends
import StorageTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The private clusters the tests start: one left behind by a test process that was killed is
/// stopped and removed by the next one, and no other is touched.
@Suite(.dedicatedThreads) struct PostgreSQLTestServerTests {
    /// The id of a process that has ended: `/bin/true`, waited for.
    static func endedProcessID() throws -> pid_t {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { free(argv[0]) }
        try #require(posix_spawn(&pid, "/bin/true", nil, nil, argv, environ) == 0)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return pid
    }

    /// Whether process `pid` runs: it exists and is not a zombie (a stopped server whose parent
    /// has not reaped it yet still answers `kill(pid, 0)`).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ", options: .backwards)
        else { return false }
        return !stat[afterName.upperBound...].hasPrefix("Z")
    }

    @Test func aClusterWhoseTestProcessEndedIsStoppedAndRemoved() throws {
        let temporary = FileManager.default.temporaryDirectory
        func folder(_ label: String) -> String {
            temporary.appendingPathComponent("storage-postgres-sweep-\(label)-\(UUID().uuidString)").path
        }
        // A running cluster whose test process has ended.
        let abandoned = folder("abandoned")
        try PostgreSQLTestServer.run(["start", abandoned])
        let postmaster = try #require(
            try String(contentsOfFile: abandoned + "/data/postmaster.pid", encoding: .utf8)
                .split(separator: "\n").first.flatMap { pid_t($0) }
        )
        #expect(Self.isRunning(postmaster))
        try String(try Self.endedProcessID()).write(
            toFile: abandoned + "/" + PostgreSQLTestServer.ownerFile,
            atomically: true,
            encoding: .utf8
        )
        // One whose process runs (this one), and one being started (no owner yet).
        let live = folder("live")
        let starting = folder("starting")
        for directory in [live, starting] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        }
        defer {
            for directory in [abandoned, live, starting] { try? FileManager.default.removeItem(atPath: directory) }
        }
        try String(getpid()).write(
            toFile: live + "/" + PostgreSQLTestServer.ownerFile,
            atomically: true,
            encoding: .utf8
        )

        PostgreSQLTestServer.sweepAbandonedClusters()

        #expect(!FileManager.default.fileExists(atPath: abandoned))
        #expect(!Self.isRunning(postmaster))
        #expect(FileManager.default.fileExists(atPath: live))
        #expect(FileManager.default.fileExists(atPath: starting))
    }
}
