import Foundation
import Storage

/// The bound on the connections a store has open to one server (`Configuration.
/// maximumConnections`), shared by the pools to that server (the primary has two), with their
/// idle connections: every connection a pool opens is counted from before it is made until it
/// is closed, whether idle or in use, so no number of threads, nested reads or processes' worth
/// of callers makes the store open more. A check-out at the limit waits for a connection to
/// come back, at most `Configuration.connectionTimeout`, then fails with `.busy`.
///
/// `@unchecked Sendable`: every stored property but the constants is read and written only
/// with `condition` locked.
final class PostgreSQLConnectionLimit: @unchecked Sendable {
    /// The most connections open at once.
    let maximum: Int
    /// How long a check-out at the limit waits.
    private let timeout: Duration
    /// The most idle connections each pool keeps.
    private let idleLimit: Int
    /// Where the server is, for messages.
    private let server: String
    private let condition = NSCondition()
    /// The idle connections of each pool (by `register()`'s number).
    private var idle: [[PostgreSQLConnection]] = []
    /// The connections open or being opened.
    private var open = 0
    /// The most connections that were open at once.
    private var peak = 0
    /// The check-outs waiting for a connection.
    private var waiting = 0
    private var closed = false

    init(maximum: Int, timeout: Duration, idleLimit: Int, server: String) {
        self.maximum = max(1, maximum)
        self.timeout = timeout
        self.idleLimit = max(0, idleLimit)
        self.server = server
    }

    /// A number for a new pool's idle connections.
    func register() -> Int {
        condition.lock()
        defer { condition.unlock() }
        idle.append([])
        return idle.count - 1
    }

    /// The connections open now (idle or in use), and the most that were open at once.
    var counts: (open: Int, peak: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (open, peak)
    }

    /// An idle connection of pool `slot` (one the server ended meanwhile is closed, not handed
    /// out), or a new one made by `connect` while fewer than `maximum` are open; at the limit, an
    /// idle connection of another pool is closed to make room, or the call waits for one to come
    /// back.
    /// - Throws: `.closed` after `close()`; `.busy` naming the limit when none came free within
    ///   the timeout; what `connect` throws.
    func checkOut(slot: Int, connect: () throws -> PostgreSQLConnection) throws -> PostgreSQLConnection {
        let deadline = ContinuousClock.now + timeout
        var evicted: PostgreSQLConnection?
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw StorageError(.closed, "the store was closed")
            }
            if let connection = idle[slot].popLast() {
                // One the server ended while it was idle (a crash, a lost primary) is closed and
                // its place taken by the next idle one, or a new one.
                guard connection.endedWhileIdle() else {
                    condition.unlock()
                    return connection
                }
                open -= 1
                condition.unlock()
                connection.close()
                condition.lock()
                continue
            }
            if open < maximum {
                open += 1
                peak = max(peak, open)
                break
            }
            if let other = idle.indices.first(where: { !idle[$0].isEmpty }) {
                // Its place is taken over: the count stays.
                evicted = idle[other].removeLast()
                break
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else {
                condition.unlock()
                throw StorageError(
                    .busy,
                    "all \(maximum) connections to PostgreSQL at \(server) (maximumConnections) are in use; none"
                        + " came free within \(Self.describe(timeout)) (connectionTimeout)"
                )
            }
            waiting += 1
            _ = condition.wait(until: Date(timeIntervalSinceNow: Self.seconds(left)))
            waiting -= 1
        }
        condition.unlock()
        evicted?.close()
        do {
            return try connect()
        } catch {
            release()
            throw error
        }
    }

    /// Takes `connection` back into pool `slot`'s idle ones, or closes it (now, not when the
    /// last reference goes) when it is unusable, in a transaction, or surplus: the pool keeps
    /// `idleLimit`, more only while check-outs wait.
    func checkIn(_ connection: PostgreSQLConnection, slot: Int) {
        let usable = !connection.isBroken && !connection.isInTransaction
        condition.lock()
        if usable, !closed, idle[slot].count < idleLimit || waiting > 0 {
            idle[slot].append(connection)
            condition.signal()
            condition.unlock()
            return
        }
        open -= 1
        condition.signal()
        condition.unlock()
        connection.close()
    }

    /// A connection being opened failed: its place is free again.
    private func release() {
        condition.lock()
        open -= 1
        condition.signal()
        condition.unlock()
    }

    /// Closes the idle connections of pool `slot`.
    func discardIdle(slot: Int) {
        condition.lock()
        let connections = idle[slot]
        idle[slot].removeAll()
        open -= connections.count
        condition.broadcast()
        condition.unlock()
        for connection in connections { connection.close() }
    }

    /// Closes every idle connection; later check-outs (and those waiting) throw `.closed`, and
    /// connections checked in afterwards are closed.
    func close() {
        condition.lock()
        closed = true
        let connections = idle.flatMap { $0 }
        for slot in idle.indices { idle[slot].removeAll() }
        open -= connections.count
        condition.broadcast()
        condition.unlock()
        for connection in connections { connection.close() }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// `duration` for a message: milliseconds below a second.
    private static func describe(_ duration: Duration) -> String {
        let seconds = seconds(duration)
        if seconds < 1 { return "\(Int((seconds * 1000).rounded())) ms" }
        return seconds == seconds.rounded() ? "\(Int(seconds)) seconds" : "\(seconds) seconds"
    }
}
