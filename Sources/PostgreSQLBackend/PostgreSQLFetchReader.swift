import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the answer to a cursor's `FETCH` (`PostgreSQLConnection.readFetchAnswer`) on a thread of
/// its own, while the connection's owner decodes the rows of the batch before: receiving a batch
/// (libpq parsing the server's messages into a result) then overlaps decoding the one before
/// instead of following it.
///
/// The owner does not use the connection until `wait()` has returned, and the reading touches
/// only libpq (not the connection's state machine), so the connection is never used by two
/// threads at once. The answer is handed over by `pthread_join`, which ThreadSanitizer sees.
final class PostgreSQLFetchReader: @unchecked Sendable {
    private let connection: PostgreSQLConnection
    /// Written by the reading thread before it ends; read only after `pthread_join`.
    private var answer: PostgreSQLConnection.FetchAnswer?
    #if canImport(Darwin)
    private var thread: pthread_t?
    #else
    private var thread = pthread_t()
    #endif
    /// Whether there is no reading thread left to join (joined, or never started).
    private var joined = false

    private init(_ connection: PostgreSQLConnection) {
        self.connection = connection
    }

    /// Starts reading the answer to the `FETCH` in flight on `connection`, or returns `nil` when
    /// no thread could be started (the caller then reads it itself, when it needs it).
    static func start(_ connection: PostgreSQLConnection) -> PostgreSQLFetchReader? {
        let reader = PostgreSQLFetchReader(connection)
        let context = Unmanaged.passRetained(reader).toOpaque()
        guard pthread_create(&reader.thread, nil, readingThread, context) == 0 else {
            // No thread to join: `deinit` must not wait for one.
            reader.joined = true
            Unmanaged<PostgreSQLFetchReader>.fromOpaque(context).release()
            return nil
        }
        return reader
    }

    /// The answer, once read (waits for the reading thread).
    func wait() -> PostgreSQLConnection.FetchAnswer {
        join()
        return answer ?? PostgreSQLConnection.FetchAnswer()
    }

    private func join() {
        guard !joined else { return }
        joined = true
        #if canImport(Darwin)
        if let thread { pthread_join(thread, nil) }
        #else
        pthread_join(thread, nil)
        #endif
    }

    deinit {
        // Never the case through `PostgreSQLCursorStream`, which waits for every reader it
        // starts; a thread still reading must not outlive the reader it writes to.
        join()
    }

    fileprivate func read() {
        answer = connection.readFetchAnswer()
    }
}

#if canImport(Darwin)
private func readingThread(_ context: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
    Unmanaged<PostgreSQLFetchReader>.fromOpaque(context).takeRetainedValue().read()
    return nil
}
#else
private func readingThread(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    Unmanaged<PostgreSQLFetchReader>.fromOpaque(context).takeRetainedValue().read()
    return nil
}
#endif
