import FileArchiveBackend
import Foundation
import Storage
import StorageTestSupport
import Testing

/// The system calls one traced process made, in order, from `strace -f -o`.
private struct Trace {
    enum Call: Equatable {
        case open(path: String, flags: String, descriptor: Int32)
        case write(descriptor: Int32)
        case fsync(descriptor: Int32)
        case rename(from: String, to: String)
    }

    var calls: [Call] = []

    init(_ text: String) {
        for line in text.split(separator: "\n") {
            if let call = Self.parse(String(line)) { calls.append(call) }
        }
    }

    private static func quoted(_ line: String) -> [String] {
        line.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }

    private static func result(_ line: String) -> Int32? {
        // strace pads short calls: "fsync(4)        = 0".
        guard let range = line.range(of: " = ", options: .backwards) else { return nil }
        return Int32(line[range.upperBound...].prefix { $0.isNumber || $0 == "-" })
    }

    private static func firstArgument(_ line: String, after name: String) -> Int32? {
        guard let range = line.range(of: name + "(") else { return nil }
        return Int32(line[range.upperBound...].prefix { $0.isNumber })
    }

    static func parse(_ line: String) -> Call? {
        if line.contains(" openat(") || line.contains(" open(") {
            guard let path = quoted(line).first, let descriptor = result(line), descriptor >= 0 else { return nil }
            let flags = line.components(separatedBy: "\", ").dropFirst().first?.prefix { $0 != ")" && $0 != "," }
            return .open(path: path, flags: String(flags ?? ""), descriptor: descriptor)
        }
        if line.contains(" write("), let descriptor = firstArgument(line, after: " write"), result(line) != nil {
            return .write(descriptor: descriptor)
        }
        if line.contains(" fsync("), let descriptor = firstArgument(line, after: " fsync"), result(line) == 0 {
            return .fsync(descriptor: descriptor)
        }
        if line.contains(" rename(") || line.contains(" renameat(") || line.contains(" renameat2(") {
            let paths = quoted(line)
            guard paths.count >= 2, result(line) == 0 else { return nil }
            return .rename(from: paths[0], to: paths[1])
        }
        return nil
    }
}

private func strace() -> URL? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for folder in path.split(separator: ":").map(String.init) + ["/usr/bin"] {
        let candidate = URL(fileURLWithPath: folder).appendingPathComponent("strace")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    return nil
}

/// Each file a save writes goes temporary file (created 0600, O_EXCL, O_NOFOLLOW) → write →
/// fsync → rename over the record → fsync of the record's folder, in that order, as `strace`
/// sees the crash writer do it. strace is installed by scripts/setup.sh; without it this fails.
@Test func aSaveWritesFsyncsRenamesThenFsyncsTheFolder() throws {
    let tracer = try #require(strace(), "strace is missing: run scripts/setup.sh")
    try TemporaryDirectory.with("archive-strace") { directory in
        let store = directory.appendingPathComponent("traced.archive").path
        let output = directory.appendingPathComponent("trace.txt").path
        let process = Process()
        process.executableURL = tracer
        process.arguments = [
            "-f", "-o", output, "-e", "trace=%file,fsync,fdatasync,rename,write",
            CrashHarness.executable.path, "--backend", "archive", "--path", store, "--batch-size", "3",
            "--batches", "2",
        ]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let trace = Trace(try String(contentsOfFile: output, encoding: .utf8))

        var openFiles: [Int32: (path: String, flags: String)] = [:]
        var written = Set<String>()
        var synced = Set<String>()
        var renamed: [String: String] = [:]  // temporary file → target, awaiting the folder's fsync
        var completed = 0
        for call in trace.calls {
            switch call {
            case .open(let path, let flags, let descriptor):
                openFiles[descriptor] = (path, flags)
                if path.contains("/.tmp-") {
                    #expect(flags.contains("O_CREAT") && flags.contains("O_EXCL") && flags.contains("O_NOFOLLOW"))
                }
            case .write(let descriptor):
                if let file = openFiles[descriptor], file.path.contains("/.tmp-") { written.insert(file.path) }
            case .fsync(let descriptor):
                guard let file = openFiles[descriptor] else { continue }
                if file.path.contains("/.tmp-") {
                    #expect(written.contains(file.path), "fsync before write of \(file.path)")
                    synced.insert(file.path)
                } else if file.flags.contains("O_DIRECTORY") {
                    for (temporary, target) in renamed
                    where (target as NSString).deletingLastPathComponent == file.path {
                        renamed[temporary] = nil
                        completed += 1
                    }
                }
            case .rename(let from, let to):
                guard from.contains("/.tmp-") else { continue }
                #expect(synced.contains(from), "\(from) renamed before it was fsynced")
                renamed[from] = to
            }
        }
        #expect(renamed.isEmpty, "renamed without an fsync of the folder afterwards: \(renamed)")
        // Two batches of three records and a tally, and the new collections' schemas.
        #expect(completed >= 8)
        let reopened = try ObjectStore(backend: .fileArchive(directory: store))
        #expect(try CrashWorkload.verify(reopened, batchSize: 3, acknowledged: 2) == 2)
    }
}
