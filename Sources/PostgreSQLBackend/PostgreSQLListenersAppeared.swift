/// Thrown, internally, by a single save's upsert run while no store listened at the last save
/// (`PostgreSQLChangeFeed.saveOneUnobservedSQL`), or by a longer transaction's check before its
/// commit (`PostgreSQLChangeFeed.listenersCheckSQL`), when a store listens now: the statement
/// (or the transaction) was rolled back, and the backend saves the record again with its change
/// record (runs the transaction again). It never leaves
/// the backend, and no `StorageError` or SQLSTATE stands for it in the backend's control flow:
/// the connection turns the check's server error into this marker for that one statement only
/// (`PostgreSQLConnection.runAlone(_:tuple:then:context:collection:marker:)`).
struct PostgreSQLListenersAppeared: Error {}
