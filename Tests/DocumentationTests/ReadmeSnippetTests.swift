import Foundation
import StorageTestSupport
import Testing

/// The README's Swift blocks, type-checked where the README says to paste them: each
/// `main.swift` block as the `main.swift` of a program of its own (top-level code, where Swift
/// picks the blocking overloads), with the blocks marked "another file" of that program beside
/// it. `scripts/docs-snippets.py --readme` writes the programs; `swiftc -typecheck` checks them
/// against this build's modules in the Swift 6 language mode, and any warning fails the test.
@Suite(.dedicatedThreads) struct ReadmeSnippetTests {
    /// The folder of this build's module files: beside the test executable.
    static var modules: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("Modules")
    }

    @Test func theReadmeProgramsTypeCheckWithoutWarnings() throws {
        let root = ArticleSnippetTests.root
        let directory = try TemporaryDirectory("readme-programs")
        defer { directory.remove() }
        let (status, output) = try Self.run(
            "/usr/bin/env",
            ["python3", "scripts/docs-snippets.py", "--readme", directory.url.path],
            in: root
        )
        try #require(status == 0, "\(output)")
        let programs = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(programs.count >= 3, "the quick start, CSV files, opening each engine: \(programs)")
        try #require(FileManager.default.fileExists(atPath: Self.modules.path), "no \(Self.modules.path)")
        for program in programs {
            let folder = directory.url.appendingPathComponent(program)
            let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            var arguments = ["swiftc", "-typecheck", "-swift-version", "6", "-I", Self.modules.path]
            for library in ["CSQLite", "CLMDB", "CPostgreSQL"] {
                arguments += ["-I", root.appendingPathComponent("Sources/\(library)").path]
            }
            let (status, output) = try Self.run("/usr/bin/env", arguments + files, in: folder)
            #expect(status == 0, "README program \(program) (\(files)) does not compile:\n\(output)")
            #expect(!output.contains("warning:"), "README program \(program) (\(files)) warns:\n\(output)")
        }
    }

    /// Runs a program to its end; its status and what it wrote on both outputs.
    static func run(_ program: String, _ arguments: [String], in folder: URL) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.currentDirectoryURL = folder
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
