/// One column of a collection: its name, its declared type, and whether it may hold null.
public struct ColumnDefinition: Sendable, Hashable {
    /// The column's name (a property name, or a JSON key).
    public var name: String
    /// The column's declared type.
    public var type: ColumnType
    /// Whether the Swift property behind the column is optional. Stored columns never carry a
    /// NOT NULL constraint, so that a property may later become optional without a migration.
    public var isNullable: Bool

    /// Creates a column definition.
    /// - Parameters:
    ///   - name: the column's name.
    ///   - type: the column's declared type.
    ///   - isNullable: whether the column may hold null.
    public init(name: String, type: ColumnType, isNullable: Bool = true) {
        self.name = name
        self.type = type
        self.isNullable = isNullable
    }
}
