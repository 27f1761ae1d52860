import Foundation

/// Decodes one value that is not a plain type from its stored form; a type that asks for a keyed
/// or unkeyed container is read from JSON text instead (see `ValueMapping.decode`).
struct SingleValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: StorageValue
    let column: String
    let json: JSONDecoder

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw NeedsContainer()
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw NeedsContainer() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try PrimitiveCoding.decodeBool(value, column: column) }
    func decode(_ type: String.Type) throws -> String { try PrimitiveCoding.decodeString(value, column: column) }
    func decode(_ type: Double.Type) throws -> Double { try PrimitiveCoding.decodeDouble(value, column: column) }
    func decode(_ type: Float.Type) throws -> Float {
        try PrimitiveCoding.decodeFloat(value, column: column)
    }
    func decode(_ type: Int.Type) throws -> Int { try PrimitiveCoding.decodeInteger(value, column: column) }
    func decode(_ type: Int8.Type) throws -> Int8 { try PrimitiveCoding.decodeInteger(value, column: column) }
    func decode(_ type: Int16.Type) throws -> Int16 { try PrimitiveCoding.decodeInteger(value, column: column) }
    func decode(_ type: Int32.Type) throws -> Int32 { try PrimitiveCoding.decodeInteger(value, column: column) }
    func decode(_ type: Int64.Type) throws -> Int64 { try PrimitiveCoding.decodeInteger(value, column: column) }
    func decode(_ type: UInt.Type) throws -> UInt { try PrimitiveCoding.decodeInteger(value, column: column) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try PrimitiveCoding.decodeInteger(value, column: column) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try PrimitiveCoding.decodeInteger(value, column: column) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try PrimitiveCoding.decodeInteger(value, column: column) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try PrimitiveCoding.decodeInteger(value, column: column) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try ValueMapping.decode(type, from: value, column: column, json: json)
    }
}
