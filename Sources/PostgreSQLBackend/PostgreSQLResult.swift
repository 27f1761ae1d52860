internal import CPostgreSQL
import Foundation
import Storage

/// A query result owned by Swift: the one owner of every `PGresult` the backend receives, which
/// is cleared when this is released (never by hand). A row read from it (`PostgreSQLRow`) is
/// valid while the result lives: the streams keep the result of the row they handed out.
final class PostgreSQLResult {
    let handle: OpaquePointer

    init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    /// Takes ownership of what libpq returned (`PQexec`, `PQgetResult`, `PQprepare`, …), or
    /// `nil` when it returned none.
    convenience init?(taking handle: OpaquePointer?) {
        guard let handle else { return nil }
        self.init(handle)
    }

    deinit {
        PQclear(handle)
    }

    var status: ExecStatusType { PQresultStatus(handle) }

    /// Whether the statement succeeded: a command, or rows.
    var succeeded: Bool {
        let status = status
        return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK
    }

    /// The server's SQLSTATE, when the result is the server's error.
    var sqlState: String? {
        PQresultErrorField(handle, PostgreSQLResult.sqlStateField).map { String(cString: $0) }
    }

    /// `PG_DIAG_SQLSTATE`, `PG_DIAG_MESSAGE_PRIMARY`, `PG_DIAG_MESSAGE_DETAIL` (`postgres_ext.h`,
    /// which defines them as character macros Swift does not import).
    static let sqlStateField = Int32(UInt8(ascii: "C"))
    static let primaryMessageField = Int32(UInt8(ascii: "M"))
    static let detailField = Int32(UInt8(ascii: "D"))

    var rowCount: Int { Int(PQntuples(handle)) }

    /// The number of rows a command changed (`DELETE`, `INSERT`, `UPDATE`).
    var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    /// Calls `body` with each row.
    func forEachRow(_ body: (PostgreSQLRow) throws -> Bool) rethrows {
        var row = PostgreSQLRow(result: handle, types: PostgreSQLRow.types(of: handle))
        for index in 0..<PQntuples(handle) {
            row.row = index
            guard try body(row) else { return }
        }
    }

    /// The first column of the first row, or `nil` when there is no row.
    var firstValue: StorageValue? {
        guard PQntuples(handle) > 0 else { return nil }
        return PostgreSQLRow(result: handle, types: PostgreSQLRow.types(of: handle)).value(at: 0)
    }
}
