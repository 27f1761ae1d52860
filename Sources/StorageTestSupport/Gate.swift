import Foundation
import Storage

/// A one-shot signal between threads. Tasks wait for it with `arrival()`, which suspends
/// instead of blocking a thread of the cooperative pool (the pool has one thread per core: tests
/// blocking it would wait for tasks that cannot run).
package final class Gate: Sendable {
    /// A closed gate.
    package init() {}

    private let semaphore = DispatchSemaphore(value: 0)
    private let isOpen = Locked(false)

    package func open() {
        isOpen.withLock { $0 = true }
        semaphore.signal()
    }

    /// Blocks the calling thread (not a task) until the gate opens, or `seconds` pass.
    /// - Returns: whether the gate opened.
    package func wait(seconds: Double) -> Bool {
        guard semaphore.wait(timeout: .now() + seconds) == .success else { return false }
        semaphore.signal()
        return true
    }

    /// Suspends the calling task until the gate opens.
    package func arrival() async throws {
        while !isOpen.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(2)) }
    }
}
