import CSQLite
import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import SQLiteBackend

/// The result-code constants and their matching, as SQLite defines it: a primary code matches
/// each of its extended codes, an extended code only itself.
@Suite struct SQLiteResultCodeTests {
    /// Each constant is the value of its macro in the sqlite3.h this package is built with
    /// (read through the shim: Swift imports no extended code's macro). A macro this SQLite does
    /// not define (a code newer than it) is skipped; every primary code is defined.
    @Test func eachConstantIsItsMacrosValue() {
        var checked = 0
        for (constant, macro) in Self.constants {
            let value = storage_sqlite_result_code(macro)
            if value == -1 && !constant.isPrimary { continue }
            #expect(constant.extendedCode == value, "\(macro)")
            checked += 1
        }
        #expect(checked > 90)
        #expect(Set(Self.constants.map(\.0)).count == Self.constants.count)
        // The primary codes Swift does import, compared directly.
        #expect(SQLiteResultCode.busy.extendedCode == SQLITE_BUSY)
        #expect(SQLiteResultCode.constraint.extendedCode == SQLITE_CONSTRAINT)
        #expect(SQLiteResultCode.readOnly.extendedCode == SQLITE_READONLY)
        #expect(SQLiteResultCode.row.extendedCode == SQLITE_ROW)
        #expect(SQLiteResultCode.done.extendedCode == SQLITE_DONE)
    }

    /// `SQLITE_BUSY` matches `SQLITE_BUSY_SNAPSHOT` by its primary code; an extended code
    /// matches only itself, not its primary code nor a sibling.
    @Test func primaryCodesMatchTheirExtendedCodes() {
        #expect(SQLiteResultCode.busy ~= SQLiteResultCode.busySnapshot)
        #expect(SQLiteResultCode.busy ~= SQLiteResultCode.busy)
        #expect(!(SQLiteResultCode.busy ~= SQLiteResultCode.locked))
        #expect(!(SQLiteResultCode.busySnapshot ~= SQLiteResultCode.busy))
        #expect(!(SQLiteResultCode.busySnapshot ~= SQLiteResultCode.busyRecovery))
        #expect(SQLiteResultCode.busySnapshot ~= SQLiteResultCode(SQLITE_BUSY | 2 << 8))
        #expect(SQLiteResultCode.busy.isPrimary && !SQLiteResultCode.busySnapshot.isPrimary)
        #expect(SQLiteResultCode.busySnapshot.primary == .busy)
        // The constraint codes: a `switch` takes the first case that matches.
        /// Which case of a `switch` takes `code`.
        func kind(_ code: SQLiteResultCode) -> String {
            switch code {
            case SQLiteResultCode.constraintUnique: "unique"
            case SQLiteResultCode.constraint: "another constraint"
            default: "other"
            }
        }
        #expect(kind(.constraintUnique) == "unique")
        #expect(kind(.constraintPrimaryKey) == "another constraint")
        #expect(kind(.constraint) == "another constraint")
        #expect(kind(.mismatch) == "other")
    }

