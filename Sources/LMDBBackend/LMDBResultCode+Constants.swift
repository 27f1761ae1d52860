extension LMDBResultCode {
    /// `MDB_SUCCESS` (0): success.
    public static let success = LMDBResultCode(0)

    /// `MDB_KEYEXIST` (-30799): the key/data pair exists already.
    public static let keyExists = LMDBResultCode(-30799)

    /// `MDB_NOTFOUND` (-30798): no key/data pair found (the end of the data).
    public static let notFound = LMDBResultCode(-30798)

    /// `MDB_PAGE_NOTFOUND` (-30797): a page the file refers to is missing: the file is damaged.
    public static let pageNotFound = LMDBResultCode(-30797)

    /// `MDB_CORRUPTED` (-30796): a page of the wrong type: the file is damaged.
    public static let corrupted = LMDBResultCode(-30796)

    /// `MDB_PANIC` (-30795): a fatal error of the environment, such as a failed write of a meta page.
    public static let panic = LMDBResultCode(-30795)

    /// `MDB_VERSION_MISMATCH` (-30794): the environment was made by another version of LMDB.
    public static let versionMismatch = LMDBResultCode(-30794)

    /// `MDB_INVALID` (-30793): the file is not an LMDB file.
    public static let invalid = LMDBResultCode(-30793)

    /// `MDB_MAP_FULL` (-30792): the map size of the environment is reached.
    public static let mapFull = LMDBResultCode(-30792)

    /// `MDB_DBS_FULL` (-30791): the number of named databases of the environment is reached.
    public static let databasesFull = LMDBResultCode(-30791)

    /// `MDB_READERS_FULL` (-30790): the reader table of the environment is full.
    public static let readersFull = LMDBResultCode(-30790)

    /// `MDB_TLS_FULL` (-30789): too many thread-local keys in use (Windows only).
    public static let tlsFull = LMDBResultCode(-30789)

    /// `MDB_TXN_FULL` (-30788): the transaction has too many dirty pages.
    public static let transactionFull = LMDBResultCode(-30788)

    /// `MDB_CURSOR_FULL` (-30787): a cursor stack too deep (an internal error).
    public static let cursorFull = LMDBResultCode(-30787)

    /// `MDB_PAGE_FULL` (-30786): a page without enough space (an internal error).
    public static let pageFull = LMDBResultCode(-30786)

    /// `MDB_MAP_RESIZED` (-30785): another process grew the map beyond this one's map size.
    public static let mapResized = LMDBResultCode(-30785)

    /// `MDB_INCOMPATIBLE` (-30784): the operation or the flags do not suit the database.
    public static let incompatible = LMDBResultCode(-30784)

    /// `MDB_BAD_RSLOT` (-30783): a reader slot reused wrongly.
    public static let badReaderSlot = LMDBResultCode(-30783)

    /// `MDB_BAD_TXN` (-30782): the transaction must abort, has a child or is invalid.
    public static let badTransaction = LMDBResultCode(-30782)

    /// `MDB_BAD_VALSIZE` (-30781): a key, database name or value of a size LMDB does not support.
    public static let badValueSize = LMDBResultCode(-30781)

    /// `MDB_BAD_DBI` (-30780): the database handle changed unexpectedly.
    public static let badDatabaseHandle = LMDBResultCode(-30780)
}
