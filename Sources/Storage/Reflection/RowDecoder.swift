import Foundation

/// Decodes model values straight from the rows of a scan: each property is read from its column
/// by position (the synthesized `init(from:)` asks for properties in the same order every time),
/// with a dictionary look-up only as a fallback. One decoder serves every row of a scan.
///
/// The keyed container is made once per decoder and handed out again for every row: making one
/// allocates a box and looks up its generic metadata, which cost about a tenth of decoding a
/// ten-property record.
final class RowDecoder: Decoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// What the containers need; they hold it, not the decoder, so the cached container does not
    /// keep its decoder alive.
    let core: RowDecoderCore
    /// The container last made, behind a pointer (no exclusivity check per row).
    private let cache: UnsafeMutablePointer<KeyedContainerCache>

    /// A decoder for rows laid out as `plan.columns`.
    init(typeName: String, collection: String, plan: ReadPlan) {
        core = RowDecoderCore(typeName: typeName, collection: collection, plan: plan)
        cache = UnsafeMutablePointer.allocate(capacity: 1)
        cache.initialize(to: KeyedContainerCache())
    }

    deinit {
        cache.pointee.release()
        cache.deinitialize(count: 1)
        cache.deallocate()
    }

    /// Decodes one value of `type` from `row`.
    func decode<T: Decodable>(_ type: T.Type, from row: any StorageRow) throws -> T {
        core.state.pointee.row = row
        core.state.pointee.cursor = 0
        defer { core.state.pointee.row = RowDecoderCore.NoRow() }
        do {
            return try T(from: self)
        } catch let error as StorageError {
            throw core.naming(row, in: error.inCollection(core.collection))
        } catch {
            throw StorageError(
                .typeMismatch,
                "a \(core.typeName) could not be decoded from collection '\(core.collection)': \(error)",
                collection: core.collection,
                underlying: SendableErrorDescription(error)
            )
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        cache.pointee.container(for: ObjectIdentifier(Key.self)) {
            KeyedDecodingContainer(RowKeyedDecoder<Key>(decoder: core))
        }
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
    private let slotByName: [String: Int]
    /// The per-row state, behind a pointer: as stored properties of a class every access would
    /// pay a dynamic exclusivity check, and this is read once per property per record.
    let state: UnsafeMutablePointer<RowState>

    struct RowState {
        /// The row being decoded; `NoRow` between decodes. Not an optional: a call through an
        /// optional existential copied it (a retain and a release) for every property.
        var row: any StorageRow = NoRow()
        var cursor = 0
    }

    /// Stands in for the row between decodes.
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
        state = UnsafeMutablePointer.allocate(capacity: 1)
        state.initialize(to: RowState())
    }

    /// `error` naming the record of `row` it comes from (a column holding values of several
    /// types fails on some records only), when it names none yet.
    func naming(_ row: any StorageRow, in error: StorageError) -> StorageError {
        guard error.key == nil, let keySlot else { return error }
        var named = error
        named.key = row.value(at: keySlot)
        named.message = "record \(named.key!): " + named.message
        return named
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The value of column `name` in the current row, or `nil` when the rows have no such column.
    func value(_ name: String) -> StorageValue? {
        let cursor = state.pointee.cursor
        let index: Int
        if cursor < columns.count && columns[cursor] == name {
            index = cursor
        } else if let found = slotByName[name] {
            index = found
        } else {
            return nil
        }
        state.pointee.cursor = index + 1
        return state.pointee.row.value(at: index)
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

private struct RowKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: RowDecoderCore
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { decoder.columns.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { decoder.hasColumn(key.stringValue) }

    private func required(_ key: Key) throws -> StorageValue {
        let name = key.stringValue
        guard let value = decoder.value(name) else {
            throw StorageError(
                .missingValue,
                "collection '\(decoder.collection)' has no column \(Identifier.quoted(name)), which \(decoder.typeName) requires;"
                    + " make the property optional to read records written before it existed",
                collection: decoder.collection,
                column: name
            )
        }
        return value
    }

    private func present(_ key: Key) -> StorageValue? {
        guard let value = decoder.value(key.stringValue), !value.isNull else { return nil }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { decoder.value(key.stringValue)?.isNull ?? true }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try PrimitiveCoding.decodeBool(try required(key), column: key.stringValue)
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try PrimitiveCoding.decodeString(try required(key), column: key.stringValue)
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try PrimitiveCoding.decodeDouble(try required(key), column: key.stringValue)
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try PrimitiveCoding.decodeFloat(try required(key), column: key.stringValue)
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
        try PrimitiveCoding.decodeInteger(try required(key), column: key.stringValue)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let value = try required(key)
        if value.isNull, !(T.self is any OptionalProtocol.Type) {
            throw StorageError(
                .missingValue,
                "column '\(key.stringValue)' is null, but a \(T.self) is required",
                column: key.stringValue
            )
        }
        return try ValueMapping.decode(type, from: value, column: key.stringValue, json: self.decoder.json)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try present(key).map { try PrimitiveCoding.decodeBool($0, column: key.stringValue) }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try present(key).map { try PrimitiveCoding.decodeString($0, column: key.stringValue) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try present(key).map { try PrimitiveCoding.decodeDouble($0, column: key.stringValue) }
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try present(key).map { try PrimitiveCoding.decodeFloat($0, column: key.stringValue) }
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
        try present(key).map { try PrimitiveCoding.decodeInteger($0, column: key.stringValue) }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try present(key).map {
            try ValueMapping.decode(type, from: $0, column: key.stringValue, json: self.decoder.json)
        }
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        throw decoder.unsupportedNesting(key.stringValue)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw decoder.unsupportedNesting(key.stringValue)
    }

    func superDecoder() throws -> any Decoder { throw decoder.unsupportedNesting("super") }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw decoder.unsupportedNesting(key.stringValue) }
}
