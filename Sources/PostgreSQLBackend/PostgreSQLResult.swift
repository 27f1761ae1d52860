internal import CPostgreSQL
import Foundation
import Storage

/// A query result owned by Swift: cleared when released.
final class PostgreSQLResult {
    let handle: OpaquePointer

    init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

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
