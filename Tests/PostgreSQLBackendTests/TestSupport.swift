internal import CPostgreSQL
import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Runs `body` with a store in a schema of its own on the tests' server, and a fresh folder.
func withStore<R>(
    _ label: String,
    configuration: PostgreSQLStorageBackend.Configuration? = nil,
    _ body: (ObjectStore, String) throws -> R
) throws -> R {
    try TemporaryDirectory.with("postgres-\(label)") { directory in
        let path = DiskBackend.postgresql.storePath(in: directory)
        return try body(try PostgreSQLTestServer.openStore(path: path, configuration: configuration), path)
    }
}

/// A child process whose standard output goes to a file, spawned and reaped directly.
struct Child {
    let pid: pid_t
    let output: String

    /// Starts `executable` with `arguments`; its environment is this process's, so it finds the
    /// tests' server through `STORAGE_POSTGRES_URL`.
    init(_ executable: String, _ arguments: [String]) throws {
        output = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv =
            (["/bin/bash", "-c", PostgreSQLTestServer.closingInheritedDescriptors, "child", executable] + arguments)
            .map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, environ)
        guard result == 0 else { throw StorageError(.io, "cannot start \(executable): error \(result)") }
        self.pid = pid
    }

    /// Waits for the child to exit and returns its exit status and output lines. With a
    /// `deadline`, a child still running then is killed (SIGKILL), so a child that never ends
    /// fails the test instead of hanging it.
    func wait(deadline: ContinuousClock.Instant? = nil) -> (status: Int32, lines: [String]) {
        var status: Int32 = 0
        if let deadline {
            while true {
                let reaped = waitpid(pid, &status, WNOHANG)
                if reaped == pid || (reaped < 0 && errno != EINTR) { break }
                if ContinuousClock.now >= deadline {
                    kill(pid, SIGKILL)
                    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                    break
                }
                usleep(20_000)
            }
        } else {
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: output)
        return (status, text.split(separator: "\n").map(String.init))
    }
}

/// A plain libpq connection for what a test does behind the store's back.
final class RawConnection {
    let handle: OpaquePointer

    init(_ url: String) throws {
        guard let handle = PQconnectdb(url), PQstatus(handle) == CONNECTION_OK else {
            throw StorageError(.unavailable, "the test cannot connect")
        }
        self.handle = handle
    }

    deinit { PQfinish(handle) }

    /// Runs `sql` and returns the first column of each row, as text.
    @discardableResult
    func execute(_ sql: String) throws -> [String] {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
            throw StorageError(.engine, "test SQL failed: " + String(cString: PQerrorMessage(handle)))
        }
        return (0..<PQntuples(result)).map { String(cString: PQgetvalue(result, $0, 0)) }
    }
}

/// One of a store's advisory lock keys, as the backend makes it: FNV-1a of `purpose`, a colon
/// and the store's schema (`changes` orders the change rows, `observe` guards the listener count).
func advisoryLockKey(_ purpose: String, schema: String) -> Int64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in (purpose + ":" + schema).utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
    }
    return Int64(bitPattern: hash)
}

/// The statements of the sessions waiting for the advisory lock `key` (an `int8` key: its high
/// half is `classid`, its low half `objid`). Only that key: tests run at once on one server, and
/// some of them make sessions wait for other locks on purpose.
func advisoryLockWaiters(_ key: Int64, on raw: RawConnection) throws -> [String] {
    let bits = UInt64(bitPattern: key)
    return try raw.execute(
        "SELECT a.query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
            + " WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objsubid = 1"
            + " AND l.classid::int8 = \(bits >> 32) AND l.objid::int8 = \(bits & 0xffff_ffff)"
    )
}

/// The tests' server URL with `user` in place of the tests' own user.
func url(user: String) throws -> String {
    try PostgreSQLTestServer.url().replacingOccurrences(of: "user=postgres", with: "user=" + user)
}
