internal import CLMDB
import Storage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An LMDB return code, kept as the `underlying` error of a `StorageError`.
public struct LMDBResultCode: Error, Sendable, Hashable, CustomStringConvertible {
    /// The code `mdb_*` returned (an LMDB code or an `errno` value).
    public let rawValue: Int32

    init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// LMDB's explanation of the code (`mdb_strerror`), with the code.
    public var description: String {
        "LMDB error \(rawValue): " + (mdb_strerror(rawValue).map { String(cString: $0) } ?? "unknown")
    }

    /// The store's error code for this engine code.
    var storageErrorCode: StorageError.Code {
        switch rawValue {
        case MDB_CORRUPTED, MDB_INVALID, MDB_VERSION_MISMATCH, MDB_PAGE_NOTFOUND:
            return .corrupt
        case MDB_MAP_FULL, MDB_PANIC, EIO, ENOSPC:
            // MDB_PANIC: a write of the meta page failed and LMDB stopped using the environment;
            // the file keeps the last commit, so it is an I/O failure, not damage.
            return .io
        case MDB_READERS_FULL, EAGAIN, EBUSY:
            return .busy
        case EACCES, ENOENT, EROFS, ENOTDIR, EPERM:
            return .cannotOpen
        case MDB_KEYEXIST:
            return .constraintViolation
        default:
            return .engine
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
        if code == MDB_PANIC {
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
