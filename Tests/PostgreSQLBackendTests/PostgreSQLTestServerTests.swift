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

/// The private clusters the tests start: one left behind by a test process that was killed is
/// removed by the next one, and no other is touched.
@Suite struct PostgreSQLTestServerTests {
    /// The id of a process that has ended: `/bin/true`, waited for.
    static func endedProcessID() throws -> pid_t {
        let child = try Child("/bin/true", [])
        _ = child.wait()
        return child.pid
    }

    // The folders hold no server: a cluster in a folder named like these, under CI's private
    // TMPDIR, had a socket path past the 107-byte limit and did not start (the stop of a real one
    // is `scripts/postgres.sh stop`, checked by hand).
    @Test func aClusterFolderWhoseTestProcessEndedIsRemovedAndNoOther() throws {
        let temporary = PostgreSQLTestServer.clusterParent()
        func folder(_ label: String) throws -> String {
            let path = temporary.appendingPathComponent("storage-postgres-sweep-\(label)-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            return path
        }
        func own(_ directory: String, by pid: pid_t) throws {
            try String(pid).write(
                toFile: directory + "/" + PostgreSQLTestServer.ownerFile,
                atomically: true,
                encoding: .utf8
            )
        }
        // One whose test process has ended, one whose process runs (this one), and one being
        // started (no owner yet).
        let abandoned = try folder("abandoned")
        try own(abandoned, by: try Self.endedProcessID())
        let live = try folder("live")
        try own(live, by: getpid())
        let starting = try folder("starting")
        defer {
            for directory in [abandoned, live, starting] { try? FileManager.default.removeItem(atPath: directory) }
        }

        PostgreSQLTestServer.sweepAbandonedClusters()

        #expect(!FileManager.default.fileExists(atPath: abandoned))
        #expect(FileManager.default.fileExists(atPath: live))
        #expect(FileManager.default.fileExists(atPath: starting))
    }

    @Test func aClusterFolderTooLongForTheServersSocketIsRefusedBeforeAnythingIsMade() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("storage-postgres-" + String(repeating: "x", count: 100)).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let error = #expect(throws: StorageError.self) { try PostgreSQLTestServer.run(["start", directory]) }
        #expect(
            error?.message.contains("too long for the server's Unix socket") == true,
            "\(String(describing: error))"
        )
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    /// Clusters are made where their socket path fits: in a temporary directory as short as
    /// Linux's (or CI's private one), and in /tmp when it is as long as macOS's, where the
    /// server's socket would not fit and `scripts/postgres.sh` refuses the folder.
    /// The scripts start servers and pg_autoctl, which keep the signal mask they start with:
    /// `run` gives its child none blocked, whatever the calling thread blocks.
    @Test func aScriptRunsWithNoSignalBlockedWhateverTheCallerBlocks() throws {
        try TemporaryDirectory.with("signal-mask") { directory in
            let script = directory.appendingPathComponent("mask.sh").path
            try "#!/bin/bash\nexec grep '^SigBlk:' /proc/self/status\n".write(
                toFile: script,
                atomically: true,
                encoding: .utf8
            )
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            sigaddset(&blocked, SIGINT)
            var previous = sigset_t()
            pthread_sigmask(SIG_BLOCK, &blocked, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            let printed = try PostgreSQLTestServer.run([], script: script)
            #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines) == "SigBlk:\t0000000000000000")
        }
    }

    @Test func clustersAreMadeWhereTheServersSocketPathFits() {
        for short in ["/tmp", "/tmp/storage-tmp.Ab3dE9"] {
            let parent = PostgreSQLTestServer.clusterParent(temporary: URL(fileURLWithPath: short, isDirectory: true))
            #expect(parent.path == URL(fileURLWithPath: short).path, "\(short)")
        }
        let macOS = URL(fileURLWithPath: "/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T", isDirectory: true)
        #expect(PostgreSQLTestServer.clusterParent(temporary: macOS).path == "/tmp")
    }
}
