import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// `insert(csv:into:primaryKey:)` beyond what every backend must do (`ConformanceSuite+CSVImport.swift`):
/// the reader's number typing and chunk boundaries on the in-memory store, and its memory in a
/// child process.
@Suite(.dedicatedThreads) struct CSVImportTests {
    /// A CSV field holding an integer no Double holds, in a column that holds fractions too (so
    /// real), is refused with the line and the column, and nothing of the file is stored; the same
    /// digits beside text make a text column and are kept exactly.
    @Test func anIntegerNoDoubleHoldsIsNotRoundedIntoARealColumn() throws {
        try TemporaryDirectory.with { directory in
            let store = try BackendFixture.inMemory.openStore(in: directory)
            let csv = Data("id,v\n1,0.5\n2,9007199254740993\n".utf8)
            do {
                try store.insert(csv: csv, into: "numbers")
                Issue.record("9007199254740993 was stored in a real column")
            } catch let error as StorageError {
                #expect(error.code == .valueOutOfRange)
                #expect(error.column == "v")
                #expect(error.collection == "numbers")
                #expect(error.message.hasPrefix("line 3: "), "\(error.message)")
            }
            #expect(try store.count(in: "numbers") == 0)
            try store.insert(csv: Data("id,v\n1,x\n2,9007199254740993\n".utf8), into: "texts")
            let values = try store.fetchDictionaries(from: "texts", orderBy: [.ascending("id")]).map { $0["v"] }
            #expect(values == [.text("x"), .text("9007199254740993")])
        }
    }

