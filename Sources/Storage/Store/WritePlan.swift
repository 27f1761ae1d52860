/// What saving values of one type into its collection needs, worked out once and cached by
/// ``ObjectStore`` for the saves that follow: the type's schema and column layout, the position
/// of the key, the columns whose stored type differs from the Swift type's, and a spare encoder.
///
/// A plan is a function of two things only: the type's layout and the stored schema it was
/// checked against (`stored`). A save reuses it only when the stored schema it sees in its own
/// transaction equals `stored`; anything else (another store or process that added a column or
/// widened one, a collection dropped and made again, a rolled-back transaction that had created
/// or migrated it) shows up as a different stored schema, and the save takes the full path again
/// (`Session.makeWriteState`), which checks and prepares the collection and replaces the plan.
/// A plan is only kept when that full path changed nothing in the collection, so `stored` is
/// always a schema that was read, not one a migration was about to write.
final class WritePlan: Sendable {
    let info: ModelInfo
    /// The schema the type's values need.
    let schema: CollectionSchema
    /// The stored schema this plan was checked against.
    let stored: CollectionSchema
    /// The type's columns, in the encoder's order.
    let layout: [ColumnDefinition]
    /// `layout`'s names, as the backend's `makeWriter` takes them.
    let columnNames: [String]
    let keyIndex: Int
    /// The columns whose stored type differs from the type's: a value is converted with the
    /// stored type's affinity before it is written.
    let affinityFixes: [AffinityFix]
    /// The collection's folded name, for the change log.
    let foldedCollection: String
    /// The type's references, by position in `layout`: each non-null value is checked to name a
    /// record before the record is written (`Session.checkReferences`). Empty for a type without
    /// references, whose saves do nothing more.
    let referenceSlots: [ReferenceSlot]

    struct ReferenceSlot: Sendable {
        let index: Int
        let column: String
        let target: String
    }

    struct AffinityFix: Sendable {
        let index: Int
        let type: ColumnType
    }

    init(
        info: ModelInfo,
        schema: CollectionSchema,
        stored: CollectionSchema,
        keyIndex: Int,
        affinityFixes: [AffinityFix]
    ) {
        var info = info
        info.layout = schema.columns
        self.info = info
        self.schema = schema
        self.stored = stored
        layout = schema.columns
        columnNames = schema.columns.map(\.name)
        self.keyIndex = keyIndex
        self.affinityFixes = affinityFixes
        foldedCollection = Identifier.folded(info.collection)
        referenceSlots = info.references.compactMap { reference in
            schema.columns.firstIndex { $0.name == reference.column }.map {
                ReferenceSlot(index: $0, column: reference.column, target: reference.targetCollection)
            }
        }
    }

    /// An encoder kept for the next save of the type: making one builds its slot table and its
    /// buffers. A caller takes it out and puts it back, so an encoder is never used by two
    /// threads at once; a save meanwhile makes one of its own.
    private let spare = Locked<RowEncoder?>(nil)

    /// The kept encoder, removed from the plan, or a new one.
    func takeEncoder() -> RowEncoder {
        spare.withLock { spare in
            let kept = spare
            spare = nil
            return kept
        } ?? RowEncoder(typeName: info.typeName, columns: layout)
    }

    /// Keeps `encoder` (made from this plan's layout, and last used for a record encoded whole)
    /// for the next save.
    func keepEncoder(_ encoder: RowEncoder) {
        spare.withLock { spare in
            if spare == nil { spare = encoder }
        }
    }
}
