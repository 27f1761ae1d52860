import Foundation
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Item 5 of docs/RELIABILITY.md: one writer and four readers on real threads, and several writer
/// processes on one store.
@Suite(.dedicatedThreads) struct ConcurrencyTests {
    /// An account of the transfer workload; transfers keep the sum of balances constant.
    struct Account: Codable, Equatable {
        var id: Int64
        var balance: Int64
        /// How many transfers touched the account.
        var moves: Int64
    }

    static let accounts = 16
    static let openingBalance: Int64 = 1_000
    static let total = Int64(accounts) * openingBalance

    /// How long the writer and the readers run, per backend.
    static let duration = Duration.seconds(2)
    /// How long to wait for the threads once `duration` is over before calling it a deadlock.
    static let deadlockLimit = Duration.seconds(60)

    /// What one thread saw.
    struct Outcome: Sendable {
        var operations = 0
        var failures: [String] = []
    }

    /// One writer moves money between random accounts, one transfer per transaction; four
    /// readers (two on the writer's `ObjectStore`, two on one of their own over the same files)
    /// read every account in one read transaction, alternately through `fetchAll` and through
    /// a streamed `forEach`, and check that the balances add up and that no reader ever sees
    /// fewer transfers than it saw before.
    @Test(arguments: DiskBackend.allCases)
    func readersSeeConsistentSnapshotsWhileOneWriterRuns(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("concurrency-\(backend)") { directory in
            let path = backend.storePath(in: directory)
            let store = try backend.openStore(path: path)
            try store.save(
                contentsOf: (1...Int64(Self.accounts)).map { Account(id: $0, balance: Self.openingBalance, moves: 0) }
            )
            let second = try backend.openStore(path: path)
            let deadline = ContinuousClock.now + Self.duration
            let outcomes = Locked<[String: Outcome]>([:])
            let group = DispatchGroup()

            func start(_ name: String, _ work: @escaping @Sendable () -> Outcome) {
                group.enter()
                let thread = Thread {
                    let outcome = work()
                    outcomes.withLock { $0[name] = outcome }
                    group.leave()
                }
                thread.name = name
                thread.start()
            }

            start("writer") { Self.transfer(on: store, until: deadline) }
            for reader in 0..<4 {
                start("reader \(reader)") {
                    Self.audit(on: reader.isMultiple(of: 2) ? store : second, streamed: reader < 2, until: deadline)
                }
            }
            let finished = group.wait(timeout: .now() + .seconds(Int(Self.deadlockLimit.components.seconds) + 2))
            try #require(finished == .success, "the threads did not finish: a deadlock")

            let seen = outcomes.withLock { $0 }
            #expect(seen.count == 5)
            for (name, outcome) in seen.sorted(by: { $0.key < $1.key }) {
                #expect(outcome.failures.isEmpty, "\(name): \(outcome.failures.prefix(3))")
                #expect(outcome.operations > 0, "\(name) did nothing in \(Self.duration)")
            }
            let final = try store.fetchAll(Account.self)
            #expect(final.reduce(0) { $0 + $1.balance } == Self.total)
            #expect(final.reduce(0) { $0 + $1.moves } == 2 * Int64(seen["writer"]?.operations ?? -1))
            let reads = (0..<4).map { seen["reader \($0)"]?.operations ?? 0 }
            print(
                "concurrency \(backend): \(seen["writer"]?.operations ?? 0) transfers, reads \(reads) in \(Self.duration)"
            )
        }
    }

    private static func transfer(on store: ObjectStore, until deadline: ContinuousClock.Instant) -> Outcome {
        var outcome = Outcome()
        while ContinuousClock.now < deadline {
            let from = Int64.random(in: 1...Int64(accounts))
            let target = (from - 1 + Int64.random(in: 1..<Int64(accounts))) % Int64(accounts) + 1
            let amount = Int64.random(in: 1...50)
            do {
                try store.transaction { tx in
                    guard var source = try tx.fetch(Account.self, id: from),
                        var destination = try tx.fetch(Account.self, id: target)
                    else { throw StorageError(.missingValue, "an account is missing") }
                    source.balance -= amount
                    source.moves += 1
                    // Saved apart, so a reader that could see half a transaction would see it.
                    try tx.save(source)
                    destination.balance += amount
                    destination.moves += 1
                    try tx.save(destination)
                }
                outcome.operations += 1
            } catch {
                outcome.failures.append("transfer: \(error)")
                return outcome
            }
        }
        return outcome
    }

