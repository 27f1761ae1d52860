internal import CLMDB
import Storage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An LMDB return code, kept as the `underlying` error of a `StorageError`.
///
/// A `switch` or a `catch` matches the constants (``mapFull``, ``readersFull``, …): a code
/// matches an equal code, and a `StorageError` whose underlying error is that code.
///
/// ```swift
/// do {
///     try store.save(record)
/// } catch LMDBResultCode.readersFull {
///     // MDB_READERS_FULL: too many readers open the environment
/// }
/// ```
public struct LMDBResultCode: Error, Sendable, Hashable, CustomStringConvertible {
    /// The code `mdb_*` returned (an LMDB code or an `errno` value).
    public let rawValue: Int32

    init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// LMDB's explanation of the code (`mdb_strerror`), with the code.
    public var description: String {
        "LMDB error \(rawValue): " + (mdb_strerror(rawValue).map { String(cString: $0) } ?? "unknown")
    }

    /// Whether `error` is this code, or a `StorageError` whose underlying error is.
    /// - Parameters:
    ///   - pattern: the code to match.
    ///   - error: the error thrown.
    /// - Returns: whether the error is the code.
    public static func ~= (pattern: LMDBResultCode, error: any Error) -> Bool {
        (error as? LMDBResultCode ?? (error as? StorageError)?.underlying as? LMDBResultCode) == pattern
    }

    /// The store's error code for this engine code.
    var storageErrorCode: StorageError.Code {
        // `Self.`: a result code is an `Error`, which `StorageError.Code`'s constants match too.
        switch self {
        case Self.corrupted, Self.invalid, Self.versionMismatch, Self.pageNotFound:
            return .corrupt
        case Self.mapFull, Self.panic:
            // `panic`: a write of the meta page failed and LMDB stopped using the environment;
            // the file keeps the last commit, so it is an I/O failure, not damage.
            return .io
        case Self.readersFull:
            return .busy
        case Self.keyExists:
            return .constraintViolation
        default:
            // The system's errors, which LMDB passes on as `errno` values.
            switch rawValue {
            case EIO, ENOSPC:
                return .io
            case EAGAIN, EBUSY:
                return .busy
            case EACCES, ENOENT, EROFS, ENOTDIR, EPERM:
                return .cannotOpen
            default:
                return .engine
            }
        }
    }
}

extension StorageError {
    /// The error for a failed LMDB call.
    /// - Parameters:
    ///   - code: what the call returned.
    ///   - context: what was being done, e.g. "cannot write a record".
    ///   - collection: the collection involved, if any.
    ///   - key: the key involved, if any.
    ///   - path: the environment's path, if known.
    /// - Returns: the error, its code mapped from LMDB's (`MDB_CORRUPTED` is `.corrupt`,
    ///   `MDB_MAP_FULL` and `EIO` `.io`, and so on; see `LMDBResultCode.storageErrorCode`) and
    ///   LMDB's own message appended.
    static func lmdb(
        _ code: Int32,
        _ context: String,
        collection: String? = nil,
        key: StorageValue? = nil,
        path: String? = nil
    ) -> StorageError {
        let result = LMDBResultCode(code)
        var message = context + ": " + (mdb_strerror(code).map { String(cString: $0) } ?? "error \(code)")
        if let collection { message += " (collection \(Identifier.quoted(collection)))" }
        if result == .panic {
            message +=
                " (a failed write stopped this store's environment; the file keeps its last commit:"
                + " release every store open on it and reopen it)"
        }
        return StorageError(
            result.storageErrorCode,
            message,
            collection: collection,
            key: key,
            path: path,
            underlying: result
        )
    }
}
