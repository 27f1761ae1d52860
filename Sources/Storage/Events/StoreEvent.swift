public import Foundation

/// Something a backend did that an app may want to see or count: a transaction run again, a
/// conflict with another writer, a slow statement, a connection opened or lost, a map grown.
///
/// Events come from a ``StoreEventReporter``: the handler it was made with, or the streams of
/// `ObjectStore.events(bufferingNewest:)`. Which backend reports which kind is listed in
/// <doc:TransactionsAndConcurrency>. No event carries a value of the store's data: a slow
/// statement's text has its values as bound parameters (`$1`, `?`), never inline.
///
/// ```swift
/// for await event in store.events() where event.kind == .retry {
///     print(event)   // PostgreSQL retry: run 2, after serialization failure (40001) on db1:5432/app
/// }
/// ```
public struct StoreEvent: Sendable, CustomStringConvertible {
    /// What happened. An open set, as ``StorageError/Code`` is: new kinds may be added, so
    /// compare with `==` or match in a `switch` with a `default`.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's name, as `description` shows it.
        public let name: String

        /// Creates a kind; backends in other packages may report kinds of their own.
        /// - Parameter name: the kind's name, for example `retry`.
        public init(_ name: String) {
            self.name = name
        }

        /// The kind's name.
        public var description: String { name }

        /// A transaction's closure is about to run again (the previous run failed with a conflict,
        /// a lost connection before anything was sent, or a schema another process changed):
        /// ``StoreEvent/attempt`` is the run about to start (2 for the first retry).
        public static let retry = Kind("retry")
        /// A transaction conflicted with another writer (a serialization failure or a deadlock)
        /// or found the store locked by another process (busy): ``StoreEvent/attempt`` is the run
        /// that failed. A `retry` follows when it runs again.
        public static let conflict = Kind("conflict")
        /// A statement took longer than the reporter's `slowStatementThreshold`:
        /// ``StoreEvent/duration`` and ``StoreEvent/statement``.
        public static let slowStatement = Kind("slowStatement")
        /// A connection to the server was opened.
        public static let connectionOpened = Kind("connectionOpened")
        /// A connection to the server was found lost (the server ended it, restarted, or the
        /// network failed).
        public static let connectionLost = Kind("connectionLost")
        /// A memory map was grown to make room: ``StoreEvent/size`` is the new size in bytes.
        public static let mapGrown = Kind("mapGrown")
    }

    /// What happened.
    public var kind: Kind
    /// When it happened.
    public var date: Date
    /// The backend that reported it: `PostgreSQL`, `SQLite`, `LMDB`, `FileArchive`.
    public var backend: String
    /// For `retry`, the run of the closure about to start (2 for the first retry); for
    /// `conflict`, the run that failed (1 for the first). `nil` for other kinds.
    public var attempt: Int?
    /// For `retry`, `conflict` and `connectionLost`, the code of the error that caused it
    /// (`.busy` for a conflict, `.connectionLost`); `nil` when there is none.
    public var code: StorageError.Code?
    /// Why, in a few words that hold no data: `serialization failure (40001)`,
    /// `deadlock (40P01)`, `database is locked (SQLITE_BUSY)`, `schema changed`.
    public var reason: String?
    /// For `slowStatement`, how long the statement took.
    public var duration: Duration?
    /// For `slowStatement`, the statement's text with its values as parameters (at most 500
    /// characters), or what it was (`COPY into "people"`). Never a bound value.
    public var statement: String?
    /// For `mapGrown`, the map's new size in bytes.
    public var size: Int?
    /// Where: the server (`host:port/database`, never a password) or the store's path.
    public var location: String?

    /// Creates an event; backends call it (through ``StoreEventReporter/report(_:)``).
    /// - Parameters:
    ///   - kind: what happened.
    ///   - backend: the reporting backend's name.
    ///   - attempt: the run of the closure (`retry`, `conflict`).
    ///   - code: the code of the error that caused it.
    ///   - reason: why, holding no data.
    ///   - duration: how long a slow statement took.
    ///   - statement: a slow statement's text, with no values.
    ///   - size: a grown map's size in bytes.
    ///   - location: the server or the path.
    public init(
        _ kind: Kind,
        backend: String,
        attempt: Int? = nil,
        code: StorageError.Code? = nil,
        reason: String? = nil,
        duration: Duration? = nil,
        statement: String? = nil,
        size: Int? = nil,
        location: String? = nil
    ) {
        self.kind = kind
        self.date = Date()
        self.backend = backend
        self.attempt = attempt
        self.code = code
        self.reason = reason
        self.duration = duration
        self.statement = statement.map { $0.count > 500 ? String($0.prefix(500)) + "…" : $0 }
        self.size = size
        self.location = location
    }

    /// One line: the backend, the kind and what it carries, for example
    /// `PostgreSQL retry: run 2, after serialization failure (40001) on db1:5432/app`.
    public var description: String {
        var text = backend + " " + kind.name
        var parts: [String] = []
        if let attempt { parts.append(kind == .retry ? "run \(attempt)" : "run \(attempt) failed") }
        if let reason { parts.append((kind == .retry ? "after " : "") + reason) }
        if let duration { parts.append("took \(duration)") }
        if let statement { parts.append(statement) }
        if let size { parts.append("\(size) bytes") }
        if !parts.isEmpty { text += ": " + parts.joined(separator: ", ") }
        if let location { text += " on " + location }
        return text
    }
}
