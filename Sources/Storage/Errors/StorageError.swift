public import Foundation

/// The one error type of the store: a code, a message that names what was wrong and where, and
/// the engine's own error when there is one.
///
/// ```swift
/// do {
///     try await store.save(person)
/// } catch StorageError.Code.constraintViolation {
///     // a unique index said no; nothing was written
/// }
/// ```
///
/// Its `errorDescription` (`LocalizedError`) is its `description`, which names the collection,
/// column, key and path involved.
public struct StorageError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What kind of failure this is. A struct of static constants, so new codes never break a
    /// client's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String
        /// Creates a code.
        /// - Parameter rawValue: the code's name; a backend's own codes use names of their own.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The code's name, as `"constraintViolation"`.
        public var description: String { rawValue }

        /// A collection or column name that is not allowed (empty, too long, reserved, bad characters).
        public static let invalidIdentifier = Code("invalidIdentifier")
        /// A query or a record names a column the collection does not have.
        public static let unknownColumn = Code("unknownColumn")
        /// A stored value does not fit the Swift type it is read into.
        public static let typeMismatch = Code("typeMismatch")
        /// A number does not fit the integer type it is read into or written from.
        public static let valueOutOfRange = Code("valueOutOfRange")
        /// A record is missing a value its Swift type requires.
        public static let missingValue = Code("missingValue")
        /// A unique index or primary key constraint was violated; nothing was written.
        public static let constraintViolation = Code("constraintViolation")
        /// Input that should be JSON is not, or not of the expected shape.
        public static let invalidJSON = Code("invalidJSON")
        /// Input that should be CSV is malformed (an unclosed quote, a record with more or fewer
        /// fields than the header); the message names the line. Nothing was stored.
        public static let invalidCSV = Code("invalidCSV")
        /// A Swift type cannot be mapped to a record (for example, it is not a keyed type).
        public static let unsupportedType = Code("unsupportedType")
        /// A schema is inconsistent (a key column that does not exist, a duplicated column).
        public static let schemaMismatch = Code("schemaMismatch")
        /// A primary key is missing or of a type the collection cannot use.
        public static let invalidKey = Code("invalidKey")
        /// A value, a record, a key, a schema or a nesting of values passes a documented limit of
        /// the store (the message names the limit and, where it can be raised, the setting);
        /// nothing was written. Whatever a store accepted, it reads back.
        public static let limitExceeded = Code("limitExceeded")
        /// A query the store will not run: nested deeper than ``StoragePredicate/maximumDepth``, or a
        /// search query it cannot parse. The message names what was wrong and where (the depth
        /// and the limit, the position); no engine did any work.
        public static let invalidQuery = Code("invalidQuery")
        /// A write to a store opened read-only (`readOnly: true` in the backend's configuration);
        /// nothing was written.
        public static let readOnly = Code("readOnly")
        /// The store is used in a way it does not allow (for example a transaction escaping its closure).
        public static let misuse = Code("misuse")
        /// The store's files are damaged or not what they claim to be.
        public static let corrupt = Code("corrupt")
        /// The engine could not get a lock in time.
        public static let busy = Code("busy")
        /// Reading or writing the file system failed (including a full disk).
        public static let io = Code("io")
        /// The store cannot be opened (missing folder, wrong permissions, not a database).
        public static let cannotOpen = Code("cannotOpen")
        /// The database server cannot be reached (down, refusing connections, or not answering
        /// within the connect timeout). Nothing was done; the call may be tried again.
        public static let unavailable = Code("unavailable")
        /// The connection to the database server broke during the call. A write that was not
        /// acknowledged may or may not have committed; the next call opens a new connection.
        public static let connectionLost = Code("connectionLost")
        /// A statement ran longer than the configured timeout and was cancelled; its transaction
        /// was rolled back.
        public static let timedOut = Code("timedOut")
        /// The database refused the operation for lack of a privilege (a role without rights on
        /// the store's schema or tables).
        public static let permissionDenied = Code("permissionDenied")
        /// Any other engine failure; `underlying` holds the engine's error.
        public static let engine = Code("engine")
        /// The store was closed (`ObjectStore.close()`); it accepts no more calls.
        public static let closed = Code("closed")

        /// Whether `error` is a ``StorageError`` with this code, so that `catch` can match a code:
        ///
        /// ```swift
        /// do { try store.save(person) } catch StorageError.Code.constraintViolation { ... }
        /// ```
        /// - Parameters:
        ///   - code: the code to match.
        ///   - error: the error thrown.
        /// - Returns: whether `error` is a ``StorageError`` whose code is `code`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? StorageError)?.code == code
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A human-readable explanation naming what was wrong.
    public var message: String
    /// The collection involved, if any.
    public var collection: String?
    /// The column involved, if any.
    public var column: String?
    /// The primary key involved, if any.
    public var key: StorageValue?
    /// The file or folder involved, if any.
    public var path: String?
    /// The engine's or the system's own error, if any.
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - message: what happened, naming what was involved.
    ///   - collection: the collection involved, if any.
    ///   - column: the column involved, if any.
    ///   - key: the primary key involved, if any.
    ///   - path: the file or folder involved, if any.
    ///   - underlying: the engine's or the system's error, if any.
    public init(
        _ code: Code,
        _ message: String,
        collection: String? = nil,
        column: String? = nil,
        key: StorageValue? = nil,
        path: String? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.collection = collection
        self.column = column
        self.key = key
        self.path = path
        self.underlying = underlying
    }

    /// The code, the message, the context (collection, column, key, path) and the underlying
    /// error, in one line.
    public var description: String {
        var parts = ["StorageError.\(code): \(message)"]
        if let collection { parts.append("collection: \(collection)") }
        if let column { parts.append("column: \(column)") }
        if let key { parts.append("key: \(key)") }
        if let path { parts.append("path: \(path)") }
        if let underlying { parts.append("underlying: \(underlying)") }
        return parts.joined(separator: "; ")
    }

    /// The description, naming the collection, column, key and path involved.
    public var errorDescription: String? { description }

    /// A copy with the collection filled in when it was not known where the error was raised.
    package func inCollection(_ name: String) -> StorageError {
        var copy = self
        if copy.collection == nil { copy.collection = name }
        return copy
    }

    /// A copy whose message starts with where in the input it was raised (`row 3`, `line 7`),
    /// with the collection filled in as `inCollection` does.
    package func at(_ place: String, in collection: String) -> StorageError {
        var copy = inCollection(collection)
        copy.message = place + ": " + copy.message
        return copy
    }
}
