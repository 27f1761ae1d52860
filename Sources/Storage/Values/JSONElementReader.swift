import Foundation

/// The elements of a JSON array, or the lines of NDJSON, read a chunk at a time from a file or
/// from memory: each element's text is handed out whole, to be parsed by `JSONSerialization`,
/// so that an input of any size is never held in memory at once.
///
/// Only the array's own punctuation is read here (the brackets, the commas between elements,
/// white space, and enough of each element — strings, escapes, nesting — to find where it
/// ends); whether an element is valid JSON is `JSONSerialization`'s call. An input the reader
/// accepts whole is one `JSONSerialization` accepts, with the same elements (a comma after the
/// last element included, which Foundation's parser takes). UTF-8 only (a byte
/// order mark is skipped); `insert(jsonArray:)` reads UTF-16 and UTF-32 text in memory.
final class JSONElementReader {
    /// How the input holds its records.
    enum Layout {
        /// One JSON array of objects.
        case array
        /// One JSON value per line (NDJSON); blank lines are skipped.
        case lines
    }

    /// One element: its text, its position in the input (from 0), the byte offset and line (from
    /// 1) where it starts.
    struct Element {
        var text: Data
        var index: Int
        var offset: Int
        var line: Int
    }

    private let handle: FileHandle?
    private let layout: Layout
    private let collection: String
    private var buffer: [UInt8]
    private var position = 0
    /// The input's offset of `buffer[0]`.
    private var bufferStart = 0
    private var atEnd: Bool
    private var line = 1
    private var index = 0
    /// For an array: whether the opening bracket was read, and the closing one.
    private var opened = false
    private var closed = false
    private static let chunk = 1 << 20
    /// The deepest nesting `JSONSerialization` reads, the outermost array included.
    private static let deepest = 512

