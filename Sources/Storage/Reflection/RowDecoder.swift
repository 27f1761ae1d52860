import Foundation

/// Decodes model values straight from the rows of a scan: each property is read from its column
/// by position (the synthesized `init(from:)` asks for properties in the same order every time),
/// with a dictionary look-up only as a fallback. One decoder serves every row of a scan.
///
/// A property of a plain type (String, the integers, Double, Float, Bool, Date, Data) is read
/// with the row's typed read (`StorageRow.text(at:)` and the others), which a backend answers
/// from its own row without making a `StorageValue`; a value of any other kind (null, another
/// type, one to convert) takes the general path, so the results and errors are the same.
///
/// The keyed container is made once per decoder and handed out again for every row: making one
/// allocates a box and looks up its generic metadata, which cost about a tenth of decoding a
/// ten-property record. It is handed out through a `KeptContainer`, whose copy needs no
/// metadata look-up either.
final class RowDecoder: Decoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// What the containers need; they reach it through `link`, not the decoder, so the cached
    /// container does not keep its decoder alive.
    let core: RowDecoderCore
    /// How the containers reach `core` without a reference (see `DecoderLink`).
    private let link: UnsafeMutablePointer<DecoderLink>
    /// The container last made, behind a pointer (no exclusivity check per row).
    private let cache: UnsafeMutablePointer<KeyedContainerCache>
    /// The type of the values this decoder was kept for (`ReadPlan.keepDecoder`); set by its keeper.
    var keptFor: ObjectIdentifier?

    /// A decoder for rows laid out as `plan.columns`.
    init(typeName: String, collection: String, plan: ReadPlan) {
        core = RowDecoderCore(typeName: typeName, collection: collection, plan: plan)
        link = DecoderLink.take(for: core)
        cache = UnsafeMutablePointer.allocate(capacity: 1)
        cache.initialize(to: KeyedContainerCache())
    }

    deinit {
        // First: a container kept elsewhere must not reach `core` once it is released.
        DecoderLink.giveBack(link)
        cache.pointee.release()
        cache.deinitialize(count: 1)
        cache.deallocate()
    }

    /// Decodes one value of `type` from `row`.
    func decode<T: Decodable>(_ type: T.Type, from row: any StorageRow) throws -> T {
        core.setRow(row)
        core.cursor.pointee = 0
        defer { core.setRow(RowDecoderCore.NoRow()) }
        do {
            return try T(from: self)
        } catch {
            throw failure(error, row)
        }
    }

    /// Decodes one value of `type` from `row` straight into `slot` (uninitialized before, and
    /// initialized only when this returns): a value returned and then stored is copied in this
    /// unspecialized code (a retain of each of its references, and a release of each later).
    func decode<T: Decodable>(_ type: T.Type, from row: any StorageRow, into slot: UnsafeMutablePointer<T>) throws {
        core.setRow(row)
        core.cursor.pointee = 0
        defer { core.setRow(RowDecoderCore.NoRow()) }
        do {
            slot.initialize(to: try T(from: self))
        } catch {
            throw failure(error, row)
        }
    }

    /// A decoding failure as the `StorageError` the caller gets, naming the collection and
    /// the record.
    private func failure(_ error: any Error, _ row: any StorageRow) -> StorageError {
        do {
            throw error
        } catch let error as StorageError {
            return core.naming(row, in: error.inCollection(core.collection))
        } catch {
            return StorageError(
                .typeMismatch,
                "a \(core.typeName) could not be decoded from collection '\(core.collection)': \(error)",
                collection: core.collection,
                underlying: SendableErrorDescription(error)
            )
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        // The kept container, copied by its keeper (see `KeptContainer`): the metadata of
        // `KeyedDecodingContainer<Key>` is looked up only when one is made.
        if let kept = cache.pointee.kept(for: ObjectIdentifier(Key.self)) {
            // The cache keeps the container's keeper alive until `release()`, which runs only in
            // the decoder's `deinit`, after every use of its containers.
            return unsafeDowncast(kept.takeUnretainedValue(), to: KeptContainer<KeyedDecodingContainer<Key>>.self)
                .copy()
        }
        return makeContainer(Key.self)
    }

    /// A new keyed container, offered to the cache. Not inlined: the local it needs would make
    /// `container(keyedBy:)` look up the container's metadata on every call.
    @inline(never)
    private func makeContainer<Key: CodingKey>(_ type: Key.Type) -> KeyedDecodingContainer<Key> {
        let made = KeyedDecodingContainer(RowKeyedDecoder<Key>(link: link, generation: link.pointee.generation))
        cache.pointee.keep(made, for: ObjectIdentifier(Key.self))
        return made
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw core.notKeyed() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw core.notKeyed() }
}

