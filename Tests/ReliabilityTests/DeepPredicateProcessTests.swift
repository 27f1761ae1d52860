import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Predicates nested thousands deep, queried on the main thread of a process of their own (the
/// crash writer's `deep` workload): the conformance suite's checks run on the test runner's
/// threads and in tasks, and a command-line tool or a script runs on its main thread.
@Suite(.dedicatedThreads) struct DeepPredicateProcessTests {
    @Test(arguments: DiskBackend.everyCase)
    func deepPredicatesAnswerOrAreRefusedOnTheMainThread(_ backend: DiskBackend) throws {
        if backend == .postgresql { _ = try PostgreSQLTestServer.url() }  // the child inherits its URL
        try TemporaryDirectory.with("deep-predicates") { directory in
            let process = Process()
            let output = Pipe()
            process.executableURL = CrashHarness.executable
            process.arguments = [
                "--backend", backend.rawValue, "--path", backend.storePath(in: directory),
                "--workload", "deep", "--depths", "1000,5000,10000",
            ]
            process.standardOutput = output
            try process.run()
            let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                .split(separator: "\n").map(String.init)
            process.waitUntilExit()
            #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(lines)")
            // An even number of negations: the records aged 30 or more.
            let adults = Self.alternatingCount(0)
            #expect(
                lines == [
                    "not 1000 \(adults)", "alternating 1000 \(Self.alternatingCount(1000))",
                    "not 5000 \(adults)", "alternating 5000 invalidQuery",
                    "not 10000 \(adults)", "alternating 10000 invalidQuery",
                ]
            )
        }
    }

    /// How many of the workload's records `&&`/`||` alternating `levels` deep selects, worked out
    /// without a store.
    static func alternatingCount(_ levels: Int) -> Int {
        (1...40).count { id in
            var holds = 15 + (id * 7) % 50 >= 30
            for level in 0..<levels {
                let key = level % 45 + 1
                holds = level % 2 == 0 ? (id != key && holds) : (id == key || holds)
            }
            return holds
        }
    }
}
