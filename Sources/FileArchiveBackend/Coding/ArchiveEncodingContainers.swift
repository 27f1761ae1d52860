import Foundation

/// Writes entries (key, value) into a keyed container of the archive.
struct KeyedArchiveEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ValueEncoder
    /// The container's offset in the archive.
    let offset: Int
    var codingPath: [any CodingKey] { encoder.codingPath }
    private var state: EncodingState { encoder.state }

    init(encoder: ValueEncoder, offset: Int) {
        self.encoder = encoder
        self.offset = offset
    }

    /// Checks the container is still open, and writes the key.
    @inline(__always)
    private func begin(_ key: Key) throws {
        try state.beginEntry(in: offset, path: encoder.codingPath + [key])
        state.writer.appendKey(key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws {
        try begin(key)
        state.writer.append(.null)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try begin(key)
        state.writer.appendBool(value)
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        try begin(key)
        state.writer.appendText(.string, value)
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        try begin(key)
        state.writer.appendDouble(value)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        try begin(key)
        state.writer.appendFloat(value)
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        try begin(key)
        state.writer.appendInt(Int64(value))
    }

    mutating func encode(_ value: Int8, forKey key: Key) throws {
        try begin(key)
        state.writer.appendInt(Int64(value))
    }

    mutating func encode(_ value: Int16, forKey key: Key) throws {
        try begin(key)
        state.writer.appendInt(Int64(value))
    }

    mutating func encode(_ value: Int32, forKey key: Key) throws {
        try begin(key)
        state.writer.appendInt(Int64(value))
    }

    mutating func encode(_ value: Int64, forKey key: Key) throws {
        try begin(key)
        state.writer.appendInt(value)
    }

    mutating func encode(_ value: UInt, forKey key: Key) throws {
        try begin(key)
        state.writer.appendUInt(UInt64(value))
    }

    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        try begin(key)
        state.writer.appendUInt(UInt64(value))
    }

    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        try begin(key)
        state.writer.appendUInt(UInt64(value))
    }

    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        try begin(key)
        state.writer.appendUInt(UInt64(value))
    }

    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        try begin(key)
        state.writer.appendUInt(value)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try begin(key)
        try state.encodeValue(value, parent: encoder, key: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = nestedEncoder(for: key, tag: .keyed)
        return KeyedEncodingContainer(KeyedArchiveEncodingContainer<NestedKey>(encoder: nested, offset: nested.offset))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = nestedEncoder(for: key, tag: .unkeyed)
        return UnkeyedArchiveEncodingContainer(encoder: nested, offset: nested.offset)
    }

    mutating func superEncoder() -> any Encoder {
        pendingEncoder(key: SuperKey(), name: "super")
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        pendingEncoder(key: key, name: key.stringValue)
    }

    /// Writes the key and begins a container for it; misuse is recorded, since these calls cannot throw.
    private func nestedEncoder(for key: Key, tag: ArchiveTag) -> ValueEncoder {
        do { try begin(key) } catch { state.error = state.error ?? error }
        let nestedOffset = state.beginContainer(tag)
        return state.makeEncoder(at: nestedOffset, parent: encoder, key: key)
    }

    private func pendingEncoder(key: any CodingKey, name: String) -> ValueEncoder {
        do {
            try state.beginEntry(in: offset, path: encoder.codingPath + [key])
        } catch {
            state.error = state.error ?? error
        }
        state.writer.appendKey(name)
        return state.makeEncoder(at: state.beginPendingValue(), parent: encoder, key: key)
    }
}

/// Appends values to an unkeyed container of the archive.
struct UnkeyedArchiveEncodingContainer: UnkeyedEncodingContainer {
    let encoder: ValueEncoder
    let offset: Int
    var codingPath: [any CodingKey] { encoder.codingPath }
    private var state: EncodingState { encoder.state }

    var count: Int { state.count(ofContainerAt: offset) }

    init(encoder: ValueEncoder, offset: Int) {
        self.encoder = encoder
        self.offset = offset
    }

    @inline(__always)
    private func begin() throws {
        try state.beginEntry(in: offset, path: encoder.codingPath)
    }

    mutating func encodeNil() throws {
        try begin()
        state.writer.append(.null)
    }

    mutating func encode(_ value: Bool) throws {
        try begin()
        state.writer.appendBool(value)
    }

    mutating func encode(_ value: String) throws {
        try begin()
        state.writer.appendText(.string, value)
    }

    mutating func encode(_ value: Double) throws {
        try begin()
        state.writer.appendDouble(value)
    }

