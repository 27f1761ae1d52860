/// What reading a collection needs, derived once from its stored schema and cached by
/// ``ObjectStore`` until the schema changes: the column list, each column's position and type.
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

    /// A decoder kept for the next `fetch(_:id:)` of the same type: making one (the decoder, its
    /// state and its keyed container) cost about a fifteenth of a key look-up. A caller takes it
    /// out and puts it back, so a decoder is never used by two threads at once; a nested look-up
    /// meanwhile makes one of its own.
    private let spare = Locked<SpareDecoder?>(nil)

    private struct SpareDecoder {
        let type: ObjectIdentifier
        let decoder: RowDecoder
    }

    /// The kept decoder for values of `type`, removed from the plan; `nil` when there is none.
    func takeDecoder(for type: Any.Type) -> RowDecoder? {
        let id = ObjectIdentifier(type)
        return spare.withLock { spare in
            guard let kept = spare, kept.type == id else { return nil }
            spare = nil
            return kept.decoder
        }
    }

    /// Keeps `decoder` (made for values of `type` from this plan) for the next look-up.
    func keepDecoder(_ decoder: RowDecoder, for type: Any.Type) {
        let id = ObjectIdentifier(type)
        spare.withLock { spare in
            if spare == nil { spare = SpareDecoder(type: id, decoder: decoder) }
        }
    }
}

/// What a key look-up of one Swift type needs, kept by ``ObjectStore`` per type and found with
/// one lock: the type's collection and name (from its ``ModelInfo``, which never change) and
/// the read plan of the stored schema it read last (valid while `plan.schema` is the stored
/// schema; a look-up that finds another schema makes a new one).
final class TypeReadPlan: Sendable {
    let collection: String
    let typeName: String
    let plan: ReadPlan

    init(collection: String, typeName: String, plan: ReadPlan) {
        self.collection = collection
        self.typeName = typeName
        self.plan = plan
    }
}
