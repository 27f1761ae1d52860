import Storage

/// What a read transaction's last schema look-up on a connection answered: the schema of a name
/// at a schema version (which every schema change, by anyone, moves on). A `fetch(_:id:)` asks
/// for its collection's schema at each read, and the shared cache's lock, name folding and
/// hashing were a twelfth of it.
///
/// A class with constant fields: a transaction compares the name and version in place and copies
/// the schema only on a hit, where a tuple in the connection's property was copied whole (its
/// name, and the schema's four references) at every look-up.
final class SQLiteSchemaMemo {
    /// The name as asked (not folded).
    let name: String
    /// The schema version of the snapshot that answered.
    let version: Int64
    /// The answer: `nil` when there is no such collection.
    let schema: CollectionSchema?
    /// Whether `schema` is not `nil`: asking `schema == nil` copied the schema (its four
    /// references retained and released again) out of the object first.
    let exists: Bool

    init(name: String, version: Int64, schema: CollectionSchema?) {
        self.name = name
        self.version = version
        self.schema = schema
        self.exists = schema != nil
    }
}
