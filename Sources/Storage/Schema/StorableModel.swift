/// Optional per-type storage options. Every member has a default; conform only to change one.
///
/// ```swift
/// extension Person: StorableModel {
///     static let collectionName = "people"
///     static let indexes: [IndexDefinition] = [.init(["age"]), .init(["email"], unique: true)]
/// }
/// ```
public protocol StorableModel: Codable {
    /// The collection the type is stored in. Default: the type's name.
    static var collectionName: String { get }
    /// The property that is the primary key. Default: `"id"` when the type has it; a type with no
    /// such property gets an auto-assigned Int64 key.
    static var primaryKey: String { get }
    /// Secondary indexes, unique or not. Default: none.
    static var indexes: [IndexDefinition] { get }
    /// Columns holding the primary key of another record, with what a delete of that record does
    /// (see ``Reference``). Each referencing column gets an index. Default: none.
    static var references: [Reference] { get }
}

extension StorableModel {
    /// The type's name, as `String(describing:)` gives it.
    public static var collectionName: String { String(describing: Self.self) }
    /// `"id"`.
    public static var primaryKey: String { "id" }
    /// None.
    public static var indexes: [IndexDefinition] { [] }
    /// None.
    public static var references: [Reference] { [] }
}
