/// The underlying error of the `.busy` thrown when another process created or changed the same
/// table at the same moment (the loser of concurrent `CREATE TABLE IF NOT EXISTS` gets a unique
/// violation in PostgreSQL's own catalog): the backend runs the transaction again, as after a
/// serialization failure, against the new catalog. A marker of its own, not a made-up SQLSTATE.
struct PostgreSQLCatalogRace: Error, CustomStringConvertible {
    /// The server's error for the statement that lost the race.
    let cause: PostgreSQLError

    var description: String { "another process changed the catalog at the same time (\(cause))" }
}