    /// Records that cross the reader's 1 MiB chunks (a quoted field, and a CRLF whose CR ends one
    /// read and whose LF starts the next) read the same from a file as the text says.
    @Test func recordsAcrossChunksReadTheSameFromAFile() throws {
        try TemporaryDirectory.with { directory in
            let chunk = 1 << 20
            let header = "id,note\r\n"
            let prefix = "1,\""
            // The first record's CR is the chunk's last byte, its LF the next chunk's first.
            let long = String(repeating: "a", count: chunk - header.utf8.count - prefix.utf8.count - 2)
            let quotedBreak =
                String(repeating: "b", count: chunk / 2) + "\r\n\"\"" + String(repeating: "c", count: chunk)
            let text = header + prefix + long + "\"\r\n" + "2,\"" + quotedBreak + "\"\r\n3,end"
            #expect(text.utf8.count > 2 * chunk)
            let file = directory.appendingPathComponent("big.csv")
            try Data(text.utf8).write(to: file)
            let store = try BackendFixture.inMemory.openStore(in: directory)
            #expect(try store.insert(csv: file, into: "big") == 3)
            let rows = try store.fetchDictionaries(from: "big", orderBy: [.ascending("id")])
            #expect(
                rows.map { $0["note"] } == [
                    .text(long), .text(quotedBreak.replacingOccurrences(of: "\"\"", with: "\"")), .text("end"),
                ]
            )
        }
    }

    /// Memory does not grow with the file, for CSV, NDJSON and a JSON array: a 12 MB file raises
    /// the peak resident set by less than 5 MB more than a 2 MB file does (reading the whole input
    /// at once would add at least the 10 MB between them; parsing it whole, as JSON imports did
    /// before they were streamed, twenty times that). Each import runs in a child process of its
    /// own (the crash writer's `csv` workload), so other tests do not move the figures; the two
    /// of a format run side by side. Small enough for CI's debug and sanitizer runs;
    /// docs/BENCHMARKS.md has the 100 MB figures, measured with the same workload.
    ///
    /// `short-ndjson` is NDJSON of tiny records (`{"n": 1}`), 1 MB against 5 MB: about 360,000
    /// records more, so that memory held per record shows too (an import kept every stored key
    /// for its change record, 24 bytes a record: 8.6 MB here, 116 MB for a 1 GB file).
    @Test(.serialized, arguments: ["csv", "ndjson", "json", "short-ndjson"])
    func memoryDoesNotGrowWithTheFile(_ format: String) async throws {
        let directory = try TemporaryDirectory("\(format)-memory")
        defer { directory.remove() }
        // Both children start before either is waited for, so they run side by side; the test
        // suspends while they run, holding no thread of the cooperative pool.
        let sizes = format == "short-ndjson" ? (1, 5) : (2, 12)
        let small = try Self.ChildImport(megabytes: sizes.0, format: format, in: directory.url)
        let large = try Self.ChildImport(megabytes: sizes.1, format: format, in: directory.url)
        let smallGrowth = try await small.finish()
        let largeGrowth = try await large.finish()
        print(
            "\(format) memory: peak resident growth \(smallGrowth) KiB for \(sizes.0) MB, \(largeGrowth) KiB for"
                + " \(sizes.1) MB"
        )
        #expect(
            largeGrowth - smallGrowth < 5 * 1024,
            "\(sizes.0) MB: \(smallGrowth) KiB, \(sizes.1) MB: \(largeGrowth) KiB"
        )
    }

    /// A generated file of `megabytes` (`csv`, `ndjson` or `json`) ingested into a SQLite store by
    /// a child process.
    struct ChildImport {
        let process = Process()
        let output = Pipe()
        let exited = Gate()
        let rows: Int
        let path: String

        init(megabytes: Int, format: String, in directory: URL) throws {
            let folder = directory.appendingPathComponent("\(format)-\(megabytes)", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("large." + (format == "short-ndjson" ? "ndjson" : format))
            rows = try CSVImportTests.writeLarge(format, to: file, bytes: megabytes * 1_000_000)
            path = DiskBackend.sqlite.storePath(in: folder)
            process.executableURL = CrashHarness.executable
            process.arguments = ["--backend", "sqlite", "--path", path, "--workload", "csv", "--csv", file.path]
            process.standardOutput = output
            let exited = exited
            process.terminationHandler = { _ in exited.open() }
            try process.run()
        }

        /// Waits for the child, checks that every record arrived, and returns the growth of its
        /// peak resident set over its resident set before the import, in KiB.
        func finish() async throws -> Int {
            // The child prints one short line, which the pipe holds until it is read.
            try await exited.arrival()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let line = String(decoding: data, as: UTF8.self)
            #expect(process.terminationStatus == 0, "\(line)")
            var figures: [String: Int] = [:]
            for part in line.split(whereSeparator: \.isWhitespace) {
                let pair = part.split(separator: "=")
                if pair.count == 2, let value = Int(pair[1]) { figures[String(pair[0])] = value }
            }
            #expect(figures["rows"] == rows)
            let store = try DiskBackend.sqlite.openStore(path: path)
            let last = try await store.fetchDictionaries(from: "ingested", where: Column("_key") == Int64(rows))
            #expect(last.first?["n"] == .integer(Int64(rows)))
            try await store.close()
            return try #require(figures["peak"]) - (try #require(figures["rss"]))
        }
    }

    /// Writes records of about 400 bytes until the file holds `bytes`, as CSV, NDJSON or one
    /// JSON array (`format`: `csv`, `ndjson`, `json`); returns the record count.
    static func writeLarge(_ format: String, to file: URL, bytes: Int) throws -> Int {
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.write(
            contentsOf: Data((format == "csv" ? "n,name,value,comment\n" : format == "json" ? "[\n" : "").utf8)
        )
        let filler = String(repeating: "lorem ipsum dolor sit amet ", count: 13)
        var written = 0
        var rows = 0
        var chunk = ""
        while written < bytes {
            rows += 1
            switch format {
            case "csv": chunk += "\(rows),\"name \(rows), quoted\",\(Double(rows) * 0.25),\(filler)\(rows)\n"
            case "short-ndjson": chunk += #"{"n": \#(rows)}"# + "\n"
            default:
                chunk +=
                    (format == "json" && rows > 1 ? ",\n" : "")
                    + #"{"n": \#(rows), "name": "name \#(rows), \"quoted\"", "value": \#(Double(rows) * 0.25), "comment": "\#(filler)\#(rows)"}"#
                    + (format == "ndjson" ? "\n" : "")
            }
            if chunk.utf8.count > 1 << 20 || written + chunk.utf8.count >= bytes {
                written += chunk.utf8.count
                try handle.write(contentsOf: Data(chunk.utf8))
                chunk = ""
            }
        }
        if format == "json" { try handle.write(contentsOf: Data("\n]\n".utf8)) }
        return rows
    }
}
