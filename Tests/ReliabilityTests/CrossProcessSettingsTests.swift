import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

// The time limit only stops a hang. Swift Testing counts it from when the test case starts, and
// a case can then wait for one of Swift's cooperative threads (one per core): with one minute,
// these failed in a clean CI run whose bodies took seconds, while tests blocked in `waitpid` held
// both threads. Those tests now run on threads of their own (`.dedicatedThreads`); the margin stays.
/// `Settings` reads see what another process committed (issue 13, item 11): the settings cache is
/// checked against the engine's commit counter (`ExternalCommitCounter`) on every read.
@Suite(.timeLimit(.minutes(10))) struct CrossProcessSettingsTests {
    /// Runs the crash writer's `setting` workload, which sets `greeting` to `value` in a process
    /// of its own and exits.
    static func setInAnotherProcess(_ backend: DiskBackend, path: String, value: String) throws {
        let process = Process()
        process.executableURL = CrashHarness.executable
        process.arguments = ["--backend", backend.rawValue, "--path", path, "--workload", "setting", "--value", value]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && text.contains("ack 1"), "\(text)")
    }

    /// The value is read (and cached) here, changed twice by other processes, and each read here
    /// afterwards returns the other process's value, not the cached one; a change made here is
    /// still seen at once.
    @Test(arguments: DiskBackend.allCases)
    func aReadSeesAnotherProcesssCommit(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("settings-\(backend)") { directory in
            let path = backend.storePath(in: directory)
            let store = try backend.openStore(path: path)
            defer { try? store.close() }
            let settings = try CrossProcessSettings(store: store)
            #expect(settings.greeting == "none")
            #expect(settings.greeting == "none")  // now served from the cache

            try Self.setInAnotherProcess(backend, path: path, value: "hello")
            #expect(settings.greeting == "hello")
            #expect(settings.greeting == "hello")

            try Self.setInAnotherProcess(backend, path: path, value: "again")
            #expect(settings.greeting == "again")

            settings.greeting = "mine"
            #expect(settings.greeting == "mine")
            // Another instance on the same store shares the cache, and sees the same.
            #expect(try CrossProcessSettings(store: store).greeting == "mine")
        }
    }
}
