import Synchronization

/// What reading a collection needs, derived once from its stored schema and cached by
/// ``ObjectStore`` until the schema changes: the column list, each column's position and type.
final class ReadPlan: Sendable {
    let schema: CollectionSchema
    let columns: [String]
    let slotByName: [String: Int]
    let types: [String: ColumnType]
    /// The type of the primary key's column (`.untyped` when the schema has no such column):
    /// each key look-up converts its key to it, and a dictionary look-up by name cost about 300
    /// instructions of a look-up.
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

    /// A decoder kept for the next `fetch(_:id:)` of the same type: making one (the decoder, its
    /// state and its keyed container) cost about a fifteenth of a key look-up. A caller takes it
    /// out and puts it back, so a decoder is never used by two threads at once; a nested look-up
    /// meanwhile makes one of its own. Handed over with one atomic exchange each way, not a lock
    /// (two lock round trips were about 200 instructions a look-up).
    private let spare = SpareDecoderSlot()

    /// The kept decoder for values of `type`, removed from the plan; `nil` when there is none.
    func takeDecoder(for type: Any.Type) -> RowDecoder? {
        spare.take(for: ObjectIdentifier(type))
    }

    /// Keeps `decoder` (made for values of `type` from this plan) for the next look-up.
    func keepDecoder(_ decoder: RowDecoder, for type: Any.Type) {
        spare.put(decoder, for: ObjectIdentifier(type))
    }
}

/// One spare decoder, handed over without a lock: taken with one atomic exchange, given back with
/// one compare-and-exchange (as `SQLiteIdleReaderSlot` hands over a reader).
///
/// `@unchecked Sendable` because the decoder it holds is not: the slot hands each decoder it
/// holds to exactly one caller (the exchange that empties it), with acquire/release ordering, so
/// a decoder is only ever used by the one thread that took it.
final class SpareDecoderSlot: @unchecked Sendable {
    /// The decoder, retained while it is here.
    private let decoder = Atomic<Unmanaged<RowDecoder>?>(nil)

    deinit {
        decoder.exchange(nil, ordering: .acquiring)?.release()
    }

    /// The decoder kept for values of type `type`, now the caller's alone; `nil` when the slot
    /// is empty or holds one for another type (which stays).
    func take(for type: ObjectIdentifier) -> RowDecoder? {
        guard let taken = decoder.exchange(nil, ordering: .acquiring) else { return nil }
        if taken._withUnsafeGuaranteedRef({ $0.keptFor == type }) { return taken.takeRetainedValue() }
        // Another type's decoder (two types read from one collection): back it goes, unless the
        // slot was filled meanwhile.
        if !decoder.compareExchange(expected: nil, desired: taken, ordering: .releasing).exchanged {
            taken.release()
        }
        return nil
    }

    /// Keeps `kept`, made for values of type `type`, when the slot is empty.
    func put(_ kept: RowDecoder, for type: ObjectIdentifier) {
        kept.keptFor = type
        let retained = Unmanaged.passRetained(kept)
        if !decoder.compareExchange(expected: nil, desired: retained, ordering: .releasing).exchanged {
            retained.release()
        }
    }
}

/// What a key look-up of one Swift type needs, kept by ``ObjectStore`` per type and found
/// without a lock (`LastTypeReadPlan`) or with one: the type's collection and name (from its ``ModelInfo``, which never change) and
/// the read plan of the stored schema it read last (valid while `plan.schema` is the stored
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
    /// The backend's schema stamp (`StorageReadTransaction.schemaStamp`) at which `plan` was
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

/// The ``TypeReadPlan`` a store used last, found without a lock: the look-up takes it out with
/// one atomic exchange and puts it back with one compare-and-exchange (the lock and the hash of
/// the store's dictionary were about 250 instructions a look-up). A look-up that finds the slot
/// empty (another thread has it out) or holding another type's plan asks the dictionary.
///
/// The slot may hold an older plan of a type than the dictionary (a look-up put back the plan it
/// had while another made a new one): a look-up checks the plan's schema against the stored one
/// in any case, and makes a new plan when they differ.
///
/// `@unchecked Sendable` because `Atomic` of an `Unmanaged` is not: the slot owns one retain of
/// the plan it holds, and hands it over only by the exchange that empties it.
final class LastTypeReadPlan: @unchecked Sendable {
    private let plan = Atomic<Unmanaged<TypeReadPlan>?>(nil)

    deinit {
        plan.exchange(nil, ordering: .acquiring)?.release()
    }

    /// The plan kept for `type`, if the slot holds it (it stays there).
    @inline(__always)
    func find(_ type: ObjectIdentifier) -> TypeReadPlan? {
        guard let taken = plan.exchange(nil, ordering: .acquiring) else { return nil }
        // The caller's reference is taken before the plan goes back: once back, another thread
        // may take it out and release it.
        let found = taken._withUnsafeGuaranteedRef { $0.type == type } ? taken.retain().takeRetainedValue() : nil
        // Back into the slot (with the slot's retain), unless another was stored meanwhile.
        if !plan.compareExchange(expected: nil, desired: taken, ordering: .releasing).exchanged {
            taken.release()
        }
        return found
    }

    /// Keeps `made` in the slot in place of what it held.
    func store(_ made: TypeReadPlan) {
        plan.exchange(Unmanaged.passRetained(made), ordering: .acquiringAndReleasing)?.release()
    }
}
