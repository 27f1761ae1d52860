import Foundation
import Storage

/// A collection as the metadata database records it: its schema, with a stable field id per
/// column, and the names of the named databases holding its records and indexes.
///
/// Field ids are never reused or renumbered, so records keep decoding when columns are added.
struct LMDBCollection: Codable, Sendable, Equatable {
    struct Field: Codable, Sendable, Equatable {
        var name: String
        var type: String
        var isNullable: Bool
        var id: Int
    }

    struct Index: Codable, Sendable, Equatable {
        var columns: [String]
        var isUnique: Bool
        /// The named database holding the index's entries.
        var database: String
    }

    var name: String
    var fields: [Field]
    var primaryKey: String
    var indexes: [Index]
    /// The named database holding the records, keyed by primary key.
    var database: String
    var nextFieldID: Int
    var nextIndexNumber: Int

    /// The schema `ObjectStore` sees.
    var schema: CollectionSchema {
        CollectionSchema(
            name: name,
            columns: fields.map {
                ColumnDefinition(
                    name: $0.name,
                    type: ColumnType(rawValue: $0.type) ?? .untyped,
                    isNullable: $0.isNullable
                )
            },
            primaryKey: primaryKey,
            indexes: indexes.map { IndexDefinition($0.columns, unique: $0.isUnique) }
        )
    }

    /// The field id of a column, if the collection has it.
    func fieldID(named column: String) -> Int? {
        fields.first { $0.name == column }?.id
    }

    /// The field id of the primary key.
    var keyField: Int { fieldID(named: primaryKey) ?? -1 }

    /// The declared type of the key column.
    var keyType: ColumnType {
        fields.first { $0.name == primaryKey }.flatMap { ColumnType(rawValue: $0.type) } ?? .untyped
    }

    var hasAutoKey: Bool { primaryKey == CollectionSchema.autoKeyColumn }

    /// A new collection for `schema`, its databases named after the folded collection name.
    init(creating schema: CollectionSchema) {
        let folded = Identifier.folded(schema.name)
        name = schema.name
        fields = schema.columns.enumerated().map { offset, column in
            Field(name: column.name, type: column.type.rawValue, isNullable: column.isNullable, id: offset)
        }
        primaryKey = schema.primaryKey
        database = "c:" + folded
        nextFieldID = schema.columns.count
        indexes = []
        nextIndexNumber = 0
        for index in schema.indexes { addIndex(index) }
    }

    /// Adds an index with a database of its own.
    /// - Returns: the new index.
    @discardableResult
    mutating func addIndex(_ definition: IndexDefinition) -> Index {
        let index = Index(
            columns: definition.columns,
            isUnique: definition.isUnique,
            database: "i:" + Identifier.folded(name) + ":" + String(nextIndexNumber)
        )
        nextIndexNumber += 1
        indexes.append(index)
        return index
    }

    /// The metadata key of a collection's entry.
    static func metadataKey(_ collection: String) -> [UInt8] {
        Array(("schema:" + Identifier.folded(collection)).utf8)
    }

    /// The metadata key of a collection's auto-increment counter.
    static func counterKey(_ collection: String) -> [UInt8] {
        Array(("counter:" + Identifier.folded(collection)).utf8)
    }
}

/// A decoded metadata entry with the lookup tables reads need, cached while its bytes stay the
/// same.
final class LMDBCollectionInfo: Sendable {
    let collection: LMDBCollection
    /// Field ids by column name, for the predicate evaluator.
    let fieldsByName: [String: Int]
    let schema: CollectionSchema

    /// The last column list asked for and its field ids: `ObjectStore` asks with the same array
    /// (its read plan's) every time, which compares by identity.
    private let lastFields = Locked<(columns: [String], fields: [Int])?>(nil)

    /// The field id of each column (-1 for a column the collection lacks).
    func fields(of columns: [String]) -> [Int] {
        if let last = lastFields.withLock({ $0 }), last.columns == columns { return last.fields }
        let fields = columns.map { fieldsByName[$0] ?? -1 }
        lastFields.withLock { $0 = (columns, fields) }
        return fields
    }

    /// `predicate` prepared and bound to the collection's field ids (-1 for a column it lacks):
    /// a record is then tested without looking a column name up.
    func bind(_ predicate: StoragePredicate?) -> BoundPredicate {
        PreparedPredicate(predicate).binding { fieldsByName[$0] ?? -1 }
    }

    init(_ collection: LMDBCollection) {
        self.collection = collection
        var byName: [String: Int] = [:]
        for field in collection.fields { byName[field.name] = field.id }
        fieldsByName = byName
        schema = collection.schema
    }
}
