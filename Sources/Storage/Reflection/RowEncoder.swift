import Foundation

/// Encodes a model value straight into one record: each property lands in its column's slot of a
/// reused `values` buffer, found by position (the synthesized `encode(to:)` visits properties in
/// the same order every time) with a dictionary look-up only as a fallback.
///
/// In discovery mode it learns the layout instead: the columns in property order, each with the
/// type its value (or, for nil, its static type, or `Mirror`) implies.
final class RowEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// What the containers need; they hold it, not the encoder, so the cached container does not
    /// keep its encoder alive.
    let core: RowEncoderCore
    /// The keyed container last made, behind a pointer (no exclusivity check per record): made
    /// once and handed out again for every record, since making one allocates a box and looks up
    /// its generic metadata.
    private let cache: UnsafeMutablePointer<KeyedContainerCache>

    /// The columns of the layout, in order.
    var columns: [ColumnDefinition] { core.columns }
    /// The record last encoded, one value per column.
    var values: [StorageValue] { core.values }

    /// An encoder that fills records laid out as `columns`.
    init(typeName: String, columns: [ColumnDefinition], discovering: Bool = false) {
        core = RowEncoderCore(typeName: typeName, columns: columns, discovering: discovering)
        cache = UnsafeMutablePointer.allocate(capacity: 1)
        cache.initialize(to: KeyedContainerCache())
    }

    deinit {
        cache.pointee.release()
        cache.deinitialize(count: 1)
        cache.deallocate()
    }

    /// Learns the layout of `value`'s type from `value`, appending to `columns`.
    static func discover<T: Encodable>(_ value: T, extending columns: [ColumnDefinition] = []) throws -> RowEncoder {
        let encoder = RowEncoder(typeName: String(describing: T.self), columns: columns, discovering: true)
        encoder.core.mirror = Mirror(reflecting: value)
        try encoder.encode(value)
        encoder.core.mirror = nil
        return encoder
    }

    /// Encodes one record into `values`.
    /// - Throws: `PlanMiss` when the value has a property the layout lacks; ``StorageError`` otherwise.
    func encode<T: Encodable>(_ value: T) throws {
        core.startRecord()
        do {
            try value.encode(to: self)
        } catch let error as StorageError {
            throw error
        } catch let miss as PlanMiss {
            throw miss
        } catch {
            throw StorageError(
                .unsupportedType,
                "\(core.typeName) could not be encoded: \(error)",
                underlying: SendableErrorDescription(error)
            )
        }
        if let unsupported = core.unsupported { throw unsupported }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        cache.pointee.container(for: ObjectIdentifier(Key.self)) {
            KeyedEncodingContainer(RowKeyedEncoder<Key>(encoder: core))
        }
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        RefusingUnkeyedEncoder(error: core.refuse())
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        RefusingUnkeyedEncoder(error: core.refuse())
    }
}

/// The layout, the record being filled and the errors of a `RowEncoder`.
final class RowEncoderCore {
    let typeName: String
    /// Made on first use: only nested values stored as JSON need it.
    lazy var json = ValueMapping.makeJSONEncoder()
    private let discovering: Bool
    var mirror: Mirror?
    private(set) var unsupported: StorageError?
    /// The layout and the record being filled, behind a pointer: as stored properties of a class
    /// every access would pay a dynamic exclusivity check, and they are touched once per
    /// property per record.
    private let state: UnsafeMutablePointer<State>

    private struct State {
        var columns: [ColumnDefinition]
        var slotByName: [String: Int]
        var values: [StorageValue]
        var cursor = 0
        /// For the one key type that owns them (`keyTagOwner`, a one-byte `CodingKey` such as a
        /// synthesized `CodingKeys` enum): the byte of the key that named each column, or -1.
        var keyTags: [Int16]
        /// The identity of the key type `keyTags` are for, or 0 while none is.
        var keyTagOwner: UInt = 0
    }

