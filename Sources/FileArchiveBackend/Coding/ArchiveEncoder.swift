public import Foundation
import Storage

/// Encodes any `Encodable` value into the keyed binary archive format of docs/ARCHIVE_FORMAT.md:
/// property names stored as keys, typed values, nested containers, a checksum.
///
/// ```swift
/// let bytes = try ArchiveEncoder().encode(profile)
/// let again = try ArchiveDecoder().decode(Profile.self, from: bytes)
/// ```
public struct ArchiveEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// The archive of `value`.
    /// - Parameter value: the value to encode.
    /// - Returns: the archive's bytes.
    /// - Throws: `EncodingError` when the value cannot be encoded (a container used after a
    ///   later sibling was written, a value encoded twice); `StorageError` with code
    ///   `.limitExceeded` when the archive would pass a limit that `ArchiveDecoder` enforces:
    ///   values nested deeper than 64 levels, or an archive larger than 2 GiB
    ///   (docs/ARCHIVE_FORMAT.md, "Limits").
    public func encode(_ value: some Encodable) throws -> Data {
        Data(try encodeBytes(value, kind: .document))
    }

    /// Encodes `value` as an archive of the given kind.
    /// - Parameters:
    ///   - value: the value encoded.
    ///   - kind: what the archive holds (a document, a record, a schema).
    ///   - maximumSize: the largest archive written; smaller only in tests.
    ///   - maximumDepth: the deepest nesting written; other values only in tests.
    /// - Returns: the archive's bytes.
    /// - Throws: `StorageError` with code `.limitExceeded` past either limit, or the value's own
    ///   encoding error.
    func encodeBytes(
        _ value: some Encodable,
        kind: ArchiveKind,
        maximumSize: Int = ArchiveLayout.maximumSize,
        maximumDepth: Int = ArchiveLayout.maximumDepth
    ) throws -> [UInt8] {
        let state = EncodingState(kind: kind, maximumSize: maximumSize, maximumDepth: maximumDepth)
        try state.encodeValue(value, parent: nil, key: nil)
        state.close(downTo: 0)
        if let error = state.error { throw error }
        guard let bytes = state.writer.finish() else {
            throw StorageError(
                .limitExceeded,
                "the archive would be larger than \(maximumSize) bytes, the most an archive may be"
                    + " (a reader refuses it); nothing was written"
            )
        }
        return bytes
    }
}

/// The bytes being written and the containers still open, shared by every encoder and
/// container of one `encode` call.
final class EncodingState {
    // Unchecked: only the one encoding call's thread touches the state, and the dynamic
    // exclusivity checks of class properties cost more than the writes themselves.
    @exclusivity(unchecked) var writer: ArchiveWriter
    /// Open containers (with their entry count so far) and pending values, innermost last. A
    /// write to a container first closes whatever was opened after it.
    @exclusivity(unchecked) private var open: [(offset: Int, isContainer: Bool, count: UInt32)] = []
    /// The first misuse seen where the Encoder protocol gives no way to throw.
    var error: (any Error)?
    /// The deepest nesting written (`ArchiveLayout.maximumDepth`).
    let maximumDepth: Int
    /// Set when a value went deeper than `maximumDepth`: every later entry throws it, so that
    /// a recursive value stops at once, even one whose encoding goes through calls that cannot
    /// throw (`nestedContainer`).
    private var tooDeep: StorageError?

    init(kind: ArchiveKind, maximumSize: Int, maximumDepth: Int) {
        writer = ArchiveWriter(kind: kind, maximumSize: maximumSize)
        self.maximumDepth = maximumDepth
        open.reserveCapacity(8)
    }

    /// The encoder of a value one level below `parent` (the root's when `parent` is `nil`),
    /// starting at `offset`. Past `maximumDepth` the error is recorded, and thrown by
    /// `encodeValue` and every later entry.
    func makeEncoder(at offset: Int, parent: ValueEncoder?, key: (any CodingKey)?) -> ValueEncoder {
        let encoder = ValueEncoder(state: self, offset: offset, parent: parent, key: key)
        if encoder.depth > maximumDepth, tooDeep == nil {
            let location = encoder.codingPath.map(\.stringValue).joined(separator: ".")
            let refusal = StorageError(
                .limitExceeded,
                "values are nested deeper than \(maximumDepth) levels"
                    + (location.isEmpty ? "" : " at '\(location)'")
                    + ", the most an archive reader follows; nothing was written"
            )
            tooDeep = refusal
            error = error ?? refusal
        }
        return encoder
    }

    /// Starts an entry of the container at `offset`: closes containers opened after it, and
    /// counts the entry.
    @inline(__always)
    func beginEntry(in offset: Int, path: @autoclosure () -> [any CodingKey]) throws {
        if let tooDeep { throw tooDeep }
        var top = open.count - 1
        if top < 0 || open[top].offset != offset || !open[top].isContainer {
            while let last = open.last, !(last.offset == offset && last.isContainer), last.offset >= offset {
                closeLast()
            }
            top = open.count - 1
            guard top >= 0, open[top].offset == offset, open[top].isContainer else {
                throw EncodingError.invalidValue(
                    (),
                    .init(
                        codingPath: path(),
                        debugDescription: "a container was written to after the value it belongs to was finished"
                    )
                )
            }
        }
        if open[top].count == UInt32.max {
            throw EncodingError.invalidValue((), .init(codingPath: path(), debugDescription: "too many entries"))
        }
        open[top].count += 1
    }

