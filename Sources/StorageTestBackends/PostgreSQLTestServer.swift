package import Foundation
package import PostgreSQLBackend
package import Storage
import StorageTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The PostgreSQL server the tests use: the one `STORAGE_POSTGRES_URL` names, or else a private
/// throwaway cluster started on first use (`scripts/postgres.sh start` into a temporary folder:
/// `initdb`, a free port on 127.0.0.1, a Unix socket in the folder, run as the `postgres` user
/// when the tests run as root), stopped and removed when the process exits. Its sessions send
/// warnings and errors only (`client_min_messages = warning`), so the notices of the tests' own
/// SQL (`DROP SCHEMA … CASCADE` and its list of tables) stay out of the test output.
///
/// Once started, the cluster's URL is put in `STORAGE_POSTGRES_URL`, so the child processes the
/// tests start use the same server instead of starting their own.
package enum PostgreSQLTestServer {
    /// The folder of the private cluster, `nil` when the tests use a server of their own.
    private static let state = Locked<(url: String, directory: String?)?>(nil)

    /// `scripts/postgres.sh` of this checkout.
    package static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/postgres.sh").path
    }

    /// The server's URL, starting the private cluster on first use.
    /// - Throws: `StorageError` with code `.unavailable` when the cluster cannot be started.
    package static func url() throws -> String {
        try state.withLock { state in
            if let state { return state.url }
            if let url = ProcessInfo.processInfo.environment["STORAGE_POSTGRES_URL"], !url.isEmpty {
                state = (url, nil)
                return url
            }
            sweepAbandonedClusters()
            let directory = clusterParent().appendingPathComponent(clusterPrefix + UUID().uuidString).path
            let url = try run(["start", directory]).trimmingCharacters(in: .whitespacesAndNewlines)
            // Written once the cluster runs: a folder without it is one being started.
            try? String(getpid()).write(toFile: directory + "/" + ownerFile, atomically: true, encoding: .utf8)
            state = (url, directory)
            setenv("STORAGE_POSTGRES_URL", url, 1)
            atexit {
                PostgreSQLTestServer.stopPrivateCluster()
            }
            return url
        }
    }

    /// `scripts/pgbouncer.sh` of this checkout.
    package static var pgbouncerScript: String {
        URL(fileURLWithPath: script).deletingLastPathComponent().appendingPathComponent("pgbouncer.sh").path
    }

    /// PgBouncer's URL (started on first use, in transaction pooling, as the server is, in
    /// front of the private cluster), or `nil` when the tests use a server of their own
    /// (`STORAGE_POSTGRES_URL`), in front of which none is started.
    /// - Throws: `StorageError` with code `.unavailable` when PgBouncer cannot be started.
    package static func pgbouncerURL() throws -> String? {
        guard let directory = try privateClusterDirectory() else { return nil }
        return try pgbouncer.withLock { url in
            if let url { return url }
            let started = try run(["start", directory], script: pgbouncerScript)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            url = started
            return started
        }
    }

    private static let pgbouncer = Locked<String?>(nil)

    /// Whether `openStore` (and so the conformance suite's PostgreSQL store) goes through
    /// PgBouncer: `STORAGE_POSTGRES_POOLER=pgbouncer`.
    package static var throughPgBouncer: Bool {
        ProcessInfo.processInfo.environment["STORAGE_POSTGRES_POOLER"] == "pgbouncer"
    }

    /// The folder of the private cluster, for tests that stop and restart it; `nil` when the
    /// tests use a server given by `STORAGE_POSTGRES_URL`.
    package static func privateClusterDirectory() throws -> String? {
        _ = try url()
        return state.withLock { $0?.directory }
    }

    /// Runs `scripts/postgres.sh` with `arguments` and returns what it printed.
    ///
    /// Spawned and waited for directly (`posix_spawn`, `waitpid`), with its output in files:
    /// Foundation's `Process` could miss the script's exit while tests start processes in parallel.
    /// - Throws: `StorageError` with code `.unavailable` when it fails.
    @discardableResult
    package static func run(_ arguments: [String], script: String = script) throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("postgres-sh-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(atPath: output.path + ".out")
            try? FileManager.default.removeItem(atPath: output.path + ".err")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output.path + ".out", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, output.path + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv =
            (["/bin/bash", "-c", closingInheritedDescriptors, "postgres.sh", script] + arguments).map {
                strdup($0)
            } + [nil]
        defer { for argument in argv { free(argument) } }
        // The child starts with no signal blocked and every signal's default action, whatever the
        // calling thread's mask: a test runner's thread may block signals, and the servers and
        // pg_autoctl the scripts start would keep that mask (pg_autoctl then never sees the
        // signals it stops its services with).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw StorageError(.unavailable, "cannot run scripts/postgres.sh: error \(spawned)")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: output.path + ".out", encoding: .utf8)) ?? ""
        guard status == 0 else {
            let problems = (try? String(contentsOfFile: output.path + ".err", encoding: .utf8)) ?? ""
            throw StorageError(
                .unavailable,
                "\(URL(fileURLWithPath: script).lastPathComponent) \(arguments.joined(separator: " ")) failed:"
                    + " \(problems)"
            )
        }
        return text
    }

    /// A `bash -c` script that closes every descriptor but 0, 1 and 2, then runs its arguments:
    /// a child must not keep open a pipe another test reads to its end (nor pass it on to a
    /// server it starts), and `posix_spawn` passes on every descriptor without close-on-exec.
    ///
    /// Errors are silenced per descriptor, not for the whole loop: bash keeps the real standard
    /// error in a descriptor of its own (10 or above) while a loop's `2>/dev/null` holds, the loop
    /// closed that one too, and the child then ran with no standard error (every failure of
    /// `scripts/postgres.sh` was reported with an empty reason).
    package static let closingInheritedDescriptors = """
        for fd in /proc/$$/fd/*; do fd=${fd##*/}; if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null; fi; done
        exec "$@"
        """

    /// The start of a private cluster's folder name, in `clusterParent()`.
    static let clusterPrefix = "storage-postgres-"

    /// Where private clusters are made: the temporary directory when a cluster's socket path
    /// (`FOLDER/.s.PGSQL.PORT`) fits in 103 bytes there (macOS's limit; Linux's is 107), else
    /// `/tmp`. macOS's temporary directory (`/var/folders/…/T/`, about 50 bytes) is too long for
    /// it, and `scripts/postgres.sh` refuses such a folder.
    /// - Parameter temporary: the temporary directory; `nil` for the system's.
    /// - Returns: the folder to make private clusters in.
    package static func clusterParent(temporary: URL? = nil) -> URL {
        let temporary = temporary ?? FileManager.default.temporaryDirectory
        let socket = temporary.appendingPathComponent(clusterPrefix + UUID().uuidString).path + "/.s.PGSQL.65535"
        return socket.utf8.count <= 103 ? temporary : URL(fileURLWithPath: "/tmp", isDirectory: true)
    }

    /// The file in a private cluster's folder holding the process id of the test process it
    /// serves.
    package static let ownerFile = "owner"

    /// Stops and removes the private clusters in the temporary directory whose test process has
    /// ended without stopping its own (a process killed, or ended by a closed pipe, runs no
    /// `atexit` handler), so that they do not pile up. A cluster whose process still runs, or
    /// whose folder names none yet (being started), is left alone.
    package static func sweepAbandonedClusters() {
        let temporary = clusterParent()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporary.path) else { return }
        for name in names where name.hasPrefix(clusterPrefix) {
            let directory = temporary.appendingPathComponent(name).path
            guard let text = try? String(contentsOfFile: directory + "/" + ownerFile, encoding: .utf8),
                let owner = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                owner > 0, kill(owner, 0) != 0, errno == ESRCH
            else { continue }
            // Its PgBouncer (if one was started) first, then its server; removed once that is
            // stopped, or when none runs (no `postmaster.pid`).
            _ = try? run(["stop", directory], script: pgbouncerScript)
            let stopped = (try? run(["stop", directory])) != nil
            if stopped || !FileManager.default.fileExists(atPath: directory + "/data/postmaster.pid") {
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
    }

    private static func stopPrivateCluster() {
        guard let directory = state.withLock({ $0?.directory }) else { return }
        if pgbouncer.withLock({ $0 }) != nil { _ = try? run(["stop", directory], script: pgbouncerScript) }
        _ = try? run(["stop", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A schema name for the store kept at `path` (a test folder): each test gets a schema of its
    /// own, and reopening the same folder gives the same data.
    package static func schema(for path: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return "test_" + String(hash, radix: 16)
    }

    /// Opens the store for the test folder `path`, in a schema of its own.
    package static func openStore(
        path: String,
        configuration: PostgreSQLStorageBackend.Configuration? = nil
    ) throws
        -> ObjectStore
    {
        var configuration = configuration ?? .init(poolSize: 2)
        configuration.schema = schema(for: path)
        // Under ThreadSanitizer the whole suite runs at a load average above 6 on two cores: a
        // CI run saw the server take over the default 10 s to answer a new connection. No test
        // that opens its store here is about the connect timeout.
        if Sanitizers.thread { configuration.connectTimeout = max(configuration.connectTimeout, .seconds(60)) }
        if throughPgBouncer, let pooled = try pgbouncerURL() {
            configuration.transactionPooling = true
            configuration.listenURL = try url()
            return try ObjectStore(backend: .postgreSQL(url: pooled, configuration: configuration))
        }
        return try ObjectStore(backend: .postgreSQL(url: url(), configuration: configuration))
    }
}
