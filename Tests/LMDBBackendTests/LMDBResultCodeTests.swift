internal import CLMDB
import Foundation
import Storage
import StorageTestSupport
import Testing

@testable import LMDBBackend

/// The LMDB return-code constants and their matching.
@Suite struct LMDBResultCodeTests {
    /// Each constant is the value of its macro in lmdb.h, and no two constants share a value.
    @Test func eachConstantIsItsMacrosValue() {
        for (constant, macro, name) in Self.constants {
            #expect(constant.rawValue == macro, "\(name)")
        }
        #expect(Set(Self.constants.map(\.0)).count == Self.constants.count)
        // Every error code LMDB defines, from the first to the last.
        #expect(Self.constants.count == Int(MDB_LAST_ERRCODE - MDB_KEYEXIST) + 2)
    }

    /// A code matches an equal code, and the `StorageError` the backend throws for it through
    /// its underlying code; not another code, nor an error without an LMDB code.
    @Test func codesMatchTheErrorsThatCarryThem() {
        /// Which clause catches `error`.
        func caught(_ error: any Error) -> String {
            do {
                throw error
            } catch LMDBResultCode.mapFull {
                return "map full"
            } catch LMDBResultCode.readersFull {
                return "readers full"
            } catch {
                return "other"
            }
        }
        #expect(caught(StorageError.lmdb(MDB_MAP_FULL, "cannot write")) == "map full")
        #expect(caught(StorageError.lmdb(MDB_READERS_FULL, "cannot read")) == "readers full")
        #expect(caught(LMDBResultCode(MDB_MAP_FULL)) == "map full")
        #expect(caught(StorageError.lmdb(MDB_NOTFOUND, "cannot find")) == "other")
        #expect(caught(StorageError(.io, "no underlying error")) == "other")
        switch LMDBResultCode(MDB_KEYEXIST) {
        case LMDBResultCode.notFound: Issue.record("MDB_KEYEXIST matched MDB_NOTFOUND")
        case LMDBResultCode.keyExists: break
        default: Issue.record("MDB_KEYEXIST did not match itself")
        }
    }

    /// LMDB's own refusal matches: a file that is not an LMDB environment fails to open with
    /// `MDB_INVALID`, which the `catch` names.
    @Test func theEnginesFailureMatches() throws {
        try TemporaryDirectory.with("lmdb-result-codes") { directory in
            let path = directory.appendingPathComponent("not-lmdb.mdb").path
            try Data(repeating: 0x5A, count: 16_384).write(to: URL(fileURLWithPath: path))
            var matched = false
            do {
                _ = try LMDBStorageBackend(path: path)
                Issue.record("a file of garbage opened")
            } catch LMDBResultCode.invalid {
                matched = true
            } catch {
                Issue.record("not MDB_INVALID: \(error)")
            }
            #expect(matched)
        }
    }

    /// Every constant, with its macro as Swift imports it from lmdb.h.
    static let constants: [(LMDBResultCode, Int32, String)] = [
        (.success, MDB_SUCCESS, "MDB_SUCCESS"),
        (.keyExists, MDB_KEYEXIST, "MDB_KEYEXIST"),
        (.notFound, MDB_NOTFOUND, "MDB_NOTFOUND"),
        (.pageNotFound, MDB_PAGE_NOTFOUND, "MDB_PAGE_NOTFOUND"),
        (.corrupted, MDB_CORRUPTED, "MDB_CORRUPTED"),
        (.panic, MDB_PANIC, "MDB_PANIC"),
        (.versionMismatch, MDB_VERSION_MISMATCH, "MDB_VERSION_MISMATCH"),
        (.invalid, MDB_INVALID, "MDB_INVALID"),
        (.mapFull, MDB_MAP_FULL, "MDB_MAP_FULL"),
        (.databasesFull, MDB_DBS_FULL, "MDB_DBS_FULL"),
        (.readersFull, MDB_READERS_FULL, "MDB_READERS_FULL"),
        (.tlsFull, MDB_TLS_FULL, "MDB_TLS_FULL"),
        (.transactionFull, MDB_TXN_FULL, "MDB_TXN_FULL"),
        (.cursorFull, MDB_CURSOR_FULL, "MDB_CURSOR_FULL"),
        (.pageFull, MDB_PAGE_FULL, "MDB_PAGE_FULL"),
        (.mapResized, MDB_MAP_RESIZED, "MDB_MAP_RESIZED"),
        (.incompatible, MDB_INCOMPATIBLE, "MDB_INCOMPATIBLE"),
        (.badReaderSlot, MDB_BAD_RSLOT, "MDB_BAD_RSLOT"),
        (.badTransaction, MDB_BAD_TXN, "MDB_BAD_TXN"),
        (.badValueSize, MDB_BAD_VALSIZE, "MDB_BAD_VALSIZE"),
        (.badDatabaseHandle, MDB_BAD_DBI, "MDB_BAD_DBI"),
    ]
}