    /// The number of entries of the container at `offset` so far.
    func count(ofContainerAt offset: Int) -> Int {
        for entry in open.reversed() where entry.offset == offset && entry.isContainer { return Int(entry.count) }
        return writer.count(ofContainerAt: offset)
    }

    private func closeLast() {
        let last = open.removeLast()
        if last.isContainer {
            writer.endContainer(at: last.offset, count: last.count)
        } else if writer.count == last.offset {
            // A value that encoded nothing: an empty keyed container, as JSON writes `{}`.
            writer.endContainer(at: writer.beginContainer(.keyed), count: 0)
        }
    }

    /// Closes every container and pending value at or after `offset`.
    func close(downTo offset: Int) {
        while let last = open.last, last.offset >= offset { closeLast() }
    }

    func beginContainer(_ tag: ArchiveTag) -> Int {
        let offset = writer.beginContainer(tag)
        open.append((offset, true, 0))
        return offset
    }

    /// Whether the container at `offset` is still open (a second request for the same container).
    func isOpenContainer(at offset: Int, tag: ArchiveTag) -> Bool {
        open.contains { $0.offset == offset && $0.isContainer } && writer.bytes[offset] == tag.rawValue
    }

    /// Leaves room for a value that an encoder will write later (`superEncoder()`).
    func beginPendingValue() -> Int {
        open.append((writer.count, false, 0))
        return writer.count
    }

    /// Writes `value` at the end: primitives directly, anything else through an `Encoder` one
    /// level deeper. `DecodingState.decodeValue` reads the same types as primitives.
    func encodeValue<T: Encodable>(_ value: T, parent: ValueEncoder?, key: (any CodingKey)?) throws {
        if T.self == String.self {
            writer.appendText(.string, value as! String)
        } else if T.self == Int.self {
            writer.appendInt(Int64(value as! Int))
        } else if T.self == Double.self {
            writer.appendDouble(value as! Double)
        } else if T.self == Bool.self {
            writer.appendBool(value as! Bool)
        } else if T.self == Int64.self {
            writer.appendInt(value as! Int64)
        } else if T.self == Date.self {
            writer.append(.referenceDate)
            writer.appendFixed((value as! Date).timeIntervalSinceReferenceDate.bitPattern)
        } else if T.self == Data.self {
            writer.appendData(value as! Data)
        } else if T.self == URL.self {
            writer.appendText(.url, (value as! URL).absoluteString)
        } else if T.self == UUID.self {
            writer.appendUUID(value as! UUID)
        } else if T.self == Decimal.self {
            writer.appendText(.decimal, (value as! Decimal).description)
        } else if T.self == Float.self {
            writer.appendFloat(value as! Float)
        } else {
            let offset = beginPendingValue()
            let encoder = makeEncoder(at: offset, parent: parent, key: key)
            if let tooDeep { throw tooDeep }
            try value.encode(to: encoder)
            close(downTo: offset)
        }
    }
}

/// The `Encoder` of one value of the archive.
final class ValueEncoder: Encoder {
    let state: EncodingState
    /// Where the value starts.
    let offset: Int
    /// How many levels deep the value is, counted as `ValueDecoder.depth` counts them.
    let depth: Int
    private let parent: ValueEncoder?
    private let key: (any CodingKey)?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Called by `EncodingState.makeEncoder`, which checks the depth.
    fileprivate init(state: EncodingState, offset: Int, parent: ValueEncoder?, key: (any CodingKey)?) {
        self.state = state
        self.offset = offset
        self.depth = (parent?.depth ?? 0) + 1
        self.parent = parent
        self.key = key
    }

    /// Built on demand: only errors need it.
    var codingPath: [any CodingKey] {
        var path: [any CodingKey] = []
        var encoder: ValueEncoder? = self
        while let current = encoder {
            if let key = current.key { path.append(key) }
            encoder = current.parent
        }
        return path.reversed()
    }

    /// The offset of this value's container of kind `tag`, beginning it if nothing was written yet.
    private func containerOffset(_ tag: ArchiveTag) -> Int {
        if state.writer.count == offset { return state.beginContainer(tag) }
        if state.isOpenContainer(at: offset, tag: tag) { return offset }
        if state.error == nil {
            state.error = EncodingError.invalidValue(
                (),
                .init(codingPath: codingPath, debugDescription: "a value asked for a second, different container")
            )
        }
        // Writes go to a fresh container that the error discards.
        return state.beginContainer(tag)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedArchiveEncodingContainer(encoder: self, offset: containerOffset(.keyed)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedArchiveEncodingContainer(encoder: self, offset: containerOffset(.unkeyed))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueArchiveEncodingContainer(encoder: self)
    }
}

/// A coding key for array positions in coding paths.
struct IndexKey: CodingKey {
    var stringValue: String { String(intValue!) }
    var intValue: Int?
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

/// The key `super`, for `superEncoder()` and `superDecoder()`.
struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}
