internal import CPostgreSQL
import Storage

/// An error reported by the PostgreSQL server or by libpq: the SQLSTATE code and the message, with
/// any password removed. It travels as the `underlying` error of a `StorageError`.
public struct PostgreSQLError: Error, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE (`23505` for a unique violation), or `nil` for a failure of
    /// the connection itself.
    public let sqlState: String?
    /// The server's or libpq's message.
    public let message: String

    /// The SQLSTATE and the server's message, or libpq's message when there is no SQLSTATE.
    public var description: String {
        sqlState.map { "PostgreSQL \($0): \(message)" } ?? "libpq: \(message)"
    }

    /// Whether running the transaction again may succeed: a serialization failure or a deadlock.
    var isSerializationFailure: Bool { sqlState == "40001" || sqlState == "40P01" }

    /// Whether the failure means the schema this process cached is stale (a table or column
    /// another process changed), or a prepared statement outlived a schema change.
    ///
    /// `42804` (datatype mismatch) is one: every value is bound with the type of its column in
    /// the cached schema, so a column whose type differs from that was made again by another
    /// store or process (a collection dropped and created with another type); read afresh, the
    /// schema names the mismatch as `.schemaMismatch`, as on every other backend.
    var isStaleSchema: Bool {
        sqlState == "42P01" || sqlState == "42703" || sqlState == "0A000"
            || sqlState == "42P07" || sqlState == "42701" || sqlState == "42710" || sqlState == "42804"
    }

    /// The `StorageError` for this failure.
    /// - Parameters:
    ///   - context: what was being done, for the message.
    ///   - collection: the collection involved, if any.
    ///   - connectionBroken: whether the connection is unusable after the failure.
    /// - Returns: the error, its code mapped from the SQLSTATE.
    func storageError(_ context: String, collection: String?, connectionBroken: Bool) -> StorageError {
        let code: StorageError.Code
        switch sqlState {
        case nil:
            code = connectionBroken ? .connectionLost : .engine
        case let state? where state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03":
            code = .connectionLost
        case let state? where state.hasPrefix("23"):
            code = .constraintViolation
        case "40001", "40P01", "55P03":
            code = .busy
        case "57014":
            code = .timedOut
        case "42501":
            code = .permissionDenied
        case "22003":
            code = .valueOutOfRange
        case let state? where state.hasPrefix("22"):
            code = .typeMismatch
        case "53100":
            code = .io
        case "54000", "54001", "54011", "54023":
            // Program limits: a row over a page, a statement too complex, too many columns or
            // arguments. Nothing was written (the statement failed whole).
            code = .limitExceeded
        case "25006":
            // A write in a read-only transaction: a store opened read-only, or a standby.
            code = .readOnly
        default:
            code = connectionBroken ? .connectionLost : .engine
        }
        return StorageError(code, context + ": " + message, collection: collection, underlying: self)
    }
}

/// The underlying error of a read whose statement found the catalog stamp of its collection
/// moved (`PostgreSQLReadTransaction.checkStamp`): the backend runs the read again, as after a
/// stale-schema error from the server.
struct PostgreSQLSchemaChanged: Error {}

extension StorageError {
    /// The PostgreSQL error behind this one, if any.
    var postgreSQL: PostgreSQLError? { underlying as? PostgreSQLError }
}