    mutating func encode(_ value: Float) throws {
        try begin()
        state.writer.appendFloat(value)
    }

    mutating func encode(_ value: Int) throws {
        try begin()
        state.writer.appendInt(Int64(value))
    }

    mutating func encode(_ value: Int8) throws {
        try begin()
        state.writer.appendInt(Int64(value))
    }

    mutating func encode(_ value: Int16) throws {
        try begin()
        state.writer.appendInt(Int64(value))
    }

    mutating func encode(_ value: Int32) throws {
        try begin()
        state.writer.appendInt(Int64(value))
    }

    mutating func encode(_ value: Int64) throws {
        try begin()
        state.writer.appendInt(value)
    }

    mutating func encode(_ value: UInt) throws {
        try begin()
        state.writer.appendUInt(UInt64(value))
    }

    mutating func encode(_ value: UInt8) throws {
        try begin()
        state.writer.appendUInt(UInt64(value))
    }

    mutating func encode(_ value: UInt16) throws {
        try begin()
        state.writer.appendUInt(UInt64(value))
    }

    mutating func encode(_ value: UInt32) throws {
        try begin()
        state.writer.appendUInt(UInt64(value))
    }

    mutating func encode(_ value: UInt64) throws {
        try begin()
        state.writer.appendUInt(value)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = count
        try begin()
        try state.encodeValue(value, parent: encoder, key: IndexKey(index))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = nestedEncoder(tag: .keyed)
        return KeyedEncodingContainer(KeyedArchiveEncodingContainer<NestedKey>(encoder: nested, offset: nested.offset))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = nestedEncoder(tag: .unkeyed)
        return UnkeyedArchiveEncodingContainer(encoder: nested, offset: nested.offset)
    }

    mutating func superEncoder() -> any Encoder {
        let index = count
        do { try begin() } catch { state.error = state.error ?? error }
        return state.makeEncoder(at: state.beginPendingValue(), parent: encoder, key: IndexKey(index))
    }

    private func nestedEncoder(tag: ArchiveTag) -> ValueEncoder {
        let index = count
        do { try begin() } catch { state.error = state.error ?? error }
        let nestedOffset = state.beginContainer(tag)
        return state.makeEncoder(at: nestedOffset, parent: encoder, key: IndexKey(index))
    }
}

/// Writes the one value of an encoder.
struct SingleValueArchiveEncodingContainer: SingleValueEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    private var state: EncodingState { encoder.state }

    init(encoder: ValueEncoder) {
        self.encoder = encoder
    }

    /// A single value is written once, where its encoder's value starts.
    @inline(__always)
    private func begin() throws {
        guard state.writer.count == encoder.offset else {
            throw EncodingError.invalidValue(
                (),
                .init(codingPath: codingPath, debugDescription: "a single value container was written twice")
            )
        }
    }

    mutating func encodeNil() throws {
        try begin()
        state.writer.append(.null)
    }

    mutating func encode(_ value: Bool) throws {
        try begin()
        state.writer.appendBool(value)
    }

    mutating func encode(_ value: String) throws {
        try begin()
        state.writer.appendText(.string, value)
    }

    mutating func encode(_ value: Double) throws {
        try begin()
        state.writer.appendDouble(value)
    }

    mutating func encode(_ value: Float) throws {
        try begin()
        state.writer.appendFloat(value)
    }

    mutating func encode(_ value: Int) throws {
        try begin()
        state.writer.appendInt(Int64(value))
    }

    mutating func encode(_ value: Int8) throws {
        try begin()
        state.writer.appendInt(Int64(value))
    }

    mutating func encode(_ value: Int16) throws {
        try begin()
        state.writer.appendInt(Int64(value))
    }

    mutating func encode(_ value: Int32) throws {
        try begin()
        state.writer.appendInt(Int64(value))
    }

    mutating func encode(_ value: Int64) throws {
        try begin()
        state.writer.appendInt(value)
    }

    mutating func encode(_ value: UInt) throws {
        try begin()
        state.writer.appendUInt(UInt64(value))
    }

    mutating func encode(_ value: UInt8) throws {
        try begin()
        state.writer.appendUInt(UInt64(value))
    }

    mutating func encode(_ value: UInt16) throws {
        try begin()
        state.writer.appendUInt(UInt64(value))
    }

    mutating func encode(_ value: UInt32) throws {
        try begin()
        state.writer.appendUInt(UInt64(value))
    }

    mutating func encode(_ value: UInt64) throws {
        try begin()
        state.writer.appendUInt(value)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try begin()
        try state.encodeValue(value, parent: encoder, key: nil)
    }
}
