import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// The parts of the server-side API of issue 13 that need the package's own engines: a stream's
/// memory in a child process, the files a close frees, LMDB stores closing together, and error
/// matching. The behaviours every backend must have are `ConformanceSuite`'s
/// (`ConformanceSuite+StoreAPI.swift`).
@Suite struct StoreAPITests {
    struct Item: Codable, Equatable, Sendable {
        var id: Int64
        var group: String?
        var rank: Int
    }

    static func items(_ range: ClosedRange<Int64>) -> [Item] {
        range.map { Item(id: $0, group: $0 % 3 == 0 ? nil : "g\($0 % 3)", rank: Int($0 % 4)) }
    }

    // MARK: Streams

    /// A stream of `STORAGE_STREAM_RECORDS` records (100,000 by default; 1,000,000 for the figure
    /// in the report) grows the resident set by less than 64 MB. The stream runs in a child
    /// process (the crash writer's `stream` workload), so the tests running beside this one do not
    /// move the figure: in the parallel run their allocations grew this process by 70 MB while
    /// the stream alone grows it by less than 1.
    @Test func aLongStreamStaysInBoundedMemory() async throws {
        let records = ProcessInfo.processInfo.environment["STORAGE_STREAM_RECORDS"].flatMap { Int($0) } ?? 100_000
        let directory = try TemporaryDirectory("api-stream-memory")
        defer { directory.remove() }
        let process = Process()
        let output = Pipe()
        let exited = Gate()
        process.executableURL = CrashHarness.executable
        process.arguments = [
            "--backend", "sqlite", "--path", DiskBackend.sqlite.storePath(in: directory.url),
            "--workload", "stream", "--count", "\(records)",
        ]
        process.standardOutput = output
        process.terminationHandler = { _ in exited.open() }
        try process.run()
        // Suspends while the child runs, holding no thread of the cooperative pool; the child
        // prints one short line, which the pipe holds until it is read.
        try await exited.arrival()
        let line = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(line)")
        var figures: [String: Int] = [:]
        for part in line.split(whereSeparator: \.isWhitespace) {
            let pair = part.split(separator: "=")
            if pair.count == 2, let value = Int(pair[1]) { figures[String(pair[0])] = value }
        }
        let grown = try #require(figures["grown"], "\(line)") / 1024
        print("stream of \(figures["records"] ?? -1) records: the resident set grew by \(grown) MB")
        #expect(figures["records"] == records)
        #expect(grown < 64)
    }

    // MARK: Closing

    @Test(arguments: DiskBackend.allCases)
    func closingFreesTheFilesAndRefusesEveryLaterCall(_ backend: DiskBackend) async throws {
        let directory = try TemporaryDirectory("api-close")
        defer { directory.remove() }
        let path = backend.storePath(in: directory.url)
        let baseline = Self.descriptors(under: directory.url.path)
        let store = try backend.openStore(path: path)
        try await store.save(contentsOf: Self.items(1...20))
        _ = try await store.read { tx in try tx.count(Item.self) }
        for try await _ in store.stream(Item.self, batchSize: 5) {}
        #expect(Self.descriptors(under: directory.url.path) > baseline)

        let changes = store.changes(of: Item.self)
        try await store.close()
        try await store.close()
        #expect(Self.descriptors(under: directory.url.path) == baseline)
        for await _ in changes { Issue.record("a change after the close") }  // ended by the close
        for await _ in store.changes(of: Item.self) { Issue.record("a change after the close") }
        do {
            _ = try await store.fetchAll(Item.self)
            Issue.record("a closed store answered")
        } catch StorageError.Code.closed {
        }
        await #expect(throws: StorageError.self) { try await store.save(Item(id: 1, group: nil, rank: 0)) }
        await #expect(throws: StorageError.self) { for try await _ in store.stream(Item.self) {} }

        // The files can go, and the store opens again from nothing.
        try FileManager.default.removeItem(atPath: path)
        for suffix in ["-lock", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let again = try backend.openStore(path: path)
        #expect(try await again.count(Item.self) == 0)
        try await again.close()
        #expect(Self.descriptors(under: directory.url.path) == baseline)
    }

    @Test func storesOnOneLMDBFileCloseTogetherWithoutWaitingForEachOther() async throws {
        let directory = try TemporaryDirectory("api-close-lmdb")
        defer { directory.remove() }
        let path = DiskBackend.lmdb.storePath(in: directory.url)
        for _ in 0..<20 {
            let stores = try (0..<4).map { _ in try DiskBackend.lmdb.openStore(path: path) }
            try await stores[0].save(Item(id: 1, group: nil, rank: 0))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for store in stores { group.addTask { try await store.close() } }
                group.addTask { try await DiskBackend.lmdb.openStore(path: path).close() }
                try await group.waitForAll()
            }
        }
        let last = try DiskBackend.lmdb.openStore(path: path)
        #expect(try await last.count(Item.self) == 1)
        try await last.close()
    }

    /// The descriptors of the process open on files under `folder`, as `lsof` would list them.
    static func descriptors(under folder: String) -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter { entry in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry)) ?? ""
            return target.hasPrefix(folder)
        }.count
    }

    // MARK: Errors

    @Test func errorsMatchByCodeAndDescribeWhatWasWrong() throws {
        let store = ObjectStore(backend: InMemoryStorageBackend())
        try store.save(Item(id: 1, group: nil, rank: 0))
        do {
            _ = try store.fetchAll(Item.self, where: Column("colour") == "red")
            Issue.record("an unknown column was accepted")
        } catch StorageError.Code.constraintViolation {
            Issue.record("matched the wrong code")
        } catch StorageError.Code.unknownColumn {
        }
        do {
            _ = try store.fetchAll(Item.self, where: Column("colour") == "red")
        } catch {
            #expect(error.localizedDescription.contains("collection: Item"))
            #expect(error.localizedDescription.contains("column: colour"))
        }
    }
}