    /// The columns of the layout, in order.
    var columns: [ColumnDefinition] { state.pointee.columns }
    /// The record last encoded, one value per column.
    var values: [StorageValue] { state.pointee.values }

    /// An encoder that fills records laid out as `columns`.
    init(typeName: String, columns: [ColumnDefinition], discovering: Bool = false) {
        self.typeName = typeName
        self.discovering = discovering
        var slots: [String: Int] = [:]
        for (index, column) in columns.enumerated() { slots[column.name] = index }
        state = UnsafeMutablePointer.allocate(capacity: 1)
        state.initialize(
            to: State(
                columns: columns,
                slotByName: slots,
                values: Array(repeating: .null, count: columns.count),
                keyTags: Array(repeating: -1, count: columns.count)
            )
        )
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Clears the record for the next value.
    func startRecord() {
        // One uniqueness check for the whole record, not one per value.
        state.pointee.values.withUnsafeMutableBufferPointer { values in
            for index in values.indices { values[index] = .null }
        }
        state.pointee.cursor = 0
    }

    func refuse() -> StorageError {
        let error = StorageError(
            .unsupportedType,
            "\(typeName) does not encode as a keyed container; only structs and classes with properties can be stored"
        )
        unsupported = error
        return error
    }

    func refuseNesting(_ key: String) -> StorageError {
        let error = StorageError(
            .unsupportedType,
            "\(typeName) uses a nested container for \(Identifier.quoted(key)); give that property a Codable type of its own instead",
            column: key
        )
        unsupported = error
        return error
    }

    /// The slot of column `name`, learning it in discovery mode.
    private func slot(_ name: String, type: @autoclosure () -> ColumnType, nullable: Bool) throws -> Int {
        let cursor = state.pointee.cursor
        if cursor < state.pointee.columns.count && state.pointee.columns[cursor].name == name
            && (!discovering || Identifier.spelledAlike(state.pointee.columns[cursor].name, name))
        {
            state.pointee.cursor = cursor + 1
            return cursor
        }
        if let index = state.pointee.slotByName[name] {
            // Found by a name spelt in another Unicode normalization too, which would put two
            // properties in one column: learning the layout, that is refused.
            if discovering, !Identifier.spelledAlike(state.pointee.columns[index].name, name) {
                throw StorageError(
                    .schemaMismatch,
                    "\(typeName): " + CollectionSchema.twinNames(state.pointee.columns[index].name, name),
                    column: name
                )
            }
            state.pointee.cursor = index + 1
            return index
        }
        guard discovering else { throw PlanMiss(column: name) }
        let index = state.pointee.columns.count
        state.pointee.columns.append(ColumnDefinition(name: name, type: type(), isNullable: nullable))
        state.pointee.values.append(.null)
        state.pointee.keyTags.append(-1)
        state.pointee.slotByName[name] = index
        state.pointee.cursor = index + 1
        return index
    }

    /// The slot of `key`'s column. For a key type of one byte (a synthesized `CodingKeys` enum,
    /// whose value is its case's number), the byte of each key found by name is recorded beside
    /// its column (`keyTags`): when the key's byte is the one recorded at the expected column
    /// (`cursor`), that is its column, as the look-up by name would have found, since a key's
    /// `stringValue` depends on its value only. That skips the `stringValue` witness call and
    /// the name's compare on every property. Anything else (another key type,
    /// another byte, a key type of another size) takes the look-up by name.
    @inline(__always)
    private func slot<Key: CodingKey>(_ key: Key, type: @autoclosure () -> ColumnType, nullable: Bool) throws -> Int {
        if MemoryLayout<Key>.size == 1 {
            let cursor = state.pointee.cursor
            if cursor < state.pointee.keyTags.count, state.pointee.keyTagOwner == Self.typeID(Key.self),
                state.pointee.keyTags[cursor] == Int16(unsafeBitCast(key, to: UInt8.self))
            {
                state.pointee.cursor = cursor + 1
                return cursor
            }
            return try slotRecordingTag(key, type: type(), nullable: nullable)
        }
        return try slot(key.stringValue, type: type(), nullable: nullable)
    }

    /// The bits of `type`'s identity, never 0.
    @inline(__always)
    private static func typeID<Key>(_ type: Key.Type) -> UInt { UInt(bitPattern: ObjectIdentifier(type)) }

    /// `slot` by name for a one-byte key, recording the key's byte beside the column found when
    /// `Key` owns the tags (or takes them, as the first to come).
    @inline(never)
    private func slotRecordingTag<Key: CodingKey>(_ key: Key, type: ColumnType, nullable: Bool) throws -> Int {
        let index = try slot(key.stringValue, type: type, nullable: nullable)
        let owner = state.pointee.keyTagOwner
        if owner == 0 { state.pointee.keyTagOwner = Self.typeID(Key.self) }
        if owner == 0 || owner == Self.typeID(Key.self) {
            state.pointee.keyTags[index] = Int16(unsafeBitCast(key, to: UInt8.self))
        }
        return index
    }

    func store<Key: CodingKey>(_ value: StorageValue, _ type: ColumnType, forKey key: Key) throws {
        let index = try slot(key, type: type, nullable: false)
        state.pointee.values[index] = try value.checkedForStorage(column: key.stringValue)
        if discovering && state.pointee.columns[index].type == .untyped { state.pointee.columns[index].type = type }
    }

    func storeNil<Key: CodingKey>(forKey key: Key, staticType: Any.Type?) throws {
        let index = try slot(key, type: nilColumnType(key.stringValue, staticType), nullable: true)
        state.pointee.values[index] = .null
        if discovering { state.pointee.columns[index].isNullable = true }
    }

    /// The type of a column whose value is nil: from the static type when the encoder was told
    /// it (`encodeIfPresent`), else from the property's declared type seen through `Mirror`.
    private func nilColumnType(_ key: String, _ staticType: Any.Type?) -> ColumnType {
        if let staticType { return ValueMapping.columnType(for: staticType) }
        guard let mirror else { return .untyped }
        for child in mirror.children where child.label == key || child.label == "_" + key {
            return ValueMapping.columnType(for: Swift.type(of: child.value))
        }
        return .untyped
    }
}

/// A property the cached layout of a type does not have: the layout must be learned again.
struct PlanMiss: Error {
    let column: String
}

private struct RowKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RowEncoderCore
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { try encoder.storeNil(forKey: key, staticType: nil) }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try encoder.store(.integer(value ? 1 : 0), .integer, forKey: key)
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        try encoder.store(.text(value), .text, forKey: key)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        try encoder.store(.real(value), .real, forKey: key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try encoder.store(value.storageValue, .real, forKey: key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try integer(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try integer(value, key) }

    @inline(__always)
    private func integer<T: BinaryInteger>(_ value: T, _ key: Key) throws {
        try encoder.store(try PrimitiveCoding.encode(value, column: key.stringValue), .integer, forKey: key)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let (stored, type) = try ValueMapping.encode(value, column: key.stringValue, json: encoder.json)
        try encoder.store(stored, type, forKey: key)
    }

    // Synthesized conformances call these for optional properties. Overriding them lets a nil
    // still claim its column, with a type taken from the static type.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try optional(value, key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try optional(value, key) }

    private mutating func optional<T: Encodable>(_ value: T?, _ key: Key) throws {
        if let value {
            try encode(value, forKey: key)
        } else {
            try encoder.storeNil(forKey: key, staticType: T.self)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(RefusingKeyedEncoder<NestedKey>(error: encoder.refuseNesting(key.stringValue)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        RefusingUnkeyedEncoder(error: encoder.refuseNesting(key.stringValue))
    }

    mutating func superEncoder() -> any Encoder { RefusingEncoder(error: encoder.refuseNesting("super")) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        RefusingEncoder(error: encoder.refuseNesting(key.stringValue))
    }
}
