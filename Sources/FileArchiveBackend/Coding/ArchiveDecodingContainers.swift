import Foundation

/// Reads the entries of a keyed container by key.
struct KeyedArchiveDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ValueDecoder
    private let entries: [ArchiveReader.Entry]
    var codingPath: [any CodingKey] { decoder.codingPath }
    private var state: DecodingState { decoder.state }

    init(decoder: ValueDecoder) throws {
        self.decoder = decoder
        entries = try decoder.state.reader.keyedEntries(at: decoder.offset)
    }

    var allKeys: [Key] {
        entries.compactMap { entry in
            (try? state.reader.string(in: entry.key, at: entry.key.lowerBound)).flatMap { Key(stringValue: $0) }
        }
    }

    /// The offset of the value stored under `key`, if any.
    private func find(_ key: Key) -> Int? {
        find(named: key.stringValue)
    }

    private func find(named name: String) -> Int? {
        var name = name
        return name.withUTF8 { utf8 -> Int? in
            let count = entries.count
            guard count > 0 else { return nil }
            // Types decode their keys in the order they encoded them, so starting after the last
            // hit makes most look-ups succeed on the first comparison.
            let hint = decoder.keyHint
            var index = hint < count ? hint : 0
            for _ in 0..<count {
                if state.reader.key(at: entries[index].key, equals: utf8) {
                    decoder.keyHint = index + 1
                    return entries[index].value
                }
                index = index + 1 == count ? 0 : index + 1
            }
            return nil
        }
    }

    private func require(_ key: Key) throws -> Int {
        guard let offset = find(key) else {
            throw DecodingError.keyNotFound(
                key,
                .init(codingPath: codingPath, debugDescription: "no value for key '\(key.stringValue)'")
            )
        }
        return offset
    }

    func contains(_ key: Key) -> Bool {
        find(key) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        try state.isNull(at: require(key))
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try state.bool(at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try state.string(at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try state.double(at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try state.float(at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try state.integer(type, at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try state.integer(type, at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try state.integer(type, at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try state.integer(type, at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try state.integer(type, at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try state.integer(type, at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try state.integer(type, at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try state.integer(type, at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try state.integer(type, at: require(key), path: { codingPath + [key] })
    }

    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try state.integer(type, at: require(key), path: { codingPath + [key] })
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try state.decodeValue(type, at: require(key), parent: decoder, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try nestedDecoder(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try nestedDecoder(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        try nestedDecoder(named: SuperKey()) { find(named: "super") }
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try nestedDecoder(for: key)
    }

    private func nestedDecoder(for key: Key) throws -> ValueDecoder {
        try nestedDecoder(named: key) { try require(key) }
    }

    private func nestedDecoder(named key: any CodingKey, _ offset: () throws -> Int?) throws -> ValueDecoder {
        guard let offset = try offset() else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no value"))
        }
        guard decoder.depth < ArchiveLayout.maximumDepth else {
            throw state.reader.corrupt("values are nested deeper than \(ArchiveLayout.maximumDepth) levels", at: offset)
        }
        return ValueDecoder(state: state, offset: offset, depth: decoder.depth + 1, parent: decoder, key: key)
    }
}

/// Reads the elements of an unkeyed container in order.
struct UnkeyedArchiveDecodingContainer: UnkeyedDecodingContainer {
    let decoder: ValueDecoder
    private let elements: [Int]
    private(set) var currentIndex = 0
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }
    private var state: DecodingState { decoder.state }

    init(decoder: ValueDecoder) throws {
        self.decoder = decoder
        elements = try decoder.state.reader.unkeyedElements(at: decoder.offset)
    }

    /// The offset of the next element; advances only once the element was decoded.
    private func next(_ type: Any.Type) throws -> Int {
        guard currentIndex < elements.count else {
            throw DecodingError.valueNotFound(
                type,
                .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "no more elements")
            )
        }
        return elements[currentIndex]
    }

    private var path: [any CodingKey] { codingPath + [IndexKey(currentIndex)] }

    mutating func decodeNil() throws -> Bool {
        guard try state.isNull(at: next(Any?.self)) else { return false }
        currentIndex += 1
        return true
    }

    private mutating func advance<T>(_ value: T) -> T {
        currentIndex += 1
        return value
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        advance(try state.bool(at: next(type), path: { path }))
    }

    mutating func decode(_ type: String.Type) throws -> String {
        advance(try state.string(at: next(type), path: { path }))
    }

    mutating func decode(_ type: Double.Type) throws -> Double {
        advance(try state.double(at: next(type), path: { path }))
    }

    mutating func decode(_ type: Float.Type) throws -> Float {
        advance(try state.float(at: next(type), path: { path }))
    }

    mutating func decode(_ type: Int.Type) throws -> Int {
        advance(try state.integer(type, at: next(type), path: { path }))
    }

    mutating func decode(_ type: Int8.Type) throws -> Int8 {
        advance(try state.integer(type, at: next(type), path: { path }))
    }

    mutating func decode(_ type: Int16.Type) throws -> Int16 {
        advance(try state.integer(type, at: next(type), path: { path }))
    }

    mutating func decode(_ type: Int32.Type) throws -> Int32 {
        advance(try state.integer(type, at: next(type), path: { path }))
    }

    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        advance(try state.integer(type, at: next(type), path: { path }))
    }

    mutating func decode(_ type: UInt.Type) throws -> UInt {
        advance(try state.integer(type, at: next(type), path: { path }))
    }

    mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
        advance(try state.integer(type, at: next(type), path: { path }))
    }

    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        advance(try state.integer(type, at: next(type), path: { path }))
    }

    mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
        advance(try state.integer(type, at: next(type), path: { path }))
    }

    mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
        advance(try state.integer(type, at: next(type), path: { path }))
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        advance(try state.decodeValue(type, at: next(type), parent: decoder, key: IndexKey(currentIndex)))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        advance(try nestedDecoder().container(keyedBy: type))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        advance(try nestedDecoder().unkeyedContainer())
    }

    mutating func superDecoder() throws -> any Decoder {
        advance(try nestedDecoder())
    }

    private func nestedDecoder() throws -> ValueDecoder {
        let offset = try next(Any.self)
        guard decoder.depth < ArchiveLayout.maximumDepth else {
            throw state.reader.corrupt("values are nested deeper than \(ArchiveLayout.maximumDepth) levels", at: offset)
        }
        return ValueDecoder(
            state: state,
            offset: offset,
            depth: decoder.depth + 1,
            parent: decoder,
            key: IndexKey(currentIndex)
        )
    }
}

/// Reads the one value of a decoder.
struct SingleValueArchiveDecodingContainer: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    private var state: DecodingState { decoder.state }
    private var offset: Int { decoder.offset }

    init(decoder: ValueDecoder) {
        self.decoder = decoder
    }

    func decodeNil() -> Bool {
        (try? state.isNull(at: offset)) ?? false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try state.bool(at: offset, path: { codingPath }) }
    func decode(_ type: String.Type) throws -> String { try state.string(at: offset, path: { codingPath }) }
    func decode(_ type: Double.Type) throws -> Double { try state.double(at: offset, path: { codingPath }) }
    func decode(_ type: Float.Type) throws -> Float { try state.float(at: offset, path: { codingPath }) }
    func decode(_ type: Int.Type) throws -> Int { try state.integer(type, at: offset, path: { codingPath }) }
    func decode(_ type: Int8.Type) throws -> Int8 { try state.integer(type, at: offset, path: { codingPath }) }
    func decode(_ type: Int16.Type) throws -> Int16 { try state.integer(type, at: offset, path: { codingPath }) }
    func decode(_ type: Int32.Type) throws -> Int32 { try state.integer(type, at: offset, path: { codingPath }) }
    func decode(_ type: Int64.Type) throws -> Int64 { try state.integer(type, at: offset, path: { codingPath }) }
    func decode(_ type: UInt.Type) throws -> UInt { try state.integer(type, at: offset, path: { codingPath }) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try state.integer(type, at: offset, path: { codingPath }) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try state.integer(type, at: offset, path: { codingPath }) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try state.integer(type, at: offset, path: { codingPath }) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try state.integer(type, at: offset, path: { codingPath }) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // The same position, one level deeper: a wrapper type decoding its wrapped value.
        guard decoder.depth < ArchiveLayout.maximumDepth else {
            throw state.reader.corrupt("values are nested deeper than \(ArchiveLayout.maximumDepth) levels", at: offset)
        }
        return try state.decodeValue(type, at: offset, parent: decoder, key: nil)
    }
}