/// The columns, the current row and the error texts of a `RowDecoder`.
final class RowDecoderCore {
    let typeName: String
    let collection: String
    /// Made on first use: only nested values stored as JSON need it.
    lazy var json = ValueMapping.makeJSONDecoder()
    let columns: [String]
    /// The column names again, in raw memory: compared once per property per record, and an
    /// array read pays a bounds check and keeps its buffer alive around the compare.
    private let names: UnsafeMutableBufferPointer<String>
    private let slotByName: [String: Int]
    /// The row being decoded; `NoRow` between decodes. In raw memory, and read through an
    /// immutable pointer (`row`): a call on an existential stored in a class property, or read
    /// through a mutable pointer, copied it first (a value-witness call per property).
    private let rowSlot: UnsafeMutablePointer<any StorageRow>
    /// Where the next property is expected: `init(from:)` asks for its properties in the same
    /// order every time, so the column after the last one read is tried first.
    let cursor: UnsafeMutablePointer<Int>
    /// For the one key type that owns them (`keyTagOwner`, a one-byte `CodingKey` such as a
    /// synthesized `CodingKeys` enum): the byte of the key that named each column, or -1. A key
    /// whose byte is the one recorded at the expected column names that column, without its
    /// `stringValue` (a witness call, a compare and a release a property; see
    /// `RowKeyedDecoder.index(_:_:)`).
    let keyTags: UnsafeMutablePointer<Int16>
    /// The identity of the key type `keyTags` are for, or 0 while none is.
    let keyTagOwner: UnsafeMutablePointer<UInt>

    /// Stands in for the row between decodes (a container kept past `init(from:)` reads nulls).
    struct NoRow: StorageRow {
        func value(at index: Int) -> StorageValue { .null }
    }

    /// The position of the primary key in the rows, to name the record an error comes from.
    let keySlot: Int?

    init(typeName: String, collection: String, plan: ReadPlan) {
        self.typeName = typeName
        self.collection = collection
        self.columns = plan.columns
        self.slotByName = plan.slotByName
        keySlot = plan.slotByName[plan.schema.primaryKey]
        names = UnsafeMutableBufferPointer.allocate(capacity: plan.columns.count)
        _ = names.initialize(from: plan.columns)
        rowSlot = UnsafeMutablePointer.allocate(capacity: 1)
        rowSlot.initialize(to: NoRow())
        cursor = UnsafeMutablePointer.allocate(capacity: 1)
        cursor.initialize(to: 0)
        keyTags = UnsafeMutablePointer.allocate(capacity: max(plan.columns.count, 1))
        keyTags.initialize(repeating: -1, count: max(plan.columns.count, 1))
        keyTagOwner = UnsafeMutablePointer.allocate(capacity: 1)
        keyTagOwner.initialize(to: 0)
    }

    deinit {
        names.deinitialize()
        names.deallocate()
        rowSlot.deinitialize(count: 1)
        rowSlot.deallocate()
        cursor.deallocate()
        keyTags.deallocate()
        keyTagOwner.deallocate()
    }

    /// The number of columns.
    @inline(__always)
    var columnCount: Int { names.count }

    /// The addresses a container's fast path reads (see `RowKeyedDecoder.expected(_:)`).
    var fastPath: FastPath {
        FastPath(cursor: cursor, columnCount: names.count, keyTags: keyTags, keyTagOwner: keyTagOwner, rowSlot: rowSlot)
    }

    /// What a keyed container needs to read a property whose key is the expected one by its
    /// byte, kept in its `DecoderLink`: the core's state is reached through closures that the
    /// compiler keeps out of line (a call, and its saving and restoring of registers, a
    /// property), where these addresses are plain loads.
    struct FastPath {
        let cursor: UnsafeMutablePointer<Int>
        let columnCount: Int
        let keyTags: UnsafeMutablePointer<Int16>
        let keyTagOwner: UnsafeMutablePointer<UInt>
        let rowSlot: UnsafeMutablePointer<any StorageRow>

