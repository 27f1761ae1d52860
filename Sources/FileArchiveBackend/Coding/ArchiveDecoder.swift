public import Foundation
import Storage

/// Decodes values from the keyed binary archives `ArchiveEncoder` writes.
///
/// Keys are looked up by name, so an archive written by another version of a type still
/// decodes: keys the type no longer has are ignored, and keys it has gained decode as `nil`
/// through `decodeIfPresent` (which synthesized `Codable` uses for optionals).
///
/// ```swift
/// let profile = try ArchiveDecoder().decode(Profile.self, from: bytes)
/// ```
public struct ArchiveDecoder: Sendable {
    /// Creates a decoder.
    public init() {}

    /// Decodes a value of `type` from `data`.
    /// - Parameters:
    ///   - type: the type to decode.
    ///   - data: an archive written by `ArchiveEncoder`.
    /// - Returns: the value.
    /// - Throws: `StorageError` with code `.corrupt` when `data` is not an intact archive;
    ///   `DecodingError` when it does not hold a `type`.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(type, from: [UInt8](data), path: nil)
    }

    func decode<T: Decodable>(
        _ type: T.Type,
        from bytes: [UInt8],
        path: String?,
        kind: ArchiveKind = .document,
        verifyingChecksum: Bool = true
    ) throws -> T {
        let reader = try ArchiveReader(bytes: bytes, path: path, kind: kind, verifyingChecksum: verifyingChecksum)
        return try DecodingState(reader: reader).decodeValue(type, at: reader.rootOffset, parent: nil, key: nil)
    }
}

/// The archive being read, shared by every decoder and container of one `decode` call.
final class DecodingState {
    let reader: ArchiveReader

    init(reader: ArchiveReader) {
        self.reader = reader
    }

