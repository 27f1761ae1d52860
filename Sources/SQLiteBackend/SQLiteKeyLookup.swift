/// A key look-up (`SELECT <columns> FROM t WHERE pk = ?`) compiled on one connection, with what
/// it was compiled for: a read transaction that asks for the same collection and columns at the
/// same schema version reuses its statement without looking the collection's schema up.
///
/// A class with constant fields: a transaction reads one reference and compares fields in place,
/// where a tuple in the connection's property was copied whole (a retain and a release of each
/// of its references) at every look-up.
final class SQLiteKeyLookup {
    /// The collection as named by the caller.
    let collection: String
    /// The columns selected, in order.
    let columns: [String]
    /// The schema version the SQL was compiled for: the collection existed at that version.
    let schemaVersion: Int64
    /// The SQL text, to prepare another statement when this one is in use.
    let sql: String
    /// The prepared statement, owned by the connection.
    let statement: SQLiteStatement

    init(collection: String, columns: [String], schemaVersion: Int64, sql: String, statement: SQLiteStatement) {
        self.collection = collection
        self.columns = columns
        self.schemaVersion = schemaVersion
        self.sql = sql
        self.statement = statement
    }

    /// Whether this look-up answers `collection` and `columns` at `schemaVersion`. The column
    /// list is compared with `==`, immediate when the caller passes the same array each time
    /// (as `ObjectStore` does from its read plan).
    func matches(_ collection: String, columns: [String], schemaVersion: Int64) -> Bool {
        self.schemaVersion == schemaVersion && self.collection == collection && self.columns == columns
    }
}