        @inline(__always)
        func text(_ index: Int) -> String? { RowDecoderCore.read(&rowSlot.pointee) { $0.text(at: index) } }
        @inline(__always)
        func integer(_ index: Int) -> Int64? { RowDecoderCore.read(&rowSlot.pointee) { $0.integer(at: index) } }
        @inline(__always)
        func real(_ index: Int) -> Double? { RowDecoderCore.read(&rowSlot.pointee) { $0.real(at: index) } }
        @inline(__always)
        func blob(_ index: Int) -> Data? { RowDecoderCore.read(&rowSlot.pointee) { $0.blob(at: index) } }
    }

    /// Makes `row` the current row (or `NoRow` between decodes). Destroys the old one and
    /// copies the new one in: an assignment of one existential to another would compare their
    /// types first, on every row.
    @inline(__always)
    func setRow(_ row: any StorageRow) {
        rowSlot.deinitialize(count: 1)
        rowSlot.initialize(to: row)
    }

    // The reads of the current row pass it `inout` to a helper: a method called on an
    // existential read through a pointer (or from a class property) is called on a copy (a
    // value-witness copy and destroy per property); an `inout` argument is opened in place.

    @inline(__always)
    static func read<V>(_ row: inout any StorageRow, _ body: (inout any StorageRow) -> V) -> V { body(&row) }

    @inline(__always)
    func text(_ index: Int) -> String? { Self.read(&rowSlot.pointee) { $0.text(at: index) } }
    @inline(__always)
    func integer(_ index: Int) -> Int64? { Self.read(&rowSlot.pointee) { $0.integer(at: index) } }
    @inline(__always)
    func real(_ index: Int) -> Double? { Self.read(&rowSlot.pointee) { $0.real(at: index) } }
    @inline(__always)
    func blob(_ index: Int) -> Data? { Self.read(&rowSlot.pointee) { $0.blob(at: index) } }
    @inline(__always)
    func value(at index: Int) -> StorageValue { Self.read(&rowSlot.pointee) { $0.value(at: index) } }

    /// `error` naming the record of `row` it comes from (a column holding values of several
    /// types fails on some records only), when it names none yet.
    func naming(_ row: any StorageRow, in error: StorageError) -> StorageError {
        guard error.key == nil, let keySlot else { return error }
        var named = error
        named.key = row.value(at: keySlot)
        named.message = "record \(named.key!): " + named.message
        return named
    }

    /// The position of column `name` in the rows, or `nil` when the rows have no such column;
    /// the column after it is the next one tried.
    @inline(__always)
    func index(_ name: String) -> Int? {
        let next = cursor.pointee
        if next < names.count && names[next] == name {
            cursor.pointee = next + 1
            return next
        }
        return lookUp(name)
    }

    /// `index(_:)` when the column is not the expected one: by name.
    @inline(never)
    private func lookUp(_ name: String) -> Int? {
        guard let found = slotByName[name] else { return nil }
        cursor.pointee = found + 1
        return found
    }

    func missingColumn(_ name: String) -> StorageError {
        StorageError(
            .missingValue,
            "collection '\(collection)' has no column \(Identifier.quoted(name)), which \(typeName) requires;"
                + " make the property optional to read records written before it existed",
            collection: collection,
            column: name
        )
    }

    func hasColumn(_ name: String) -> Bool { slotByName[name] != nil }

    func notKeyed() -> StorageError {
        StorageError(
            .unsupportedType,
            "\(typeName) does not decode from a keyed container; only structs and classes with properties can be stored",
            collection: collection
        )
    }

    func unsupportedNesting(_ key: String) -> StorageError {
        StorageError(
            .unsupportedType,
            "\(typeName) uses a nested container for \(Identifier.quoted(key)); give that property a Codable type of its own instead",
            collection: collection,
            column: key
        )
    }
}