    func decodeValue<T: Decodable>(
        _ type: T.Type,
        at offset: Int,
        parent: ValueDecoder?,
        key: (any CodingKey)?
    )
        throws -> T
    {
        if T.self == String.self { return try string(at: offset, path: { path(parent, key) }) as! T }
        if T.self == Int.self { return try integer(Int.self, at: offset, path: { path(parent, key) }) as! T }
        if T.self == Double.self { return try double(at: offset, path: { path(parent, key) }) as! T }
        if T.self == Bool.self { return try bool(at: offset, path: { path(parent, key) }) as! T }
        // Every type `EncodingState.encodeValue` writes as a primitive is read as one, taking no
        // level of depth: the two sides count levels alike, so what was written is read.
        if T.self == Int64.self { return try integer(Int64.self, at: offset, path: { path(parent, key) }) as! T }
        if T.self == Float.self { return try float(at: offset, path: { path(parent, key) }) as! T }
        if T.self == Date.self {
            // Archives written before `referenceDate` hold seconds since 1970.
            let tag = try reader.tag(at: offset)
            guard tag == .referenceDate || tag == .date else {
                throw mismatch(Date.self, found: tag, path: path(parent, key))
            }
            let seconds = Double(bitPattern: try reader.fixed(UInt64.self, at: offset + 1))
            return (tag == .date ? Date(timeIntervalSince1970: seconds) : Date(timeIntervalSinceReferenceDate: seconds))
                as! T
        }
        if T.self == Data.self {
            try expect(.data, at: offset, Data.self, path: { path(parent, key) })
            return Data(reader.bytes[try reader.run(at: offset + 1)]) as! T
        }
        if T.self == URL.self {
            try expect(.url, at: offset, URL.self, path: { path(parent, key) })
            let text = try reader.string(in: try reader.run(at: offset + 1), at: offset)
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(parent, key), debugDescription: "invalid URL"))
            }
            return url as! T
        }
        if T.self == UUID.self {
            try expect(.uuid, at: offset, UUID.self, path: { path(parent, key) })
            guard offset + 17 <= reader.end else { throw reader.corrupt("a UUID is cut short", at: offset) }
            var uuid = UUID().uuid
            withUnsafeMutableBytes(of: &uuid) { raw in
                for index in 0..<16 { raw[index] = reader.bytes[offset + 1 + index] }
            }
            return UUID(uuid: uuid) as! T
        }
        if T.self == Decimal.self {
            try expect(.decimal, at: offset, Decimal.self, path: { path(parent, key) })
            let text = try reader.string(in: try reader.run(at: offset + 1), at: offset)
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: path(parent, key), debugDescription: "invalid decimal '\(text)'")
                )
            }
            return decimal as! T
        }
        let depth = (parent?.depth ?? 0) + 1
        guard depth <= ArchiveLayout.maximumDepth else {
            throw reader.corrupt("values are nested deeper than \(ArchiveLayout.maximumDepth) levels", at: offset)
        }
        return try T(from: ValueDecoder(state: self, offset: offset, depth: depth, parent: parent, key: key))
    }

    func path(_ parent: ValueDecoder?, _ key: (any CodingKey)?) -> [any CodingKey] {
        (parent?.codingPath ?? []) + (key.map { [$0] } ?? [])
    }

    func mismatch(_ type: Any.Type, found tag: ArchiveTag, path: [any CodingKey]) -> DecodingError {
        if tag == .null {
            return DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "found null"))
        }
        return DecodingError.typeMismatch(
            type,
            .init(codingPath: path, debugDescription: "found a value of tag \(tag)")
        )
    }

    @inline(__always)
    func expect(_ expected: ArchiveTag, at offset: Int, _ type: Any.Type, path: () -> [any CodingKey]) throws {
        let tag = try reader.tag(at: offset)
        guard tag == expected else { throw mismatch(type, found: tag, path: path()) }
    }

    func isNull(at offset: Int) throws -> Bool {
        try reader.tag(at: offset) == .null
    }

    func bool(at offset: Int, path: () -> [any CodingKey]) throws -> Bool {
        switch try reader.tag(at: offset) {
        case .true: return true
        case .false: return false
        case let tag: throw mismatch(Bool.self, found: tag, path: path())
        }
    }

    func string(at offset: Int, path: () -> [any CodingKey]) throws -> String {
        try expect(.string, at: offset, String.self, path: path)
        return try reader.string(in: try reader.run(at: offset + 1), at: offset)
    }

    @inline(__always)
    func integer<T: FixedWidthInteger>(_ type: T.Type, at offset: Int, path: () -> [any CodingKey]) throws -> T {
        let tag = try reader.tag(at: offset)
        let result: T?
        switch tag {
        case .int: result = T(exactly: try reader.fixed(Int64.self, at: offset + 1))
        case .uint: result = T(exactly: try reader.fixed(UInt64.self, at: offset + 1))
        default: throw mismatch(type, found: tag, path: path())
        }
        guard let result else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: path(), debugDescription: "the stored number does not fit \(T.self)")
            )
        }
        return result
    }

    func double(at offset: Int, path: () -> [any CodingKey]) throws -> Double {
        switch try reader.tag(at: offset) {
        case .double: return Double(bitPattern: try reader.fixed(UInt64.self, at: offset + 1))
        case .float: return Double(Float(bitPattern: try reader.fixed(UInt32.self, at: offset + 1)))
        case .int: return Double(try reader.fixed(Int64.self, at: offset + 1))
        case .uint: return Double(try reader.fixed(UInt64.self, at: offset + 1))
        case let tag: throw mismatch(Double.self, found: tag, path: path())
        }
    }

    func float(at offset: Int, path: () -> [any CodingKey]) throws -> Float {
        switch try reader.tag(at: offset) {
        case .float: return Float(bitPattern: try reader.fixed(UInt32.self, at: offset + 1))
        default: return Float(try double(at: offset, path: path))
        }
    }
}

/// The `Decoder` of one value of the archive.
final class ValueDecoder: Decoder {
    let state: DecodingState
    let offset: Int
    /// How many containers deep the value is; bounded by `ArchiveLayout.maximumDepth`.
    let depth: Int
    private let parent: ValueDecoder?
    private let key: (any CodingKey)?
    /// Where the keyed container's next look-up starts (see `KeyedArchiveDecodingContainer`).
    @exclusivity(unchecked) var keyHint = 0
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(state: DecodingState, offset: Int, depth: Int, parent: ValueDecoder?, key: (any CodingKey)?) {
        self.state = state
        self.offset = offset
        self.depth = depth
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] {
        var path: [any CodingKey] = []
        var decoder: ValueDecoder? = self
        while let current = decoder {
            if let key = current.key { path.append(key) }
            decoder = current.parent
        }
        return path.reversed()
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try state.expect(.keyed, at: offset, [String: Any].self, path: { codingPath })
        return KeyedDecodingContainer(try KeyedArchiveDecodingContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try state.expect(.unkeyed, at: offset, [Any].self, path: { codingPath })
        return try UnkeyedArchiveDecodingContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueArchiveDecodingContainer(decoder: self)
    }
}
