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

    /// The SQLSTATE as a matchable ``Code``, or `nil` for a failure of the connection itself.
    public var code: Code? { sqlState.map(Code.init(rawValue:)) }

    /// The PostgreSQL error `error` is, or the one behind it when it is a `StorageError`.
    /// - Parameter error: an error thrown by the backend.
    /// - Returns: the PostgreSQL error, or `nil` when there is none.
    static func underlying(_ error: any Error) -> PostgreSQLError? {
        error as? PostgreSQLError ?? (error as? StorageError)?.underlying as? PostgreSQLError
    }

    /// Whether running the transaction again may succeed: a serialization failure or a deadlock.
    var isSerializationFailure: Bool {
        switch code {
        case .serializationFailure?, .deadlockDetected?: true
        default: false
        }
    }

    /// Whether the failure means the schema this process cached is stale (a table or column
    /// another process changed), or a prepared statement outlived a schema change.
    ///
    /// `42804` (datatype mismatch) is one: every value is bound with the type of its column in
    /// the cached schema, so a column whose type differs from that was made again by another
    /// store or process (a collection dropped and created with another type); read afresh, the
    /// schema names the mismatch as `.schemaMismatch`, as on every other backend.
    var isStaleSchema: Bool {
        switch code {
        case .undefinedTable?, .undefinedColumn?, .featureNotSupported?, .duplicateTable?, .duplicateColumn?,
            .duplicateObject?, .datatypeMismatch?:
            true
        default:
            false
        }
    }

    /// The `StorageError` for this failure.
    /// - Parameters:
    ///   - context: what was being done, for the message.
    ///   - collection: the collection involved, if any.
    ///   - connectionBroken: whether the connection is unusable after the failure.
    /// - Returns: the error, its code mapped from the SQLSTATE.
    func storageError(_ context: String, collection: String?, connectionBroken: Bool) -> StorageError {
        let storageCode: StorageError.Code
        switch code {
        case nil:
            storageCode = connectionBroken ? .connectionLost : .engine
        case CodeClass.connectionException?, .adminShutdown?, .crashShutdown?, .cannotConnectNow?:
            storageCode = .connectionLost
        case CodeClass.integrityConstraintViolation?:
            storageCode = .constraintViolation
        case .serializationFailure?, .deadlockDetected?, .lockNotAvailable?:
            storageCode = .busy
        case .queryCanceled?:
            storageCode = .timedOut
        case .insufficientPrivilege?:
            storageCode = .permissionDenied
        case .numericValueOutOfRange?:
            storageCode = .valueOutOfRange
        case CodeClass.dataException?:
            storageCode = .typeMismatch
        case .diskFull?:
            storageCode = .io
        case .programLimitExceeded?, .statementTooComplex?, .tooManyColumns?, .tooManyArguments?:
            // Program limits: a row over a page, a statement too complex, too many columns or
            // arguments. Nothing was written (the statement failed whole).
            storageCode = .limitExceeded
        case .readOnlySQLTransaction?:
            // A write in a read-only transaction: a store opened read-only, or a standby.
            storageCode = .readOnly
        default:
            storageCode = connectionBroken ? .connectionLost : .engine
        }
        return StorageError(storageCode, context + ": " + message, collection: collection, underlying: self)
    }
}

extension StorageError {
    /// The PostgreSQL error behind this one, if any.
    var postgreSQL: PostgreSQLError? { underlying as? PostgreSQLError }
}
