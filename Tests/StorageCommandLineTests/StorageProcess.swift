import Foundation
import StorageTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a run of a process gave: its exit status and its output.
struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String

    /// The standard output parsed as JSON.
    func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8))
    }
}

/// Runs the `storage` executable (built beside the test runner) and other programs as real
/// processes, with their output in files (posix_spawn and waitpid: no pipe to fill).
enum StorageProcess {
    /// The `storage` executable.
    static var executable: String {
        CrashHarness.executable.deletingLastPathComponent().appendingPathComponent("storage").path
    }

    /// Runs `storage` with `arguments` in `directory`, standard input from `input` (or
    /// /dev/null).
    static func run(_ arguments: [String], in directory: URL, input: String? = nil) throws -> ProcessResult {
        try spawn(executable, arguments, in: directory, input: input)
    }

    /// Starts `storage` with `arguments` without waiting for it; returns its process id.
    static func start(_ arguments: [String], in directory: URL) throws -> pid_t {
        try launch(
            executable,
            arguments,
            in: directory,
            input: nil,
            output: directory.appendingPathComponent(".out-\(UUID().uuidString)").path
        )
    }

    /// Waits for process `pid`; returns its raw wait status.
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    static func spawn(
        _ program: String,
        _ arguments: [String],
        in directory: URL,
        input: String?
    ) throws
        -> ProcessResult
    {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("storage-cli-\(UUID().uuidString)")
            .path
        defer {
            for suffix in [".out", ".err", ".in"] { try? FileManager.default.removeItem(atPath: output + suffix) }
        }
        let pid = try launch(program, arguments, in: directory, input: input, output: output)
        let status = wait(pid)
        let exit: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return ProcessResult(
            status: exit,
            stdout: (try? String(contentsOfFile: output + ".out", encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
        )
    }

    static func launch(
        _ program: String,
        _ arguments: [String],
        in directory: URL,
        input: String?,
        output: String
    )
        throws -> pid_t
    {
        var inputPath = "/dev/null"
        if let input {
            inputPath = output + ".in"
            try input.write(toFile: inputPath, atomically: true, encoding: .utf8)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The paths stay allocated until the spawn: an older C library keeps the pointers.
        let names: [String] = [inputPath, output + ".out", output + ".err"]
        let paths = names.map { strdup($0)! }
        defer { for path in paths { free(path) } }
        posix_spawn_file_actions_addopen(&actions, 0, paths[0], O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, paths[1], O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, paths[2], O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // Run in `directory`, closing inherited descriptors but 0, 1 and 2 (a redirection of the
        // whole loop would make bash keep a copy of 2 that the loop closes, losing standard error).
        let script = """
            cd "$1" || exit 97; shift
            for fd in /proc/$$/fd/*; do fd=${fd##*/}; case $fd in 0|1|2) ;; *) eval "exec $fd>&-" 2>/dev/null ;; esac; done
            exec "$@"
            """
        let argv =
            (["/bin/bash", "-c", script, "storage-test", directory.path, program] + arguments).map { strdup($0) } + [
                nil
            ]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        return pid
    }
}
