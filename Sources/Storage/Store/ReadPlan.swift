import Synchronization

/// What reading a collection needs, derived once from its stored schema and cached by
/// ``ObjectStore`` until the schema changes: the column list, each column's position and type.
final class ReadPlan: Sendable {
    let schema: CollectionSchema
    let columns: [String]
    let slotByName: [String: Int]
    let types: [String: ColumnType]
    /// The type of the primary key's column (`.untyped` when the schema has no such column):
    /// each key look-up converts its key to it, without a dictionary look-up by name
    /// (docs/BENCHMARKS.md).
    let keyType: ColumnType

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
        keyType = types[schema.primaryKey] ?? .untyped
    }

    /// Whether this plan was made for `stored` (compared in place: `plan.schema == stored` at
    /// the caller copied the plan's schema first, its four references retained and released).
    @inline(never)
    func describes(_ stored: CollectionSchema) -> Bool { schema == stored }

    /// A decoder kept for the next `fetch(_:id:)` of the same type, since making one (the
    /// decoder, its state and its keyed container) is a large part of a key look-up
    /// (docs/BENCHMARKS.md). A caller takes it out and puts it back, so a decoder is never used by
    /// two threads at once; a nested look-up meanwhile makes one of its own.
    private let spare = AtomicSlot<RowDecoder>()

    /// The kept decoder for values of `type`, removed from the plan; `nil` when there is none.
    func takeDecoder(for type: Any.Type) -> RowDecoder? {
        let type = ObjectIdentifier(type)
        // Another type's decoder (two types read from one collection) stays in the slot.
        return spare.take { $0.keptFor == type }
    }

    /// Keeps `decoder` (made for values of `type` from this plan) for the next look-up.
    func keepDecoder(_ decoder: RowDecoder, for type: Any.Type) {
        decoder.keptFor = ObjectIdentifier(type)
        spare.put(decoder)
    }
}

/// What a key look-up of one Swift type needs, kept by ``ModelCatalog`` per type and found
/// without a lock (the last one used, in an ``AtomicSlot``) or with one: the type's collection
/// and name (from its ``ModelInfo``, which never change) and the read plan of the stored schema it read last (valid while `plan.schema` is the stored
/// schema; a look-up that finds another schema makes a new one).
///
/// `@unchecked Sendable` for `spareSlot` (an `Atomic` of a pointer, which is not `Sendable`):
/// the memory it holds is handed to one caller at a time by the exchange that empties it.
final class TypeReadPlan: @unchecked Sendable {
    /// The Swift type's identity.
    let type: ObjectIdentifier
    let collection: String
    let typeName: String
    let plan: ReadPlan
    /// Uninitialized memory for one value of the type, lent to a `fetch(_:id:)` for the value
    /// it decodes (see `takeSlot(for:)`).
    private let spareSlot = Atomic<UnsafeMutableRawPointer?>(nil)
    /// The backend's schema stamp (`BackendReadTransaction.schemaStamp`) at which `plan` was
    /// last found to describe the stored schema; `Int64.min` before that.
    private let checkedStamp = Atomic<Int64>(.min)

    init(type: ObjectIdentifier, collection: String, typeName: String, plan: ReadPlan) {
        self.type = type
        self.collection = collection
        self.typeName = typeName
        self.plan = plan
    }

    deinit {
        spareSlot.exchange(nil, ordering: .acquiring)?.deallocate()
    }

    /// Whether the plan was found to describe the stored schema at `stamp`, so a read at the
    /// same stamp need not read the schema again. The plan never changes, so the stamp needs no
    /// ordering with anything else.
    @inline(__always)
    func isChecked(at stamp: Int64) -> Bool {
        stamp != .min && checkedStamp.load(ordering: .relaxed) == stamp
    }

    /// Notes that the plan describes the stored schema at `stamp`.
    func noteChecked(at stamp: Int64) {
        checkedStamp.store(stamp, ordering: .relaxed)
    }

    /// Uninitialized memory for one value of `type` (the plan's type): the kept memory, now the
    /// caller's alone, or new memory when another caller has it. Give it back with `keepSlot`
    /// (uninitialized again).
    @inline(__always)
    func takeSlot<T>(for type: T.Type) -> UnsafeMutablePointer<T> {
        if let kept = spareSlot.exchange(nil, ordering: .acquiring) { return kept.assumingMemoryBound(to: T.self) }
        return UnsafeMutablePointer<T>.allocate(capacity: 1)
    }

    /// Keeps `slot` (from `takeSlot(for:)`, uninitialized) for the next caller, or frees it
    /// when memory is kept already.
    @inline(__always)
    func keepSlot<T>(_ slot: UnsafeMutablePointer<T>) {
        if !spareSlot.compareExchange(expected: nil, desired: UnsafeMutableRawPointer(slot), ordering: .releasing)
            .exchanged
        {
            slot.deallocate()
        }
    }
}
