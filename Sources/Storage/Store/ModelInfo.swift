/// What ``ObjectStore`` knows about one Swift type, computed once and cached: where it is stored,
/// its key and indexes, and (after the first value was encoded) its column layout.
struct ModelInfo: Sendable {
    let typeName: String
    let collection: String
    let declaredKey: String
    /// Whether the key was named explicitly, so a type without that property is an error rather
    /// than a type with an auto-assigned key.
    let keyIsExplicit: Bool
    let indexes: [IndexDefinition]
    /// The type's full-text index (``IndexDefinition/fullText(_:)``), kept out of `indexes`: the
    /// store keeps it in its own collections (`Session+Search.swift`), no engine sees it.
    let fullText: IndexDefinition?
    /// The type's ``StorableModel/references``: each referencing column also has an index in
    /// `indexes`.
    let references: [Reference]
    /// Whether the type is one of the store's own, stored in a reserved (`_`) collection.
    let isInternal: Bool
    /// The columns in property order, with the auto-key column first when the type has no key.
    var layout: [ColumnDefinition]?

    init<T>(for type: T.Type) throws {
        typeName = String(describing: type)
        isInternal = type is any InternalModel.Type
        if let model = type as? any StorableModel.Type {
            collection = model.collectionName
            declaredKey = model.primaryKey
            keyIsExplicit = model.primaryKey != "id"
            references = model.references
            indexes = Self.indexes(model.indexes.filter { !$0.isFullText }, covering: references)
            fullText = try Self.fullText(model.indexes, typeName: typeName, collection: model.collectionName)
        } else {
            references = []
            collection = typeName
            declaredKey = "id"
            keyIsExplicit = false
            indexes = []
            fullText = nil
        }
        do {
            try Identifier.validateCollection(collection, allowingReserved: isInternal)
        } catch var error as StorageError where !(type is any StorableModel.Type) {
            error.message +=
                "; the name comes from the type \(typeName): conform it to StorableModel and set collectionName"
            throw error
        }
    }

    /// `declared` and an index on each referencing column that no declared index begins with, so
    /// that a delete finds the records referencing a key by the index, not by a scan.
    static func indexes(_ declared: [IndexDefinition], covering references: [Reference]) -> [IndexDefinition] {
        var indexes = declared
        for reference in references where !indexes.contains(where: { $0.columns.first == reference.column }) {
            indexes.append(IndexDefinition([reference.column]))
        }
        return indexes
    }

    /// The one full-text index among `declared`, checked: at least one column, valid names, none
    /// twice.
    static func fullText(_ declared: [IndexDefinition], typeName: String, collection: String) throws -> IndexDefinition?
    {
        let found = declared.filter(\.isFullText)
        guard let index = found.first else { return nil }
        guard found.count == 1 else {
            throw StorageError(
                .schemaMismatch,
                "\(typeName) declares \(found.count) full-text indexes; a type has at most one (list every field in it)",
                collection: collection
            )
        }
        guard !index.columns.isEmpty else {
            throw StorageError(
                .schemaMismatch,
                "a full-text index must name at least one column",
                collection: collection
            )
        }
        var seen: Set<String> = []
        for column in index.columns {
            try Identifier.validateColumn(column, in: collection)
            guard seen.insert(Identifier.folded(column)).inserted else {
                throw StorageError(
                    .schemaMismatch,
                    "the full-text index names column \(Identifier.quoted(column)) twice",
                    collection: collection,
                    column: column
                )
            }
        }
        return index
    }

    /// The schema for a discovered layout: the declared key when the type has it, else a
    /// prepended auto-assigned key column.
    func schema(for discovered: [ColumnDefinition]) throws -> CollectionSchema {
        var columns = discovered
        let key: String
        if columns.contains(where: { $0.name == declaredKey }) {
            key = declaredKey
        } else if columns.first?.name == CollectionSchema.autoKeyColumn {
            key = CollectionSchema.autoKeyColumn
        } else if keyIsExplicit {
            throw StorageError(
                .schemaMismatch,
                "\(typeName) declares primary key '\(declaredKey)', but has no property of that name",
                collection: collection,
                column: declaredKey
            )
        } else {
            key = CollectionSchema.autoKeyColumn
            columns.insert(ColumnDefinition(name: key, type: .integer, isNullable: false), at: 0)
        }
        if let index = columns.firstIndex(where: { $0.name == key }) { columns[index].isNullable = false }
        let schema = CollectionSchema(name: collection, columns: columns, primaryKey: key, indexes: indexes)
        try schema.validate(allowingReservedName: isInternal)
        return schema
    }
}
