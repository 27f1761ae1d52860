extension SQLiteResultCode {
    // The primary result codes. Each matches, as a pattern, itself and its extended codes.

    /// `SQLITE_OK` (0): successful result.
    public static let ok = SQLiteResultCode(0)

    /// `SQLITE_ERROR` (1): generic error.
    public static let error = SQLiteResultCode(1)

    /// `SQLITE_INTERNAL` (2): internal logic error in SQLite.
    public static let internalError = SQLiteResultCode(2)

    /// `SQLITE_PERM` (3): access permission denied.
    public static let permission = SQLiteResultCode(3)

    /// `SQLITE_ABORT` (4): callback routine requested an abort.
    public static let abort = SQLiteResultCode(4)

    /// `SQLITE_BUSY` (5): the database file is locked.
    public static let busy = SQLiteResultCode(5)

    /// `SQLITE_LOCKED` (6): a table in the database is locked.
    public static let locked = SQLiteResultCode(6)

    /// `SQLITE_NOMEM` (7): a malloc() failed.
    public static let noMemory = SQLiteResultCode(7)

    /// `SQLITE_READONLY` (8): attempt to write a read-only database.
    public static let readOnly = SQLiteResultCode(8)

    /// `SQLITE_INTERRUPT` (9): operation terminated by sqlite3_interrupt().
    public static let interrupt = SQLiteResultCode(9)

    /// `SQLITE_IOERR` (10): some kind of disk I/O error occurred.
    public static let ioError = SQLiteResultCode(10)

    /// `SQLITE_CORRUPT` (11): the database disk image is malformed.
    public static let corrupt = SQLiteResultCode(11)

    /// `SQLITE_NOTFOUND` (12): unknown opcode in sqlite3_file_control().
    public static let notFound = SQLiteResultCode(12)

    /// `SQLITE_FULL` (13): insertion failed because database is full.
    public static let full = SQLiteResultCode(13)

    /// `SQLITE_CANTOPEN` (14): unable to open the database file.
    public static let cannotOpen = SQLiteResultCode(14)

    /// `SQLITE_PROTOCOL` (15): database lock protocol error.
    public static let protocolError = SQLiteResultCode(15)

    /// `SQLITE_EMPTY` (16): internal use only.
    public static let empty = SQLiteResultCode(16)

    /// `SQLITE_SCHEMA` (17): the database schema changed.
    public static let schema = SQLiteResultCode(17)

    /// `SQLITE_TOOBIG` (18): string or BLOB exceeds size limit.
    public static let tooBig = SQLiteResultCode(18)

    /// `SQLITE_CONSTRAINT` (19): abort due to constraint violation.
    public static let constraint = SQLiteResultCode(19)

    /// `SQLITE_MISMATCH` (20): data type mismatch.
    public static let mismatch = SQLiteResultCode(20)

    /// `SQLITE_MISUSE` (21): library used incorrectly.
    public static let misuse = SQLiteResultCode(21)

    /// `SQLITE_NOLFS` (22): uses OS features not supported on host.
    public static let noLargeFileSupport = SQLiteResultCode(22)

    /// `SQLITE_AUTH` (23): authorization denied.
    public static let authorization = SQLiteResultCode(23)

    /// `SQLITE_FORMAT` (24): not used.
    public static let format = SQLiteResultCode(24)

    /// `SQLITE_RANGE` (25): 2nd parameter to sqlite3_bind out of range.
    public static let range = SQLiteResultCode(25)

    /// `SQLITE_NOTADB` (26): file opened that is not a database file.
    public static let notADatabase = SQLiteResultCode(26)

    /// `SQLITE_NOTICE` (27): notifications from sqlite3_log().
    public static let notice = SQLiteResultCode(27)

    /// `SQLITE_WARNING` (28): warnings from sqlite3_log().
    public static let warning = SQLiteResultCode(28)

    /// `SQLITE_ROW` (100): sqlite3_step() has another row ready.
    public static let row = SQLiteResultCode(100)

    /// `SQLITE_DONE` (101): sqlite3_step() has finished executing.
    public static let done = SQLiteResultCode(101)

    // The extended codes of `SQLITE_ERROR`: each matches, as a pattern, only itself.

    /// `SQLITE_ERROR_MISSING_COLLSEQ` (257), an extended code of ``error``.
    public static let errorMissingCollatingSequence = SQLiteResultCode(257)

    /// `SQLITE_ERROR_RETRY` (513), an extended code of ``error``.
    public static let errorRetry = SQLiteResultCode(513)

    /// `SQLITE_ERROR_SNAPSHOT` (769), an extended code of ``error``.
    public static let errorSnapshot = SQLiteResultCode(769)

    // The extended codes of `SQLITE_IOERR`: each matches, as a pattern, only itself.

    /// `SQLITE_IOERR_READ` (266), an extended code of ``ioError``.
    public static let ioErrorRead = SQLiteResultCode(266)

    /// `SQLITE_IOERR_SHORT_READ` (522), an extended code of ``ioError``.
    public static let ioErrorShortRead = SQLiteResultCode(522)

    /// `SQLITE_IOERR_WRITE` (778), an extended code of ``ioError``.
    public static let ioErrorWrite = SQLiteResultCode(778)

    /// `SQLITE_IOERR_FSYNC` (1034), an extended code of ``ioError``.
    public static let ioErrorFsync = SQLiteResultCode(1034)

    /// `SQLITE_IOERR_DIR_FSYNC` (1290), an extended code of ``ioError``.
    public static let ioErrorDirectoryFsync = SQLiteResultCode(1290)

    /// `SQLITE_IOERR_TRUNCATE` (1546), an extended code of ``ioError``.
    public static let ioErrorTruncate = SQLiteResultCode(1546)

    /// `SQLITE_IOERR_FSTAT` (1802), an extended code of ``ioError``.
    public static let ioErrorFstat = SQLiteResultCode(1802)

    /// `SQLITE_IOERR_UNLOCK` (2058), an extended code of ``ioError``.
    public static let ioErrorUnlock = SQLiteResultCode(2058)

    /// `SQLITE_IOERR_RDLOCK` (2314), an extended code of ``ioError``.
    public static let ioErrorReadLock = SQLiteResultCode(2314)

    /// `SQLITE_IOERR_DELETE` (2570), an extended code of ``ioError``.
    public static let ioErrorDelete = SQLiteResultCode(2570)

    /// `SQLITE_IOERR_BLOCKED` (2826), an extended code of ``ioError``.
    public static let ioErrorBlocked = SQLiteResultCode(2826)

    /// `SQLITE_IOERR_NOMEM` (3082), an extended code of ``ioError``.
    public static let ioErrorNoMemory = SQLiteResultCode(3082)

    /// `SQLITE_IOERR_ACCESS` (3338), an extended code of ``ioError``.
    public static let ioErrorAccess = SQLiteResultCode(3338)

    /// `SQLITE_IOERR_CHECKRESERVEDLOCK` (3594), an extended code of ``ioError``.
    public static let ioErrorCheckReservedLock = SQLiteResultCode(3594)

    /// `SQLITE_IOERR_LOCK` (3850), an extended code of ``ioError``.
    public static let ioErrorLock = SQLiteResultCode(3850)

    /// `SQLITE_IOERR_CLOSE` (4106), an extended code of ``ioError``.
    public static let ioErrorClose = SQLiteResultCode(4106)

    /// `SQLITE_IOERR_DIR_CLOSE` (4362), an extended code of ``ioError``.
    public static let ioErrorDirectoryClose = SQLiteResultCode(4362)

    /// `SQLITE_IOERR_SHMOPEN` (4618), an extended code of ``ioError``.
    public static let ioErrorShmOpen = SQLiteResultCode(4618)

    /// `SQLITE_IOERR_SHMSIZE` (4874), an extended code of ``ioError``.
    public static let ioErrorShmSize = SQLiteResultCode(4874)

    /// `SQLITE_IOERR_SHMLOCK` (5130), an extended code of ``ioError``.
    public static let ioErrorShmLock = SQLiteResultCode(5130)

    /// `SQLITE_IOERR_SHMMAP` (5386), an extended code of ``ioError``.
    public static let ioErrorShmMap = SQLiteResultCode(5386)

    /// `SQLITE_IOERR_SEEK` (5642), an extended code of ``ioError``.
    public static let ioErrorSeek = SQLiteResultCode(5642)

    /// `SQLITE_IOERR_DELETE_NOENT` (5898), an extended code of ``ioError``.
    public static let ioErrorDeleteNoEntry = SQLiteResultCode(5898)

    /// `SQLITE_IOERR_MMAP` (6154), an extended code of ``ioError``.
    public static let ioErrorMmap = SQLiteResultCode(6154)

    /// `SQLITE_IOERR_GETTEMPPATH` (6410), an extended code of ``ioError``.
    public static let ioErrorGetTempPath = SQLiteResultCode(6410)

    /// `SQLITE_IOERR_CONVPATH` (6666), an extended code of ``ioError``.
    public static let ioErrorConvPath = SQLiteResultCode(6666)

    /// `SQLITE_IOERR_VNODE` (6922), an extended code of ``ioError``.
    public static let ioErrorVnode = SQLiteResultCode(6922)

    /// `SQLITE_IOERR_AUTH` (7178), an extended code of ``ioError``.
    public static let ioErrorAuth = SQLiteResultCode(7178)

    /// `SQLITE_IOERR_BEGIN_ATOMIC` (7434), an extended code of ``ioError``.
    public static let ioErrorBeginAtomic = SQLiteResultCode(7434)

    /// `SQLITE_IOERR_COMMIT_ATOMIC` (7690), an extended code of ``ioError``.
    public static let ioErrorCommitAtomic = SQLiteResultCode(7690)

    /// `SQLITE_IOERR_ROLLBACK_ATOMIC` (7946), an extended code of ``ioError``.
    public static let ioErrorRollbackAtomic = SQLiteResultCode(7946)

    /// `SQLITE_IOERR_DATA` (8202), an extended code of ``ioError``.
    public static let ioErrorData = SQLiteResultCode(8202)

    /// `SQLITE_IOERR_CORRUPTFS` (8458), an extended code of ``ioError``.
    public static let ioErrorCorruptFileSystem = SQLiteResultCode(8458)

    // The extended codes of `SQLITE_LOCKED`: each matches, as a pattern, only itself.

    /// `SQLITE_LOCKED_SHAREDCACHE` (262), an extended code of ``locked``.
    public static let lockedSharedCache = SQLiteResultCode(262)

    /// `SQLITE_LOCKED_VTAB` (518), an extended code of ``locked``.
    public static let lockedVirtualTable = SQLiteResultCode(518)

    // The extended codes of `SQLITE_BUSY`: each matches, as a pattern, only itself.

    /// `SQLITE_BUSY_RECOVERY` (261), an extended code of ``busy``.
    public static let busyRecovery = SQLiteResultCode(261)

    /// `SQLITE_BUSY_SNAPSHOT` (517), an extended code of ``busy``.
    public static let busySnapshot = SQLiteResultCode(517)

    /// `SQLITE_BUSY_TIMEOUT` (773), an extended code of ``busy``.
    public static let busyTimeout = SQLiteResultCode(773)

    // The extended codes of `SQLITE_CANTOPEN`: each matches, as a pattern, only itself.

    /// `SQLITE_CANTOPEN_NOTEMPDIR` (270), an extended code of ``cannotOpen``.
    public static let cannotOpenNoTempDirectory = SQLiteResultCode(270)

    /// `SQLITE_CANTOPEN_ISDIR` (526), an extended code of ``cannotOpen``.
    public static let cannotOpenIsDirectory = SQLiteResultCode(526)

    /// `SQLITE_CANTOPEN_FULLPATH` (782), an extended code of ``cannotOpen``.
    public static let cannotOpenFullPath = SQLiteResultCode(782)

    /// `SQLITE_CANTOPEN_CONVPATH` (1038), an extended code of ``cannotOpen``.
    public static let cannotOpenConvPath = SQLiteResultCode(1038)

    /// `SQLITE_CANTOPEN_DIRTYWAL` (1294), an extended code of ``cannotOpen``.
    public static let cannotOpenDirtyWAL = SQLiteResultCode(1294)

    /// `SQLITE_CANTOPEN_SYMLINK` (1550), an extended code of ``cannotOpen``.
    public static let cannotOpenSymlink = SQLiteResultCode(1550)

    // The extended codes of `SQLITE_CORRUPT`: each matches, as a pattern, only itself.

    /// `SQLITE_CORRUPT_VTAB` (267), an extended code of ``corrupt``.
    public static let corruptVirtualTable = SQLiteResultCode(267)

    /// `SQLITE_CORRUPT_SEQUENCE` (523), an extended code of ``corrupt``.
    public static let corruptSequence = SQLiteResultCode(523)

    /// `SQLITE_CORRUPT_INDEX` (779), an extended code of ``corrupt``.
    public static let corruptIndex = SQLiteResultCode(779)

    // The extended codes of `SQLITE_READONLY`: each matches, as a pattern, only itself.

    /// `SQLITE_READONLY_RECOVERY` (264), an extended code of ``readOnly``.
    public static let readOnlyRecovery = SQLiteResultCode(264)

    /// `SQLITE_READONLY_CANTLOCK` (520), an extended code of ``readOnly``.
    public static let readOnlyCannotLock = SQLiteResultCode(520)

    /// `SQLITE_READONLY_ROLLBACK` (776), an extended code of ``readOnly``.
    public static let readOnlyRollback = SQLiteResultCode(776)

    /// `SQLITE_READONLY_DBMOVED` (1032), an extended code of ``readOnly``.
    public static let readOnlyDatabaseMoved = SQLiteResultCode(1032)

    /// `SQLITE_READONLY_CANTINIT` (1288), an extended code of ``readOnly``.
    public static let readOnlyCannotInit = SQLiteResultCode(1288)

    /// `SQLITE_READONLY_DIRECTORY` (1544), an extended code of ``readOnly``.
    public static let readOnlyDirectory = SQLiteResultCode(1544)

    // The extended codes of `SQLITE_ABORT`: each matches, as a pattern, only itself.

    /// `SQLITE_ABORT_ROLLBACK` (516), an extended code of ``abort``.
    public static let abortRollback = SQLiteResultCode(516)

    // The extended codes of `SQLITE_CONSTRAINT`: each matches, as a pattern, only itself.

    /// `SQLITE_CONSTRAINT_CHECK` (275), an extended code of ``constraint``.
    public static let constraintCheck = SQLiteResultCode(275)

    /// `SQLITE_CONSTRAINT_COMMITHOOK` (531), an extended code of ``constraint``.
    public static let constraintCommitHook = SQLiteResultCode(531)

    /// `SQLITE_CONSTRAINT_FOREIGNKEY` (787), an extended code of ``constraint``.
    public static let constraintForeignKey = SQLiteResultCode(787)

    /// `SQLITE_CONSTRAINT_FUNCTION` (1043), an extended code of ``constraint``.
    public static let constraintFunction = SQLiteResultCode(1043)

    /// `SQLITE_CONSTRAINT_NOTNULL` (1299), an extended code of ``constraint``.
    public static let constraintNotNull = SQLiteResultCode(1299)

    /// `SQLITE_CONSTRAINT_PRIMARYKEY` (1555), an extended code of ``constraint``.
    public static let constraintPrimaryKey = SQLiteResultCode(1555)

    /// `SQLITE_CONSTRAINT_TRIGGER` (1811), an extended code of ``constraint``.
    public static let constraintTrigger = SQLiteResultCode(1811)

    /// `SQLITE_CONSTRAINT_UNIQUE` (2067), an extended code of ``constraint``.
    public static let constraintUnique = SQLiteResultCode(2067)

    /// `SQLITE_CONSTRAINT_VTAB` (2323), an extended code of ``constraint``.
    public static let constraintVirtualTable = SQLiteResultCode(2323)

    /// `SQLITE_CONSTRAINT_ROWID` (2579), an extended code of ``constraint``.
    public static let constraintRowID = SQLiteResultCode(2579)

    /// `SQLITE_CONSTRAINT_PINNED` (2835), an extended code of ``constraint``.
    public static let constraintPinned = SQLiteResultCode(2835)

    /// `SQLITE_CONSTRAINT_DATATYPE` (3091), an extended code of ``constraint``.
    public static let constraintDataType = SQLiteResultCode(3091)

    // The extended codes of `SQLITE_NOTICE`: each matches, as a pattern, only itself.

    /// `SQLITE_NOTICE_RECOVER_WAL` (283), an extended code of ``notice``.
    public static let noticeRecoverWAL = SQLiteResultCode(283)

    /// `SQLITE_NOTICE_RECOVER_ROLLBACK` (539), an extended code of ``notice``.
    public static let noticeRecoverRollback = SQLiteResultCode(539)

    // The extended codes of `SQLITE_WARNING`: each matches, as a pattern, only itself.

    /// `SQLITE_WARNING_AUTOINDEX` (284), an extended code of ``warning``.
    public static let warningAutoIndex = SQLiteResultCode(284)

    // The extended codes of `SQLITE_AUTH`: each matches, as a pattern, only itself.

    /// `SQLITE_AUTH_USER` (279), an extended code of ``authorization``.
    public static let authorizationUser = SQLiteResultCode(279)

    // The extended codes of `SQLITE_OK`: each matches, as a pattern, only itself.

    /// `SQLITE_OK_LOAD_PERMANENTLY` (256), an extended code of ``ok``.
    public static let okLoadPermanently = SQLiteResultCode(256)

    /// `SQLITE_OK_SYMLINK` (512), an extended code of ``ok``.
    public static let okSymlink = SQLiteResultCode(512)
}
