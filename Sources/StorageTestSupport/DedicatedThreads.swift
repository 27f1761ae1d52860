import Foundation
package import Testing

/// A suite or test trait that runs each test case on threads of its own instead of Swift's
/// cooperative pool: `@Suite(.dedicatedThreads)`.
///
/// Swift Testing calls a synchronous test function, and resumes an asynchronous one, on the
/// cooperative pool, which has as many threads as the machine has cores. A test that waits for a
/// child process, a lock or a long computation holds one of them for the whole wait; on two cores,
/// two such tests leave the pool no thread, and the asynchronous tests started beside them cannot
/// resume (their time limits then run out while they wait for a thread, not for their work). With
/// this trait the test runs under a task executor preference for ``DedicatedThreadsExecutor``:
/// the same task (so `#expect` and `Issue.record` still report to the test), on a thread that
/// nothing else needs. As many such test cases run at once as the machine has cores (the others
/// wait suspended, holding no thread), as many as the pool ran before: the child processes they
/// wait for need the cores too, and their tests' timeouts were measured at that load.
///
/// Not for a test with a time limit: Swift Testing counts the wait for a slot against it (a clean
/// CI run timed out such tests after 600 s behind the long ones). Those stay on the pool, which
/// the long blocking tests no longer hold.
package struct DedicatedThreadsTrait: TestTrait, SuiteTrait, TestScoping {
    /// Applies to every test of a suite, and to the suites nested in it.
    package var isRecursive: Bool { true }

    /// One slot per core, shared by every test case with the trait; `STORAGE_DEDICATED_SLOTS=n`
    /// sets another count (to measure whether the tests holding the slots leave the cores idle:
    /// on a busy shared machine that could not be told).
    static let slots = Slots(
        ProcessInfo.processInfo.environment["STORAGE_DEDICATED_SLOTS"].flatMap { Int($0) }
            ?? ProcessInfo.processInfo.activeProcessorCount
    )

    /// Runs `function` on ``DedicatedThreadsExecutor/shared`` when it is a test case; a suite's
    /// own scope stays where it is.
    /// - Parameters:
    ///   - test: the test or suite.
    ///   - testCase: the test case, or nil for a suite.
    ///   - function: the test case, or the suite's children.
    /// - Throws: what `function` throws.
    package func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        await Self.slots.acquire()
        defer { Self.slots.release() }
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) {
            try await withTaskExecutorPreference(DedicatedThreadsExecutor.shared) { try await function() }
        } else {
            try await function()
        }
    }
}

/// A counting semaphore for tasks: `acquire()` suspends (holding no thread) until a slot is free.
final class Slots: @unchecked Sendable {
    // @unchecked Sendable: `free` and `waiting` are read and written only with `lock` held.
    private let lock = NSLock()
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = max(1, count) }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            let now = free > 0
            if now { free -= 1 } else { waiting.append(continuation) }
            lock.unlock()
            if now { continuation.resume() }
        }
    }

    func release() {
        lock.lock()
        let next = waiting.isEmpty ? nil : waiting.removeFirst()
        if next == nil { free += 1 }
        lock.unlock()
        next?.resume()
    }
}

extension Trait where Self == DedicatedThreadsTrait {
    /// Runs each test case on threads of its own, off Swift's cooperative pool (see
    /// ``DedicatedThreadsTrait``): for tests that block, as those waiting for child processes do.
    package static var dedicatedThreads: Self { Self() }
}

/// A task executor that runs each job on a thread of its own: an idle one when there is one, or a
/// new one, up to ``maximumThreads``. A job that blocks does not delay another, so a test blocking
/// in `waitpid` while a child task it started is meant to run does not deadlock. The threads are
/// kept for the next jobs and live as long as the process (the executor is never released: a
/// task's executor preference does not retain it).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
package final class DedicatedThreadsExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: `jobs` and `idle` are read and written only with `condition` locked.

    /// The one instance, for the life of the process.
    package static let shared = DedicatedThreadsExecutor()

    /// The most threads it starts; beyond them jobs wait for a thread. Swift Testing runs a few
    /// test cases at once (twice the cores), each on one thread, or a few more when it starts
    /// child tasks.
    package static let maximumThreads = 64

    private let condition = NSCondition()
    /// Jobs no thread has taken yet.
    private var jobs: [UnownedJob] = []
    /// Threads waiting for a job.
    private var idle = 0
    /// Threads started.
    private var threads = 0

    private init() {}

    /// Hands `job` to an idle thread, or starts a thread for it when every thread is busy (or
    /// already promised to an earlier job) and fewer than ``maximumThreads`` run.
    /// - Parameter job: the job.
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        let start = idle < jobs.count && threads < Self.maximumThreads
        if start { threads += 1 } else { condition.signal() }
        condition.unlock()
        if start {
            let thread = Thread { [self] in work() }
            thread.name = "storage-test"
            thread.start()
        }
    }

    /// A thread's loop: take the oldest job, run it, wait for the next.
    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