    private static func audit(on store: ObjectStore, streamed: Bool, until deadline: ContinuousClock.Instant) -> Outcome
    {
        var outcome = Outcome()
        var lastMoves: Int64 = 0
        var useStream = streamed
        while ContinuousClock.now < deadline {
            do {
                var count = 0
                var sum: Int64 = 0
                var moves: Int64 = 0
                if useStream {
                    try store.forEach(Account.self) { account in
                        count += 1
                        sum += account.balance
                        moves += account.moves
                    }
                } else {
                    for account in try store.fetchAll(Account.self) {
                        count += 1
                        sum += account.balance
                        moves += account.moves
                    }
                }
                useStream.toggle()
                if count != accounts || sum != total {
                    outcome.failures.append(
                        "read \(count) accounts summing to \(sum), expected \(accounts) and \(total)"
                    )
                }
                if moves < lastMoves {
                    outcome.failures.append("a read saw \(moves) moves after one that saw \(lastMoves)")
                }
                lastMoves = moves
                outcome.operations += 1
            } catch {
                outcome.failures.append("read: \(error)")
                return outcome
            }
        }
        return outcome
    }

    /// The counter workload's records (see Sources/StorageCrashWriter/CounterWorkload.swift):
    /// the same collection names, read back here.
    struct LoadCounter: Codable {
        var id: Int64
        var value: Int64
    }

    struct LoadTick: Codable {
        var id: Int64
        var writer: Int64
        var value: Int64
    }

    static let writerProcesses = 3
    static let incrementsPerWriter = 60

    /// Three writer processes increment one counter on one store, each in read-modify-write
    /// transactions, all started at once. The final counter equals the number of commits they
    /// acknowledged, and the values they wrote are exactly 1...n: no increment was lost or
    /// applied twice, so the store serialized the processes' transactions.
    @Test(arguments: DiskBackend.allCases)
    func writerProcessesLoseNoIncrement(_ backend: DiskBackend) throws {
        try TemporaryDirectory.with("counter-\(backend)") { directory in
            let path = backend.storePath(in: directory)
            // Created first, so that the writers race on commits rather than on creating the store.
            try backend.openStore(path: path).save(LoadCounter(id: 1, value: 0))
            var writers: [(process: Process, output: Pipe)] = []
            for writer in 1...Self.writerProcesses {
                let process = Process()
                process.executableURL = CrashHarness.executable
                process.arguments = [
                    "--backend", backend.rawValue, "--path", path, "--workload", "counter",
                    "--writer", String(writer), "--count", String(Self.incrementsPerWriter),
                ]
                let output = Pipe()
                process.standardOutput = output
                writers.append((process, output))
            }
            for writer in writers { try writer.process.run() }
            var acknowledged: [Int64: Int] = [:]
            for (index, writer) in writers.enumerated() {
                let text = String(decoding: writer.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                writer.process.waitUntilExit()
                let lines = text.split(separator: "\n")
                #expect(writer.process.terminationStatus == 0, "writer \(index + 1): \(lines.suffix(2))")
                for line in lines where line.hasPrefix("ack ") {
                    let fields = line.split(separator: " ")
                    if fields.count == 3, let number = Int64(fields[1]) { acknowledged[number, default: 0] += 1 }
                }
            }
            let sum = acknowledged.values.reduce(0, +)
            #expect(sum == Self.writerProcesses * Self.incrementsPerWriter)
            let store = try backend.openStore(path: path)
            #expect(try store.fetch(LoadCounter.self, id: 1)?.value == Int64(sum))
            let ticks = try store.fetchAll(LoadTick.self)
            #expect(ticks.count == sum)
            #expect(ticks.map(\.value).sorted() == (1...Int64(max(1, sum))).map { $0 })
            for (writer, count) in acknowledged {
                #expect(ticks.filter { $0.writer == writer }.count == count)
            }
        }
    }
}