    /// SQLite's own failures match: a `catch` names the extended code a statement failed with,
    /// or its primary code, and a `StorageError` from the backend matches through its
    /// underlying result code.
    @Test func theEnginesFailuresMatchInCatchClauses() throws {
        try TemporaryDirectory.with("sqlite-result-codes") { directory in
            let connection = try SQLiteConnection(
                path: directory.appendingPathComponent("codes.sqlite").path,
                flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                busyTimeout: .seconds(1)
            )
            try connection.execute(#"CREATE TABLE t ("a" INTEGER UNIQUE, "b" INTEGER NOT NULL)"#)
            try connection.execute(#"INSERT INTO t VALUES (1, 1)"#)
            /// Which clause catches the failure of `sql`, or "none".
            func failure(_ sql: String) -> String {
                do {
                    try connection.execute(sql)
                    return "none"
                } catch SQLiteResultCode.constraintNotNull {
                    return "not null"
                } catch SQLiteResultCode.constraintUnique {
                    return "unique"
                } catch SQLiteResultCode.constraint {
                    return "another constraint"
                } catch {
                    return "other: \(error)"
                }
            }
            #expect(failure(#"INSERT INTO t VALUES (1, 2)"#) == "unique")
            #expect(failure(#"INSERT INTO t VALUES (2, NULL)"#) == "not null")
            #expect(failure(#"SELECT * FROM "missing""#).hasPrefix("other"))
            #expect(failure(#"INSERT INTO t VALUES (3, 3)"#) == "none")
            var thrown: (any Error)?
            do { try connection.execute(#"INSERT INTO t VALUES (1, 4)"#) } catch { thrown = error }
            let error = try #require(thrown as? StorageError)
            #expect(error.code == .constraintViolation)
            #expect(SQLiteResultCode.constraint ~= error)
            #expect(!(SQLiteResultCode.constraintNotNull ~= error))
            #expect(!(SQLiteResultCode.busy ~= error))
            #expect(!(SQLiteResultCode.constraint ~= StorageError(.constraintViolation, "no underlying error")))
        }
    }

    /// Every constant, with the name of its macro in sqlite3.h.
    static let constants: [(SQLiteResultCode, String)] = [
        (.ok, "SQLITE_OK"),
        (.error, "SQLITE_ERROR"),
        (.internalError, "SQLITE_INTERNAL"),
        (.permission, "SQLITE_PERM"),
        (.abort, "SQLITE_ABORT"),
        (.busy, "SQLITE_BUSY"),
        (.locked, "SQLITE_LOCKED"),
        (.noMemory, "SQLITE_NOMEM"),
        (.readOnly, "SQLITE_READONLY"),
        (.interrupt, "SQLITE_INTERRUPT"),
        (.ioError, "SQLITE_IOERR"),
        (.corrupt, "SQLITE_CORRUPT"),
        (.notFound, "SQLITE_NOTFOUND"),
        (.full, "SQLITE_FULL"),
        (.cannotOpen, "SQLITE_CANTOPEN"),
        (.protocolError, "SQLITE_PROTOCOL"),
        (.empty, "SQLITE_EMPTY"),
        (.schema, "SQLITE_SCHEMA"),
        (.tooBig, "SQLITE_TOOBIG"),
        (.constraint, "SQLITE_CONSTRAINT"),
        (.mismatch, "SQLITE_MISMATCH"),
        (.misuse, "SQLITE_MISUSE"),
        (.noLargeFileSupport, "SQLITE_NOLFS"),
        (.authorization, "SQLITE_AUTH"),
        (.format, "SQLITE_FORMAT"),
        (.range, "SQLITE_RANGE"),
        (.notADatabase, "SQLITE_NOTADB"),
        (.notice, "SQLITE_NOTICE"),
        (.warning, "SQLITE_WARNING"),
        (.row, "SQLITE_ROW"),
        (.done, "SQLITE_DONE"),
        (.errorMissingCollatingSequence, "SQLITE_ERROR_MISSING_COLLSEQ"),
        (.errorRetry, "SQLITE_ERROR_RETRY"),
        (.errorSnapshot, "SQLITE_ERROR_SNAPSHOT"),
        (.ioErrorRead, "SQLITE_IOERR_READ"),
        (.ioErrorShortRead, "SQLITE_IOERR_SHORT_READ"),
        (.ioErrorWrite, "SQLITE_IOERR_WRITE"),
        (.ioErrorFsync, "SQLITE_IOERR_FSYNC"),
        (.ioErrorDirectoryFsync, "SQLITE_IOERR_DIR_FSYNC"),
        (.ioErrorTruncate, "SQLITE_IOERR_TRUNCATE"),
        (.ioErrorFstat, "SQLITE_IOERR_FSTAT"),
        (.ioErrorUnlock, "SQLITE_IOERR_UNLOCK"),
        (.ioErrorReadLock, "SQLITE_IOERR_RDLOCK"),
        (.ioErrorDelete, "SQLITE_IOERR_DELETE"),
        (.ioErrorBlocked, "SQLITE_IOERR_BLOCKED"),
        (.ioErrorNoMemory, "SQLITE_IOERR_NOMEM"),
        (.ioErrorAccess, "SQLITE_IOERR_ACCESS"),
        (.ioErrorCheckReservedLock, "SQLITE_IOERR_CHECKRESERVEDLOCK"),
        (.ioErrorLock, "SQLITE_IOERR_LOCK"),
        (.ioErrorClose, "SQLITE_IOERR_CLOSE"),
        (.ioErrorDirectoryClose, "SQLITE_IOERR_DIR_CLOSE"),
        (.ioErrorShmOpen, "SQLITE_IOERR_SHMOPEN"),
        (.ioErrorShmSize, "SQLITE_IOERR_SHMSIZE"),
        (.ioErrorShmLock, "SQLITE_IOERR_SHMLOCK"),
        (.ioErrorShmMap, "SQLITE_IOERR_SHMMAP"),
        (.ioErrorSeek, "SQLITE_IOERR_SEEK"),
        (.ioErrorDeleteNoEntry, "SQLITE_IOERR_DELETE_NOENT"),
        (.ioErrorMmap, "SQLITE_IOERR_MMAP"),
        (.ioErrorGetTempPath, "SQLITE_IOERR_GETTEMPPATH"),
        (.ioErrorConvPath, "SQLITE_IOERR_CONVPATH"),
        (.ioErrorVnode, "SQLITE_IOERR_VNODE"),
        (.ioErrorAuth, "SQLITE_IOERR_AUTH"),
        (.ioErrorBeginAtomic, "SQLITE_IOERR_BEGIN_ATOMIC"),
        (.ioErrorCommitAtomic, "SQLITE_IOERR_COMMIT_ATOMIC"),
        (.ioErrorRollbackAtomic, "SQLITE_IOERR_ROLLBACK_ATOMIC"),
        (.ioErrorData, "SQLITE_IOERR_DATA"),
        (.ioErrorCorruptFileSystem, "SQLITE_IOERR_CORRUPTFS"),
        (.lockedSharedCache, "SQLITE_LOCKED_SHAREDCACHE"),
        (.lockedVirtualTable, "SQLITE_LOCKED_VTAB"),
        (.busyRecovery, "SQLITE_BUSY_RECOVERY"),
        (.busySnapshot, "SQLITE_BUSY_SNAPSHOT"),
        (.busyTimeout, "SQLITE_BUSY_TIMEOUT"),
        (.cannotOpenNoTempDirectory, "SQLITE_CANTOPEN_NOTEMPDIR"),
        (.cannotOpenIsDirectory, "SQLITE_CANTOPEN_ISDIR"),
        (.cannotOpenFullPath, "SQLITE_CANTOPEN_FULLPATH"),
        (.cannotOpenConvPath, "SQLITE_CANTOPEN_CONVPATH"),
        (.cannotOpenDirtyWAL, "SQLITE_CANTOPEN_DIRTYWAL"),
        (.cannotOpenSymlink, "SQLITE_CANTOPEN_SYMLINK"),
        (.corruptVirtualTable, "SQLITE_CORRUPT_VTAB"),
        (.corruptSequence, "SQLITE_CORRUPT_SEQUENCE"),
        (.corruptIndex, "SQLITE_CORRUPT_INDEX"),
        (.readOnlyRecovery, "SQLITE_READONLY_RECOVERY"),
        (.readOnlyCannotLock, "SQLITE_READONLY_CANTLOCK"),
        (.readOnlyRollback, "SQLITE_READONLY_ROLLBACK"),
        (.readOnlyDatabaseMoved, "SQLITE_READONLY_DBMOVED"),
        (.readOnlyCannotInit, "SQLITE_READONLY_CANTINIT"),
        (.readOnlyDirectory, "SQLITE_READONLY_DIRECTORY"),
        (.abortRollback, "SQLITE_ABORT_ROLLBACK"),
        (.constraintCheck, "SQLITE_CONSTRAINT_CHECK"),
        (.constraintCommitHook, "SQLITE_CONSTRAINT_COMMITHOOK"),
        (.constraintForeignKey, "SQLITE_CONSTRAINT_FOREIGNKEY"),
        (.constraintFunction, "SQLITE_CONSTRAINT_FUNCTION"),
        (.constraintNotNull, "SQLITE_CONSTRAINT_NOTNULL"),
        (.constraintPrimaryKey, "SQLITE_CONSTRAINT_PRIMARYKEY"),
        (.constraintTrigger, "SQLITE_CONSTRAINT_TRIGGER"),
        (.constraintUnique, "SQLITE_CONSTRAINT_UNIQUE"),
        (.constraintVirtualTable, "SQLITE_CONSTRAINT_VTAB"),
        (.constraintRowID, "SQLITE_CONSTRAINT_ROWID"),
        (.constraintPinned, "SQLITE_CONSTRAINT_PINNED"),
        (.constraintDataType, "SQLITE_CONSTRAINT_DATATYPE"),
        (.noticeRecoverWAL, "SQLITE_NOTICE_RECOVER_WAL"),
        (.noticeRecoverRollback, "SQLITE_NOTICE_RECOVER_ROLLBACK"),
        (.warningAutoIndex, "SQLITE_WARNING_AUTOINDEX"),
        (.authorizationUser, "SQLITE_AUTH_USER"),
        (.okLoadPermanently, "SQLITE_OK_LOAD_PERMANENTLY"),
        (.okSymlink, "SQLITE_OK_SYMLINK"),
    ]
}
