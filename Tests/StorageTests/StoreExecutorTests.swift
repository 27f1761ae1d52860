import Foundation
import StorageTestSupport
import Testing

@testable import Storage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells when a thread it watches ends: a thread-specific value's destructor runs as its
/// thread exits.
private final class ThreadEnd: Sendable {
    let ended = DispatchSemaphore(value: 0)

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { value in
            let raw: UnsafeMutableRawPointer? = value
            guard let raw else { return }
            Unmanaged<ThreadEnd>.fromOpaque(raw).takeRetainedValue().ended.signal()
        }
        return key
    }()

    /// Watches the current thread.
    func watchCurrentThread() { pthread_setspecific(Self.key, Unmanaged.passRetained(self).toOpaque()) }

    /// Whether the thread ends within `seconds`.
    func ends(within seconds: Int = 20) -> Bool { ended.wait(timeout: .now() + .seconds(seconds)) == .success }
}

/// Counts the jobs running now and the most that ever ran at once.
private final class Running: Sendable {
    private let counts = Locked((now: 0, most: 0))

    func enter() {
        counts.withLock {
            $0.now += 1
            $0.most = max($0.most, $0.now)
        }
    }
    func leave() { counts.withLock { $0.now -= 1 } }
    var now: Int { counts.withLock { $0.now } }
    var most: Int { counts.withLock { $0.most } }
}

/// Waits, polling, until `condition` holds; false if it does not within 20 s.
private func eventually(_ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: 20)
    while !condition() {
        if Date() > deadline { return false }
        usleep(2_000)
    }
    return true
}

/// Whether `semaphore` is signalled within 20 s, waited for without blocking a thread of the
/// cooperative pool (which the task that signals it may need).
private func signalled(_ semaphore: DispatchSemaphore) async -> Bool {
    for _ in 0..<4_000 {
        if semaphore.wait(timeout: .now()) == .success { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return false
}

/// `work` run as the store's `perform` runs it: a `StoreJob` on `executor`, cancelled with the
/// calling task.
private func perform<R: Sendable>(
    on executor: StoreExecutor,
    _ work: @escaping @Sendable () throws -> R
) async throws -> R {
    let job = StoreJob(work)
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in job.start(continuation, on: executor) }
    } onCancel: {
        job.cancel()
    }
}

private struct Refused: Error, Equatable {
    var reason: String
}

