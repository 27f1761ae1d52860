internal import CPostgreSQL
import Storage

/// The underlying error of a read whose statement found the catalog stamp of its collection
/// moved (`PostgreSQLReadTransaction.checkStamp`): the backend runs the read again, as after a
/// stale-schema error from the server.
struct PostgreSQLSchemaChanged: Error {}