    /// A reader of the file at `url`.
    /// - Throws: ``StorageError`` with `.io` when the file cannot be opened.
    init(contentsOf url: URL, layout: Layout, collection: String) throws {
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw StorageError(
                .io,
                "cannot open the JSON file '\(url.path)'",
                collection: collection,
                path: url.path,
                underlying: SendableErrorDescription(error)
            )
        }
        self.layout = layout
        self.collection = collection
        buffer = []
        atEnd = false
    }

    /// A reader of JSON text in memory.
    init(data: Data, layout: Layout, collection: String) {
        handle = nil
        self.layout = layout
        self.collection = collection
        buffer = [UInt8](data)
        atEnd = true
    }

    deinit {
        try? handle?.close()
    }

    /// Whether the input's first bytes say it is UTF-16 or UTF-32 (a NUL among the first four
    /// bytes, or a UTF-16 byte order mark), which this reader does not read.
    static func isWide(_ prefix: some Collection<UInt8>) -> Bool {
        let head = Array(prefix.prefix(4))
        if head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0xFF, 0xFE]) { return true }
        return head.contains(0)
    }

    /// The input's first bytes (up to four), to tell its encoding.
    func prefix() throws -> [UInt8] {
        while buffer.count - position < 4, try fill() {}
        return Array(buffer[position..<min(buffer.count, position + 4)])
    }

    /// The next element, or nil after the last.
    /// - Throws: ``StorageError`` with `.invalidJSON` naming the element or line and the byte
    ///   offset where the input stops being a JSON array (or NDJSON); `.io` for a read error.
    func next() throws -> Element? {
        switch layout {
        case .array: return try nextInArray()
        case .lines: return try nextLine()
        }
    }

    // MARK: Bytes

    /// Reads more of the file into the buffer, dropping what was consumed; false at its end.
    private func fill() throws -> Bool {
        guard !atEnd, let handle else { return false }
        if position > 0 {
            buffer.removeFirst(position)
            bufferStart += position
            position = 0
        }
        let data: Data?
        do {
            data = try handle.read(upToCount: Self.chunk)
        } catch {
            throw StorageError(
                .io,
                "cannot read the JSON input at byte \(bufferStart + buffer.count)",
                collection: collection,
                underlying: SendableErrorDescription(error)
            )
        }
        guard let data, !data.isEmpty else {
            atEnd = true
            return false
        }
        buffer.append(contentsOf: data)
        return true
    }

    private func peek() throws -> UInt8? {
        if position == buffer.count, try !fill() { return nil }
        return buffer[position]
    }

    private var offset: Int { bufferStart + position }

    private func skipSpace() throws {
        while let byte = try peek() {
            switch byte {
            case 0x20, 0x09, 0x0D: position += 1
            case 0x0A:
                position += 1
                line += 1
            default: return
            }
        }
    }

    private func malformed(_ what: String, at byte: Int? = nil) -> StorageError {
        StorageError(
            .invalidJSON,
            "the JSON input for collection '\(collection)' is not valid JSON: \(what) at byte \(byte ?? offset)"
                + " (line \(line))",
            collection: collection
        )
    }

    // MARK: Arrays

    private func nextInArray() throws -> Element? {
        if closed { return nil }
        if !opened {
            if bufferStart == 0 && position == 0 {
                while buffer.count < 3, try fill() {}
                if buffer.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
            }
            try skipSpace()
            guard try peek() == UInt8(ascii: "[") else {
                throw malformed(try peek() == nil ? "no value" : "expected '['")
            }
            position += 1
            opened = true
            try skipSpace()
            if try peek() == UInt8(ascii: "]") {
                position += 1
                try finish()
                return nil
            }
        }
        let element = try scanElement()
        try skipSpace()
        switch try peek() {
        case UInt8(ascii: ","):
            position += 1
            try skipSpace()
            // `JSONSerialization` takes a comma after the last element (`[1,]`): so does this.
            if try peek() == UInt8(ascii: "]") {
                position += 1
                try finish()
            }
        case UInt8(ascii: "]"):
            position += 1
            try finish()
        case nil:
            throw malformed("the array is not closed")
        default:
            throw malformed("expected ',' or ']' after element \(element.index)")
        }
        return element
    }

    /// After the closing bracket: white space only.
    private func finish() throws {
        closed = true
        try skipSpace()
        if try peek() != nil { throw malformed("text after the array") }
    }

    /// One element's text, up to (not including) the comma, bracket or space that ends it.
    private func scanElement() throws -> Element {
        let start = offset
        let startLine = line
        var text: [UInt8] = []
        var depth = 0
        var inString = false
        var escaped = false
        scan: while true {
            guard let byte = try peek() else {
                throw malformed(inString ? "a string is not closed" : "the array is not closed")
            }
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                } else if byte == 0x0A {
                    line += 1
                }
            } else {
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    // JSONSerialization refuses text nested deeper than 512 levels, the array's
                    // own included: so is an element here, which it would accept alone.
                    if depth >= Self.deepest { throw malformed("values nested deeper than \(Self.deepest) levels") }
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { break scan }
                    depth -= 1
                case UInt8(ascii: ","), 0x20, 0x09, 0x0D, 0x0A:
                    if depth == 0 { break scan }
                    if byte == 0x0A { line += 1 }
                default: break
                }
            }
            text.append(byte)
            position += 1
        }
        guard !text.isEmpty else { throw malformed("expected a value", at: start) }
        defer { index += 1 }
        return Element(text: Data(text), index: index, offset: start, line: startLine)
    }

    // MARK: Lines

    private func nextLine() throws -> Element? {
        while true {
            if bufferStart == 0 && position == 0 {
                while buffer.count < 3, try fill() {}
                if buffer.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
            }
            guard try peek() != nil else { return nil }
            let start = offset
            let startLine = line
            // The line's end found in the buffer a chunk at a time (not a byte at a time), and
            // its bytes copied once.
            var end = buffer[position...].firstIndex(of: 0x0A)
            while end == nil {
                let scanned = buffer.count - position
                guard try fill() else { break }
                end = buffer[(position + scanned)...].firstIndex(of: 0x0A)
            }
            let stop = end ?? buffer.count
            let text = buffer[position..<stop]
            position = end.map { $0 + 1 } ?? stop
            line += 1
            if text.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            defer { index += 1 }
            return Element(text: Data(text), index: index, offset: start, line: startLine)
        }
    }
}
