import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// The umasks the permission test runs the writer under: the usual 022, and 000, under which
/// only the modes the store asks for protect its files.
let testedUmasks = ["022", "000"]

/// A child process creates a store and saves with the given umask; with the fault shim the
/// archive's first rename fails, so its temporary files and journal stay on disk to be checked
/// too, and SQLite's `-wal` and `-shm` files stay because the writer exits without closing. Every
/// file the store created is 0600 and every folder it created is 0700: the database, `-wal`,
/// `-shm`, the LMDB data and lock files, the archive's lock file, record and schema archives,
/// journal and temporary files.
@Test(.dedicatedThreads, arguments: DiskBackend.allCases, testedUmasks)
func everyFileTheStoreCreatesIsPrivate(_ backend: DiskBackend, umask: String) throws {
    try TemporaryDirectory.with("permissions-\(backend)") { directory in
        let path = backend.storePath(in: directory)
        let shell = URL(fileURLWithPath: "/bin/sh")
        let script = "umask \(umask); exec \"$0\" \"$@\""
        let arguments = [script, faultWriter.path, "--backend", backend.rawValue, "--path", path, "--no-next"]
        let result = try runChild(
            shell,
            ["-c"] + arguments,
            environment: try FaultShim.environment(nth: 1, calls: "rename")
        )
        #expect(result.status == 0, "\(result.output)")

        let entries = try permissionBits(under: directory).filter { $0.path != directory.path }
        let names = Set(entries.map { ($0.path as NSString).lastPathComponent })
        switch backend {
        case .sqlite:
            #expect(names.isSuperset(of: ["store.sqlite", "store.sqlite-wal", "store.sqlite-shm"]), "\(names)")
        case .lmdb:
            #expect(names.isSuperset(of: ["store.lmdb", "store.lmdb-lock"]), "\(names)")
        case .archive:
            #expect(names.contains("store.archive") && names.contains { $0.hasPrefix("c-") }, "\(names)")
            #expect(names.contains("journal") && names.contains { $0.hasPrefix(".tmp-") }, "\(names)")
        case .postgresql:
            Issue.record("a PostgreSQL store keeps no files of its own")
        }
        for entry in entries {
            var status = stat()
            #expect(lstat(entry.path, &status) == 0)
            let isFolder = status.st_mode & S_IFMT == S_IFDIR
            #expect(
                entry.mode == (isFolder ? 0o700 : 0o600),
                "umask \(umask): \(entry.path) is \(String(entry.mode, radix: 8))"
            )
        }
    }
}
