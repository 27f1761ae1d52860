internal import CPostgreSQL
import Foundation
import Storage

/// The PostgreSQL types this backend binds and reads, by OID.
enum PostgreSQLType {
    static let bool: Oid = 16
    static let bytea: Oid = 17
    static let name: Oid = 19
    static let int8: Oid = 20
    static let int2: Oid = 21
    static let int4: Oid = 23
    static let text: Oid = 25
    static let oid: Oid = 26
    static let float4: Oid = 700
    static let float8: Oid = 701
    static let varchar: Oid = 1043
    static let int8Array: Oid = 1016
    static let float8Array: Oid = 1022
    static let textArray: Oid = 1009
    static let byteaArray: Oid = 1001

    /// The SQL name of the column type that holds `type`'s values.
    static func sqlName(of type: ColumnType) -> String {
        switch type {
        case .integer: "int8"
        case .real: "float8"
        case .text, .untyped: "text"
        case .blob: "bytea"
        }
    }
}