/// The tests that block run on threads of their own (`.dedicatedThreads`); the async ones, and
/// the one showing that blocked jobs leave the cooperative pool free, on the pool.
@Suite struct StoreExecutorTests {
    /// A job runs on a thread of the executor's, not on the thread that submits it.
    @Test(.dedicatedThreads) func jobsRunOnThreadsOfTheirOwn() {
        let executor = StoreExecutor(maximumThreads: 2)
        defer { executor.shutDown() }
        let submitter = pthread_self()
        let ranOn = Locked<[pthread_t]>([])
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            #expect(
                executor.submit {
                    ranOn.withLock { $0.append(pthread_self()) }
                    done.signal()
                }
            )
            #expect(done.wait(timeout: .now() + .seconds(20)) == .success)
        }
        #expect(ranOn.withLock { $0.count } == 2)
        #expect(ranOn.withLock { $0 }.allSatisfy { pthread_equal($0, submitter) == 0 })
    }

    /// More blocked jobs than the cooperative pool has threads: the pool still runs tasks.
    @Test func blockedJobsLeaveTheCooperativePoolFree() async throws {
        let count = 2 * ProcessInfo.processInfo.activeProcessorCount + 2
        let executor = StoreExecutor(maximumThreads: count)
        defer { executor.shutDown() }
        let running = Running()
        let gate = DispatchSemaphore(value: 0)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for number in 0..<count {
                group.addTask {
                    try await perform(on: executor) {
                        running.enter()
                        gate.wait()
                        running.leave()
                        return number
                    }
                }
            }
            while running.now < count { try await Task.sleep(for: .milliseconds(5)) }
            // Every pool thread would be blocked if the jobs ran there: this task could not run.
            let poolTask = Task.detached {
                await Task.yield()
                return "ran"
            }
            #expect(await poolTask.value == "ran")
            for _ in 0..<count { gate.signal() }
            var results: [Int] = []
            for try await result in group { results.append(result) }
            #expect(results.sorted() == Array(0..<count))
        }
    }

    @Test(.dedicatedThreads) func jobsRunInParallelUpToTheThreadCount() {
        let executor = StoreExecutor(maximumThreads: 3, idleTimeout: 20)
        defer { executor.shutDown() }
        let running = Running()
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<7 {
            #expect(
                executor.submit {
                    running.enter()
                    gate.wait()
                    running.leave()
                    done.signal()
                }
            )
        }
        #expect(eventually { running.now == 3 })
        usleep(300_000)
        #expect(running.now == 3)  // the other four wait for a thread
        for _ in 0..<7 { gate.signal() }
        for _ in 0..<7 { #expect(done.wait(timeout: .now() + .seconds(20)) == .success) }
        #expect(running.most == 3)
    }

    @Test(.dedicatedThreads) func jobsRunInTheOrderSubmitted() {
        let executor = StoreExecutor(maximumThreads: 1)
        defer { executor.shutDown() }
        let order = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        for number in 0..<200 {
            _ = executor.submit {
                order.withLock { $0.append(number) }
                if number == 199 { done.signal() }
            }
        }
        #expect(done.wait(timeout: .now() + .seconds(20)) == .success)
        #expect(order.withLock { $0 } == Array(0..<200))
    }

    /// A thread that finished its job waits for the next one (no new thread is started for it)
    /// and ends after `idleTimeout` without work; a later job starts a thread again.
    @Test(.dedicatedThreads) func anIdleThreadIsReusedThenEnds() {
        let executor = StoreExecutor(maximumThreads: 4, idleTimeout: 1)
        defer { executor.shutDown() }
        let end = ThreadEnd()
        let threads = Locked<[pthread_t]>([])
        let done = DispatchSemaphore(value: 0)
        let job: StoreExecutor.Job = {
            threads.withLock { $0.append(pthread_self()) }
            done.signal()
        }
        _ = executor.submit {
            end.watchCurrentThread()
            job()
        }
        #expect(done.wait(timeout: .now() + .seconds(20)) == .success)
        usleep(200_000)  // the thread is idle by now
        _ = executor.submit(job)
        #expect(done.wait(timeout: .now() + .seconds(20)) == .success)
        let both = threads.withLock { $0 }
        #expect(both.count == 2 && pthread_equal(both[0], both[1]) != 0)
        #expect(end.ended.wait(timeout: .now() + .milliseconds(400)) == .timedOut)  // not before its time
        #expect(end.ends())
        _ = executor.submit(job)
        #expect(done.wait(timeout: .now() + .seconds(20)) == .success)
    }

    /// `shutDown` refuses new jobs at once, lets the queued ones run, then ends the threads,
    /// idle or busy, without waiting for the idle timeout.
    @Test(.dedicatedThreads) func shutDownRunsTheQueueThenEndsTheThreads() {
        let executor = StoreExecutor(maximumThreads: 1, idleTimeout: 600)
        let busyEnd = ThreadEnd()
        let gate = DispatchSemaphore(value: 0)
        let ran = Locked<[Int]>([])
        #expect(
            executor.submit {
                busyEnd.watchCurrentThread()
                gate.wait()
                ran.withLock { $0.append(0) }
            }
        )
        for number in 1...3 { #expect(executor.submit { ran.withLock { $0.append(number) } }) }
        executor.shutDown()
        #expect(!executor.submit { ran.withLock { $0.append(4) } })
        gate.signal()
        #expect(busyEnd.ends())
        #expect(ran.withLock { $0 } == [0, 1, 2, 3])

        let idle = StoreExecutor(maximumThreads: 2, idleTimeout: 600)
        let idleEnd = ThreadEnd()
        let done = DispatchSemaphore(value: 0)
        _ = idle.submit {
            idleEnd.watchCurrentThread()
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .seconds(20)) == .success)
        #expect(idleEnd.ended.wait(timeout: .now() + .milliseconds(300)) == .timedOut)
        idle.shutDown()
        #expect(idleEnd.ends())
    }

    @Test func resultsAndErrorsComeBack() async throws {
        let executor = StoreExecutor(maximumThreads: 2)
        defer { executor.shutDown() }
        #expect(try await perform(on: executor) { "result" } == "result")
        let refused = await #expect(throws: Refused.self) {
            try await perform(on: executor) { () throws -> Int in throw Refused(reason: "no") }
        }
        #expect(refused == Refused(reason: "no"))
        let busy = await #expect(throws: StorageError.self) {
            try await perform(on: executor) { () throws -> Int in throw StorageError(.busy, "the writer is busy") }
        }
        #expect(busy?.code == .busy)
        #expect(busy?.message == "the writer is busy")
    }

    /// A job whose caller is cancelled while it waits for a thread: the caller gets
    /// `CancellationError` at once, without waiting for the thread, and the work never runs.
    @Test func aJobCancelledBeforeItBeginsIsSkipped() async throws {
        let executor = StoreExecutor(maximumThreads: 1)
        defer { executor.shutDown() }
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        _ = executor.submit {
            started.signal()
            gate.wait()
        }
        #expect(await signalled(started))
        let ran = Locked(false)
        let caller = Task { try await perform(on: executor) { ran.withLock { $0 = true } } }
        try await Task.sleep(for: .milliseconds(100))
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        gate.signal()
        // The thread reaches the cancelled job, then this one.
        try await perform(on: executor) {}
        #expect(ran.withLock { $0 } == false)

        // Cancelled before it was even started.
        let job = StoreJob { ran.withLock { $0 = true } }
        job.cancel()
        await #expect(throws: CancellationError.self) {
            try await withCheckedThrowingContinuation { job.start($0, on: executor) }
        }
        try await perform(on: executor) {}
        #expect(ran.withLock { $0 } == false)
    }

    @Test func workThatHasBegunRunsToItsEnd() async throws {
        let executor = StoreExecutor(maximumThreads: 1)
        defer { executor.shutDown() }
        let started = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let caller = Task {
            try await perform(on: executor) {
                started.signal()
                gate.wait()
                return 42
            }
        }
        #expect(await signalled(started))
        caller.cancel()
        gate.signal()
        #expect(try await caller.value == 42)
    }

    @Test func aShutDownExecutorRefusesWork() async throws {
        let executor = StoreExecutor(maximumThreads: 1)
        executor.shutDown()
        let error = await #expect(throws: StorageError.self) { try await perform(on: executor) { 1 } }
        #expect(error?.code == .closed)
    }
}
