import Foundation
import PostgreSQLBackend
import Storage

/// The shared counter of the failover test: every writer's read-modify-write increments it.
struct FailoverCounter: Codable {
    /// Always 1.
    var id: Int64
    var value: Int64
}

/// One increment: saved in the same transaction as the counter, with the value it wrote.
struct FailoverTick: Codable {
    /// `writer * 1_000_000 + index`; 0 for the test's last record, which ends the observer.
    var id: Int64
    var writer: Int64
    var value: Int64
}

/// A record saved on its own (one statement that commits by itself), between increments.
struct FailoverNote: Codable {
    /// `writer * 1_000_000 + index`; 0 for the test's last record, which ends the observer.
    var id: Int64
    var writer: Int64
}

/// The processes of the PostgreSQL failover test (`PostgreSQLFailoverTests`): writers and an
/// observer on a store opened on a multi-host URL (`target_session_attrs=read-write`) whose
/// primary is killed while they run.
///
/// A writer, until the stop file exists, runs a read-modify-write transaction (the counter
/// incremented, a tick with its value saved) and then saves a note on its own, printing
/// `ack tick ID MILLISECONDS` or `ack note ID MILLISECONDS` (wall-clock milliseconds) after each
/// commit returns. The store runs again by itself a transaction whose connection was lost before
/// its commit was sent, waiting for a primary up to its `reconnectTimeout`. A transaction lost
/// after its commit was sent throws `.connectionLost` (its outcome is unknown): the writer prints
/// `unknown tick ID` and reads whether the tick is stored — the transaction saved the tick and
/// the counter together or neither — and then prints `resolved tick ID committed` (and its
/// `ack`) or `resolved tick ID absent` and runs it again. A note lost so is saved again (`unknown
/// note ID`): a save of the same record twice is the same record. `.busy` (conflicts with the
/// other writer used up the retries) and `.unavailable` (no primary within `reconnectTimeout`) are
/// printed and the transaction run again; any other error ends the writer (`error …`, status 1).
///
/// The observer prints `ready` once its change streams (ticks and notes) listen, then `seen tick
/// ID` and `seen note ID` for every key delivered, and ends when both streams have delivered key
/// 0, which the test saves last.
enum FailoverWorkload {
    /// The store every process of the test opens: the URL as given, a transaction waiting up to
    /// 60 seconds for a primary.
    static func open(url: String, schema: String) throws -> ObjectStore {
        try ObjectStore(
            backend: .postgreSQL(
                url: url,
                configuration: .init(
                    schema: schema,
                    poolSize: 2,
                    connectTimeout: .seconds(2),
                    reconnectTimeout: .seconds(60)
                )
            )
        )
    }

    static func milliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    static func write(on store: ObjectStore, writer: Int64, stopFile: String, report: (String) -> Void) throws {
        var index: Int64 = 0
        while !FileManager.default.fileExists(atPath: stopFile) {
            index += 1
            let id = writer * 1_000_000 + index
            try increment(on: store, writer: writer, id: id, report: report)
            try note(on: store, writer: writer, id: id, report: report)
        }
        report("done \(index)")
    }

    /// Runs `body` until it returns, printing and running it again after `.busy` and
    /// `.unavailable`; returns whether it threw `.connectionLost` first (then it is not run again).
    private static func attempt(_ what: String, report: (String) -> Void, _ body: () throws -> Void) throws -> Bool {
        while true {
            do {
                try body()
                return false
            } catch let error as StorageError where error.code == .connectionLost {
                report("unknown \(what): \(error.message)")
                return true
            } catch let error as StorageError where error.code == .busy || error.code == .unavailable {
                report("\(error.code) \(what): \(error.message)")
                usleep(100_000)
            }
        }
    }

    private static func increment(on store: ObjectStore, writer: Int64, id: Int64, report: (String) -> Void) throws {
        while true {
            let unknown = try attempt("tick \(id)", report: report) {
                try store.transaction { tx in
                    let value = (try tx.fetch(FailoverCounter.self, id: 1)?.value ?? 0) + 1
                    try tx.save(FailoverCounter(id: 1, value: value))
                    try tx.save(FailoverTick(id: id, writer: writer, value: value))
                }
            }
            if unknown {
                // Committed or not: the tick says, read on the primary there is now.
                var stored = false
                _ = try attempt("read of tick \(id)", report: report) {
                    stored = try store.fetch(FailoverTick.self, id: id) != nil
                }
                report("resolved tick \(id) " + (stored ? "committed" : "absent"))
                guard stored else { continue }
            }
            report("ack tick \(id) \(milliseconds())")
            return
        }
    }

    private static func note(on store: ObjectStore, writer: Int64, id: Int64, report: (String) -> Void) throws {
        // Saving the same record again is safe: an unknown outcome is settled by saving it again.
        while try attempt("note \(id)", report: report, { try store.save(FailoverNote(id: id, writer: writer)) }) {}
        report("ack note \(id) \(milliseconds())")
    }

    static func observe(on store: ObjectStore, report: @escaping @Sendable (String) -> Void) {
        let ticks = store.changes(of: FailoverTick.self)
        let notes = store.changes(of: FailoverNote.self)
        report("ready")
        let done = DispatchSemaphore(value: 0)
        for (name, stream) in [("tick", ticks), ("note", notes)] {
            Task {
                defer { done.signal() }
                for await change in stream {
                    var last = false
                    for key in change.upserted {
                        guard case .integer(let id) = key else { continue }
                        report("seen \(name) \(id)")
                        if id == 0 { last = true }
                    }
                    if last { break }
                }
            }
        }
        done.wait()
        done.wait()
    }
}
