import Foundation

/// Encodes one value that is not a plain type to find its stored form: a value that encodes
/// itself as a single primitive (an enum with a raw value, a wrapper) is stored as that
/// primitive; one that asks for a keyed or unkeyed container is stored as JSON text.
final class SingleValueEncoder: Encoder, SingleValueEncodingContainer {
    let column: String
    let json: JSONEncoder
    var result: StorageValue?
    var resultType: ColumnType?
    var needsContainer = false

    init(column: String, json: JSONEncoder) {
        self.column = column
        self.json = json
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        needsContainer = true
        return KeyedEncodingContainer(RefusingKeyedEncoder<Key>())
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        needsContainer = true
        return RefusingUnkeyedEncoder()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    private func set(_ value: StorageValue, _ type: ColumnType) throws {
        if needsContainer { throw NeedsContainer() }
        result = value
        resultType = type
    }

    func encodeNil() throws { try set(.null, .untyped) }
    func encode(_ value: Bool) throws { try set(.integer(value ? 1 : 0), .integer) }
    func encode(_ value: String) throws { try set(.text(value), .text) }
    func encode(_ value: Double) throws { try set(.real(value), .real) }
    func encode(_ value: Float) throws { try set(value.storageValue, .real) }
    func encode(_ value: Int) throws { try set(PrimitiveCoding.encode(value, column: column), .integer) }
    func encode(_ value: Int8) throws { try set(PrimitiveCoding.encode(value, column: column), .integer) }
    func encode(_ value: Int16) throws { try set(PrimitiveCoding.encode(value, column: column), .integer) }
    func encode(_ value: Int32) throws { try set(PrimitiveCoding.encode(value, column: column), .integer) }
    func encode(_ value: Int64) throws { try set(PrimitiveCoding.encode(value, column: column), .integer) }
    func encode(_ value: UInt) throws { try set(PrimitiveCoding.encode(value, column: column), .integer) }
    func encode(_ value: UInt8) throws { try set(PrimitiveCoding.encode(value, column: column), .integer) }
    func encode(_ value: UInt16) throws { try set(PrimitiveCoding.encode(value, column: column), .integer) }
    func encode(_ value: UInt32) throws { try set(PrimitiveCoding.encode(value, column: column), .integer) }
    func encode(_ value: UInt64) throws { try set(PrimitiveCoding.encode(value, column: column), .integer) }

    func encode<T: Encodable>(_ value: T) throws {
        let (stored, type) = try ValueMapping.encode(value, column: column, json: json)
        try set(stored, type)
    }
}

/// A container handed out where encoding cannot go on (the value needs JSON, or a shape the
/// store cannot map); its first use throws `error`.
struct RefusingKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var error: any Error = NeedsContainer()
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws { throw error }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw error }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(RefusingKeyedEncoder<NestedKey>(error: error))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        RefusingUnkeyedEncoder(error: error)
    }
    mutating func superEncoder() -> any Encoder { RefusingEncoder(error: error) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { RefusingEncoder(error: error) }
}

struct RefusingUnkeyedEncoder: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    var error: any Error = NeedsContainer()
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws { throw error }
    mutating func encode<T: Encodable>(_ value: T) throws { throw error }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(RefusingKeyedEncoder<NestedKey>(error: error))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { RefusingUnkeyedEncoder(error: error) }
    mutating func superEncoder() -> any Encoder { RefusingEncoder(error: error) }
}

struct RefusingEncoder: Encoder {
    var error: any Error
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RefusingKeyedEncoder<Key>(error: error))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { RefusingUnkeyedEncoder(error: error) }
    func singleValueContainer() -> any SingleValueEncodingContainer { RefusingUnkeyedEncoder(error: error) }
}
