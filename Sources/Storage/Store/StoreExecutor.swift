import Foundation

/// The threads a store runs the blocking work of its `async` calls on, so that a call waiting
/// for a busy writer, a lock file or the disk blocks one of these, never a thread of Swift's
/// cooperative pool (which has one thread per core: a few blocked calls would stall every task
/// of the process).
///
/// Threads start on demand, up to `maximumThreads`, and end after `idleTimeout` without work
/// or when the executor shuts down. Jobs run in the order they were submitted.
///
/// `@unchecked Sendable`: every stored `var` is only read and written while `condition` is locked.
final class StoreExecutor: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    let maximumThreads: Int
    private let idleTimeout: TimeInterval
    private let condition = NSCondition()
    private var queue: [Job] = []
    private var head = 0
    private var threads = 0
    private var idleThreads = 0
    private var isShutDown = false

    init(
        maximumThreads: Int = min(64, max(8, 2 * ProcessInfo.processInfo.activeProcessorCount)),
        idleTimeout: TimeInterval = 2
    ) {
        self.maximumThreads = maximumThreads
        self.idleTimeout = idleTimeout
    }

    /// Queues `job`, starting a thread when none is idle and there are fewer than the maximum.
    /// - Returns: `false` (and drops the job) once the executor is shut down.
    func submit(_ job: @escaping Job) -> Bool {
        condition.lock()
        guard !isShutDown else {
            condition.unlock()
            return false
        }
        queue.append(job)
        let pending = queue.count - head
        let startsThread = pending > idleThreads && threads < maximumThreads
        if startsThread { threads += 1 }
        condition.signal()
        condition.unlock()
        if startsThread {
            let thread = Thread { [self] in work() }
            thread.name = "ObjectStore worker"
            thread.start()
        }
        return true
    }

    /// Lets the threads end once the queued jobs have run; later submissions are refused.
    func shutDown() {
        condition.lock()
        isShutDown = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        condition.lock()
        while true {
            if head < queue.count {
                let job = queue[head]
                head += 1
                if head == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    head = 0
                }
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            if isShutDown { break }
            idleThreads += 1
            let woken = condition.wait(until: Date(timeIntervalSinceNow: idleTimeout))
            idleThreads -= 1
            if !woken && head == queue.count { break }
        }
        threads -= 1
        condition.unlock()
    }
}

/// One `async` call's work, run on a `StoreExecutor`: resumes its caller exactly once, with the
/// result, or with `CancellationError` when the caller was cancelled before the work began
/// (work that has begun runs to its end, and its result is delivered).
final class StoreJob<Result: Sendable>: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Result, any Error>?)
        case cancelled
        case running
    }

    private let state = Locked(State.waiting(nil))
    private let work: @Sendable () throws -> Result

    init(_ work: @escaping @Sendable () throws -> Result) {
        self.work = work
    }

    /// Queues the work on `executor`, resuming `continuation` when it is done.
    func start(_ continuation: CheckedContinuation<Result, any Error>, on executor: StoreExecutor) {
        let cancelled = state.withLock { state -> Bool in
            guard case .waiting = state else { return true }
            state = .waiting(continuation)
            return false
        }
        if cancelled { return continuation.resume(throwing: CancellationError()) }
        guard executor.submit({ self.run() }) else {
            let waiting = take()
            waiting?.resume(throwing: StorageError(.closed, "the store was closed"))
            return
        }
    }

    /// Resumes the caller with `CancellationError` unless the work has begun.
    func cancel() {
        take()?.resume(throwing: CancellationError())
    }

    private func run() {
        let continuation = state.withLock { state -> CheckedContinuation<Result, any Error>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .running
            return continuation
        }
        guard let continuation else { return }
        continuation.resume(with: Swift.Result { try work() })
    }

    /// The waiting continuation, taken so that it is resumed once; the job is cancelled then.
    private func take() -> CheckedContinuation<Result, any Error>? {
        state.withLock { state -> CheckedContinuation<Result, any Error>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .cancelled
            return continuation
        }
    }
}
