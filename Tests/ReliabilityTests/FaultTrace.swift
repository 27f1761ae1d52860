import Foundation
import StorageTestSupport

/// The system calls of a process and its threads, in order, from `strace -f -o FILE`.
struct SyscallTrace {
    enum Call: Equatable {
        case open(path: String, flags: String, descriptor: Int32)
        /// write, pwrite64, writev or pwritev on a descriptor.
        case write(descriptor: Int32)
        /// fsync or fdatasync (`name`) of a descriptor.
        case sync(descriptor: Int32, name: String)
        case syncfs(descriptor: Int32)
        case rename(from: String, to: String)
        case close(descriptor: Int32)
        /// A line the traced program printed on standard output (fd 1), without its newline.
        case output(String)
    }

    /// The calls that succeeded, in order.
    var calls: [Call] = []

    /// The system calls `strace` is asked to record.
    static let traced =
        "openat,open,write,pwrite64,writev,pwritev,fsync,fdatasync,syncfs,rename,renameat,renameat2,close"

    init(_ text: String) {
        // With threads, strace splits a call another thread interrupted: "PID fsync(4 <unfinished
        // ...>" and later "PID <... fsync resumed>) = 0". The halves are joined here.
        var pending: [Substring: String] = [:]
        var folders: [String: String] = [:]  // "pid:descriptor" → the path it was opened with
        for line in text.split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            let pid = line[..<space]
            // strace pads the pid: "5511  write(…)".
            var body = String(line[line.index(after: space)...].drop { $0 == " " })
            if let range = body.range(of: " <unfinished ...>") {
                pending[pid] = String(body[..<range.lowerBound])
                continue
            }
            if body.hasPrefix("<... "), let range = body.range(of: " resumed>") {
                guard let start = pending.removeValue(forKey: pid) else { continue }
                body = start + body[range.upperBound...]
            }
            guard var call = Self.parse(body) else { continue }
            // The file archive opens and renames files relative to folders it holds open
            // (`openat(5, ".tmp-…")`, `renameat(5, ".tmp-…", 5, "01…")`): such names are
            // resolved against the path that descriptor was opened with, per process.
            let arguments = Self.directoryArguments(body)
            func resolve(_ name: String, _ directory: Int32?) -> String {
                directory.flatMap { folders[pid + ":" + String($0)] }.map { $0 + "/" + name } ?? name
            }
            switch call {
            case .open(let path, let flags, let descriptor):
                call = .open(path: resolve(path, arguments.first ?? nil), flags: flags, descriptor: descriptor)
                if case .open(let resolved, _, _) = call { folders[pid + ":" + String(descriptor)] = resolved }
            case .rename(let from, let to):
                call = .rename(
                    from: resolve(from, arguments.first ?? nil),
                    to: resolve(to, arguments.count > 1 ? arguments[1] : nil)
                )
            case .close(let descriptor):
                folders[pid + ":" + String(descriptor)] = nil
            default:
                break
            }
            calls.append(call)
        }
    }

    /// The folder descriptors of a call that takes them (`openat`'s first argument,
    /// `renameat`'s first and third); `nil` for `AT_FDCWD` and for other calls.
    private static func directoryArguments(_ line: String) -> [Int32?] {
        guard let open = line.firstIndex(of: "(") else { return [] }
        let name = line[..<open]
        guard name == "openat" || name.hasPrefix("renameat") else { return [] }
        // The arguments before the quoted names: `5, "a", 5, "b"` splits on quotes into
        // `5, `, `a`, `, 5, `, `b`.
        let parts = line[line.index(after: open)...].split(separator: "\"", omittingEmptySubsequences: false)
        let unquoted = parts.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        let count = name == "openat" ? 1 : 2
        return unquoted.prefix(count).map { part in
            Int32(part.filter { $0.isNumber || $0 == "-" })
        }
    }

    /// The strings quoted in a line.
    private static func quoted(_ line: String) -> [String] {
        line.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }

    /// The call's result, `nil` when it failed.
    private static func result(_ line: String) -> Int64? {
        // strace pads short calls: "fsync(4)        = 0".
        guard let range = line.range(of: " = ", options: .backwards),
            let value = Int64(line[range.upperBound...].prefix { $0.isNumber || $0 == "-" }), value >= 0
        else { return nil }
        return value
    }

    private static func firstArgument(_ line: String) -> Int32? {
        guard let open = line.firstIndex(of: "(") else { return nil }
        return Int32(line[line.index(after: open)...].prefix { $0.isNumber })
    }

    static func parse(_ line: String) -> Call? {
        guard let open = line.firstIndex(of: "("), let value = result(line) else { return nil }
        let name = line[..<open]
        switch name {
        case "openat", "open":
            guard let path = quoted(line).first else { return nil }
            // The flags and the mode: "O_WRONLY|O_CREAT|O_EXCL, 0600".
            let flags = line.components(separatedBy: "\", ").dropFirst().first?.prefix { $0 != ")" }
            return .open(path: path, flags: String(flags ?? ""), descriptor: Int32(value))
        case "write" where firstArgument(line) == 1:
            let text = quoted(line).first ?? ""
            return .output(text.hasSuffix("\\n") ? String(text.dropLast(2)) : text)
        case "write", "pwrite64", "writev", "pwritev":
            return firstArgument(line).map { .write(descriptor: $0) }
        case "fsync", "fdatasync":
            return firstArgument(line).map { .sync(descriptor: $0, name: String(name)) }
        case "syncfs":
            return firstArgument(line).map { .syncfs(descriptor: $0) }
        case "close":
            return firstArgument(line).map { .close(descriptor: $0) }
        case "rename", "renameat", "renameat2":
            let paths = quoted(line)
            guard paths.count >= 2 else { return nil }
            return .rename(from: paths[0], to: paths[1])
        default:
            return nil
        }
    }

    /// The calls between the program's output lines `start` and `end` (exclusive), each with the
    /// path and open flags of the descriptor it used, as opened anywhere before it.
    func between(_ start: String, and end: String) -> [(call: Call, path: String?, flags: String?)] {
        var files: [Int32: (path: String, flags: String)] = [:]
        var inside = false
        var result: [(Call, String?, String?)] = []
        for call in calls {
            if case .output(let text) = call {
                if text == start { inside = true } else if text.hasPrefix(end) { inside = false }
                continue
            }
            var descriptor: Int32?
            switch call {
            case .open(let path, let flags, let fd): files[fd] = (path, flags)
            case .write(let fd), .sync(let fd, _), .syncfs(let fd), .close(let fd): descriptor = fd
            default: break
            }
            if inside {
                let file = descriptor.flatMap { files[$0] }
                result.append((call, file?.path, file?.flags))
            }
            if case .close(let fd) = call { files[fd] = nil }
        }
        return result
    }
}

/// Runs `arguments` (a program and its arguments) under `strace -f` and returns the trace.
/// strace is installed by scripts/setup.sh; without it this throws.
func traceSyscalls(_ arguments: [String], in directory: URL) throws -> (trace: SyscallTrace, status: Int32) {
    guard let strace = findProgram("strace") else { throw FaultTestFailure("strace is missing: run scripts/setup.sh") }
    let output = directory.appendingPathComponent("trace-\(UUID().uuidString).txt").path
    let result = try runChild(
        strace,
        ["-f", "-s", "64", "-o", output, "-e", "trace=" + SyscallTrace.traced] + arguments
    )
    let text = try String(contentsOfFile: output, encoding: .utf8)
    try? FileManager.default.removeItem(atPath: output)
    return (SyscallTrace(text), result.status)
}
