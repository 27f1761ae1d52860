import Foundation

/// Reads the answer to a cursor's `FETCH` (`PostgreSQLConnection.readFetchAnswer`) on a thread of
/// its own, while the connection's owner decodes the rows of the batch before: receiving a batch
/// (libpq parsing the server's messages into a result) then overlaps decoding the one before
/// instead of following it.
///
/// The owner does not use the connection until `wait()` has returned, and the reading touches
/// only libpq (not the connection's state machine), so the connection is never used by two
/// threads at once. The answer is handed over under a pthread mutex (`NSCondition`), which
/// ThreadSanitizer sees.
final class PostgreSQLFetchReader: @unchecked Sendable {
    private let condition = NSCondition()
    /// Set once, by the reading thread, under `condition`'s lock.
    private var answer: PostgreSQLConnection.FetchAnswer?

    /// Starts reading the answer to the `FETCH` in flight on `connection`.
    init(_ connection: PostgreSQLConnection) {
        let thread = Thread { [self] in
            let read = connection.readFetchAnswer()
            condition.lock()
            answer = read
            condition.signal()
            condition.unlock()
        }
        thread.name = "storage.postgresql.fetch"
        thread.start()
    }

    /// The answer, once read (waits for the reading thread).
    func wait() -> PostgreSQLConnection.FetchAnswer {
        condition.lock()
        defer { condition.unlock() }
        while answer == nil { condition.wait() }
        return answer!
    }
}