/// The keyed container: each property is read by position (see `RowDecoderCore.index`), and a
/// plain type straight from the row by its typed read (`StorageRow.text(at:)` and the others),
/// without a `StorageValue` in between; any other kind of value (null, a value of another type,
/// one to convert) takes the general path through `value(at:)`, with the same results and errors.
/// A property whose one-byte key is the expected one by its byte, and whose value is of the plain
/// kind asked for, is read first through the decoder's `FastPath` (no closure); anything else
/// goes through `core(_:)`, which finds the column again.
private struct RowKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// The decoder's state, reached through its link (see `DecoderLink`): the container holds
    /// no reference, so the standard library's copy of it per property is a plain copy.
    let link: UnsafeMutablePointer<DecoderLink>
    /// The link's generation when the container was made; another one means the decoder is gone.
    let generation: UInt64

    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { (try? core { $0.columns.compactMap { Key(stringValue: $0) } }) ?? [] }

    /// Runs `body` with the decoder's state, without retaining it.
    /// - Throws: `.misuse` when the container outlived its decoder; what `body` throws.
    @inline(__always)
    private func core<R>(_ body: (RowDecoderCore) throws -> R) throws -> R {
        guard link.pointee.generation == generation, let core = link.pointee.core else {
            throw DecoderLink.outlived()
        }
        // The decoder owns its core for as long as the generation matches, and `body` runs
        // within this call, on the decoder's one thread.
        return try body(core.takeUnretainedValue())
    }

    func contains(_ key: Key) -> Bool { (try? core { $0.hasColumn(key.stringValue) }) ?? false }

    /// The position of `key`'s column, or `.missingValue` when the rows have none.
    @inline(__always)
    private func required(_ key: Key, _ decoder: RowDecoderCore) throws -> Int {
        guard let index = index(key, decoder) else { throw decoder.missingColumn(key.stringValue) }
        return index
    }

    /// The position of `key`'s column, or `nil` when the rows have none.
    ///
    /// For a key type of one byte (a synthesized `CodingKeys` enum, whose value is its case's
    /// number), the byte of each key found is recorded beside its column (`keyTags`): when the
    /// key's byte is the one recorded at the expected column (`cursor`), that is its column, as
    /// `index(_:)` by name would have found, since a key's `stringValue` depends on its value
    /// only. Anything else (another key type, another byte, a key type of another size) takes
    /// the look-up by name.
    @inline(__always)
    private func index(_ key: Key, _ decoder: RowDecoderCore) -> Int? {
        if MemoryLayout<Key>.size == 1 {
            let next = decoder.cursor.pointee
            if next < decoder.columnCount, decoder.keyTagOwner.pointee == Self.keyTypeID,
                decoder.keyTags[next] == Int16(unsafeBitCast(key, to: UInt8.self))
            {
                decoder.cursor.pointee = next + 1
                return next
            }
            return indexRecordingTag(key, decoder)
        }
        return decoder.index(key.stringValue)
    }

    /// The bits of `Key`'s identity, never 0.
    @inline(__always)
    private static var keyTypeID: UInt { UInt(bitPattern: ObjectIdentifier(Key.self)) }

    /// The decoder's fast path and the column of `key`, when the key is the expected one by its
    /// byte (as in `index(_:_:)`); `nil` otherwise, and when the container outlived its decoder.
    /// Moves nothing: the caller moves the cursor on (`advance`) once it has read the value,
    /// and otherwise takes the general path, which finds the column again.
    @inline(__always)
    private func expected(_ key: Key) -> (path: RowDecoderCore.FastPath, index: Int)? {
        guard MemoryLayout<Key>.size == 1, link.pointee.generation == generation, let path = link.pointee.fast
        else { return nil }
        let next = path.cursor.pointee
        guard next < path.columnCount, path.keyTagOwner.pointee == Self.keyTypeID,
            path.keyTags[next] == Int16(unsafeBitCast(key, to: UInt8.self))
        else { return nil }
        return (path, next)
    }

    /// `index(_:_:)` by name, for a one-byte key, recording the key's byte beside the column
    /// found when `Key` owns the decoder's tags (or takes them, as the first to come).
    @inline(never)
    private func indexRecordingTag(_ key: Key, _ decoder: RowDecoderCore) -> Int? {
        guard let index = decoder.index(key.stringValue) else { return nil }
        let owner = decoder.keyTagOwner.pointee
        if owner == 0 { decoder.keyTagOwner.pointee = Self.keyTypeID }
        if owner == 0 || owner == Self.keyTypeID {
            decoder.keyTags[index] = Int16(unsafeBitCast(key, to: UInt8.self))
        }
        return index
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        try core { decoder in
            guard let index = index(key, decoder) else { return true }
            return decoder.value(at: index).isNull
        }
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        if let (path, index) = expected(key), let number = path.integer(index), number == 0 || number == 1 {
            path.cursor.pointee = index + 1
            return number == 1
        }
        return try core { decoder in
            let index = try required(key, decoder)
            if let number = decoder.integer(index), number == 0 || number == 1 { return number == 1 }
            return try PrimitiveCoding.decodeBool(decoder.value(at: index), column: key.stringValue)
        }
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        if let (path, index) = expected(key), let text = path.text(index) {
            path.cursor.pointee = index + 1
            return text
        }
        return try core { decoder in
            let index = try required(key, decoder)
            if let text = decoder.text(index) { return text }
            return try PrimitiveCoding.decodeString(decoder.value(at: index), column: key.stringValue)
        }
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        if let (path, index) = expected(key), let number = path.real(index) {
            path.cursor.pointee = index + 1
            return number
        }
        return try core { decoder in
            let index = try required(key, decoder)
            if let number = decoder.real(index) { return number }
            return try PrimitiveCoding.decodeDouble(decoder.value(at: index), column: key.stringValue)
        }
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        if let (path, index) = expected(key), let number = path.real(index), let exact = Float(exactly: number) {
            path.cursor.pointee = index + 1
            return exact
        }
        return try core { decoder in
            let index = try required(key, decoder)
            if let number = decoder.real(index), let exact = Float(exactly: number) { return exact }
            return try PrimitiveCoding.decodeFloat(decoder.value(at: index), column: key.stringValue)
        }
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        if let (path, index) = expected(key), let number = path.integer(index), let exact = T(exactly: number) {
            path.cursor.pointee = index + 1
            return exact
        }
        return try core { decoder in
            let index = try required(key, decoder)
            if let number = decoder.integer(index), let exact = T(exactly: number) { return exact }
            return try PrimitiveCoding.decodeInteger(decoder.value(at: index), column: key.stringValue)
        }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if T.self == Date.self || T.self == Data.self, let (path, index) = expected(key) {
            if T.self == Date.self, let seconds = path.real(index) {
                path.cursor.pointee = index + 1
                return unsafeBitCast(Date(timeIntervalSince1970: seconds), to: T.self)
            }
            if T.self == Data.self, let data = path.blob(index) {
                path.cursor.pointee = index + 1
                return unsafeBitCast(data, to: T.self)
            }
        }
        return try core { decoder in
            let index = try required(key, decoder)
            // A Date stored as a real and Data stored as a blob, read without a StorageValue (a
            // `T?` here would cost a metadata look-up of `Optional<T>` per call).
            if T.self == Date.self, let seconds = decoder.real(index) {
                return unsafeBitCast(Date(timeIntervalSince1970: seconds), to: T.self)
            }
            if T.self == Data.self, let data = decoder.blob(index) {
                return unsafeBitCast(data, to: T.self)
            }
            let value = decoder.value(at: index)
            if value.isNull, !(T.self is any OptionalProtocol.Type) {
                throw StorageError(
                    .missingValue,
                    "column '\(key.stringValue)' is null, but a \(T.self) is required",
                    column: key.stringValue
                )
            }
            return try ValueMapping.decode(type, from: value, column: key.stringValue, json: decoder.json)
        }
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        if let (path, index) = expected(key), let number = path.integer(index), number == 0 || number == 1 {
            path.cursor.pointee = index + 1
            return number == 1
        }
        return try core { decoder in
            guard let index = index(key, decoder) else { return nil }
            if let number = decoder.integer(index), number == 0 || number == 1 { return number == 1 }
            return try optional(index, decoder) { try PrimitiveCoding.decodeBool($0, column: key.stringValue) }
        }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        if let (path, index) = expected(key), let text = path.text(index) {
            path.cursor.pointee = index + 1
            return text
        }
        return try core { decoder in
            guard let index = index(key, decoder) else { return nil }
            if let text = decoder.text(index) { return text }
            return try optional(index, decoder) { try PrimitiveCoding.decodeString($0, column: key.stringValue) }
        }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        if let (path, index) = expected(key), let number = path.real(index) {
            path.cursor.pointee = index + 1
            return number
        }
        return try core { decoder in
            guard let index = index(key, decoder) else { return nil }
            if let number = decoder.real(index) { return number }
            return try optional(index, decoder) { try PrimitiveCoding.decodeDouble($0, column: key.stringValue) }
        }
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try core { decoder in
            guard let index = index(key, decoder) else { return nil }
            return try optional(index, decoder) { try PrimitiveCoding.decodeFloat($0, column: key.stringValue) }
        }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optionalInteger(key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optionalInteger(key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optionalInteger(key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optionalInteger(key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optionalInteger(key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optionalInteger(key) }

    @inline(__always)
    private func optionalInteger<T: FixedWidthInteger>(_ key: Key) throws -> T? {
        if let (path, index) = expected(key), let number = path.integer(index), let exact = T(exactly: number) {
            path.cursor.pointee = index + 1
            return exact
        }
        return try core { decoder in
            guard let index = index(key, decoder) else { return nil }
            if let number = decoder.integer(index), let exact = T(exactly: number) { return exact }
            return try optional(index, decoder) { try PrimitiveCoding.decodeInteger($0, column: key.stringValue) }
        }
    }

    /// The general path of `decodeIfPresent`: `nil` for a null, else `convert` of the value.
    @inline(__always)
    private func optional<V>(
        _ index: Int,
        _ decoder: RowDecoderCore,
        _ convert: (StorageValue) throws -> V
    ) throws -> V? {
        let value = decoder.value(at: index)
        if value.isNull { return nil }
        return try convert(value)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        if T.self == Date.self || T.self == Data.self, let (path, index) = expected(key) {
            if T.self == Date.self, let seconds = path.real(index) {
                path.cursor.pointee = index + 1
                return unsafeBitCast(Date(timeIntervalSince1970: seconds), to: T.self)
            }
            if T.self == Data.self, let data = path.blob(index) {
                path.cursor.pointee = index + 1
                return unsafeBitCast(data, to: T.self)
            }
        }
        return try core { decoder in
            guard let index = index(key, decoder) else { return nil }
            if T.self == Date.self, let seconds = decoder.real(index) {
                return unsafeBitCast(Date(timeIntervalSince1970: seconds), to: T.self)
            }
            if T.self == Data.self, let data = decoder.blob(index) {
                return unsafeBitCast(data, to: T.self)
            }
            return try optional(index, decoder) {
                try ValueMapping.decode(type, from: $0, column: key.stringValue, json: decoder.json)
            }
        }
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        throw try core { $0.unsupportedNesting(key.stringValue) }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw try core { $0.unsupportedNesting(key.stringValue) }
    }

    func superDecoder() throws -> any Decoder { throw try core { $0.unsupportedNesting("super") } }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        throw try core { $0.unsupportedNesting(key.stringValue) }
    }
}

/// What a keyed container reaches its decoder's state through: a small record in memory that
/// is never freed, only handed to the next decoder (`take`, `giveBack`), with a generation that
/// moves on each time. The container holds the record's address and the generation it was
/// made in, so it needs no reference to the state (a retain and a release per property, as
/// the standard library copies the container for each), and a container kept past its
/// decoder's life (a type whose `init(from:)` stores it) throws `.misuse` instead of reading
/// freed memory.
///
/// Only the decoder's thread reads a link while the decoder lives; a container used on another
/// thread while its decoder is being freed is a data race, as any use of a decoder from two
/// threads at once is.
struct DecoderLink {
    var generation: UInt64 = 0
    var core: Unmanaged<RowDecoderCore>?
    /// `core`'s fast path while `core` is set.
    var fast: RowDecoderCore.FastPath?

    /// Links no decoder uses now.
    private static let idle = Locked<[UnsafeMutablePointer<DecoderLink>]>([])

    /// A link to `core`, from the idle ones or a new one.
    static func take(for core: RowDecoderCore) -> UnsafeMutablePointer<DecoderLink> {
        let link =
            idle.withLock { $0.popLast() }
            ?? {
                let made = UnsafeMutablePointer<DecoderLink>.allocate(capacity: 1)
                made.initialize(to: DecoderLink())
                return made
            }()
        link.pointee.core = Unmanaged.passUnretained(core)
        link.pointee.fast = core.fastPath
        return link
    }

    /// Ends `link`'s use by its decoder (whose containers then throw) and keeps it for another.
    static func giveBack(_ link: UnsafeMutablePointer<DecoderLink>) {
        link.pointee.generation &+= 1
        link.pointee.core = nil
        link.pointee.fast = nil
        idle.withLock { $0.append(link) }
    }

    static func outlived() -> StorageError {
        StorageError(
            .misuse,
            "a decoding container was used after the value it was made for was decoded; a type's"
                + " init(from:) must not keep its container or decoder"
        )
    }
}
