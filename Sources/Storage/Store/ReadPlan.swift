/// What reading a collection needs, derived once from its stored schema and cached by
/// `ObjectStore` until the schema changes: the column list, each column's position and type.
final class ReadPlan: Sendable {
    let schema: CollectionSchema
    let columns: [String]
    let slotByName: [String: Int]
    let types: [String: ColumnType]

    init(_ schema: CollectionSchema) {
        self.schema = schema
        columns = schema.columns.map(\.name)
        var slots: [String: Int] = [:]
        var types: [String: ColumnType] = [:]
        for (index, column) in schema.columns.enumerated() where slots[column.name] == nil {
            slots[column.name] = index
            types[column.name] = column.type
        }
        slotByName = slots
        self.types = types
    }
}
