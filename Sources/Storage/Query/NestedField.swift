/// Reads a field inside a column's JSON text the way SQLite's `json_extract` does, so that the
/// backends that evaluate queries in Swift give the answers SQLite gives.
///
/// The rules, which every engine follows:
/// - the column's value must be text holding valid JSON (RFC 8259, nested at most
///   ``maximumJSONDepth`` deep, as SQLite's `json_valid`); anything else reads as null, the whole
///   document being checked, not only the part up to the field;
/// - each key of the path names a member of an object; a key an object lacks, a path through a
///   value that is not an object, and a JSON `null` read as null; of two members with the same key
///   the first is the one read (as SQLite reads them);
/// - a string reads as its text, a number as an integer when it is written without a fraction or
///   exponent and fits in 64 bits, else as a real; `true` and `false` read as the integers 1 and 0
///   (SQLite has no booleans); an object or an array reads as its JSON text without whitespace.
package enum NestedField {
    /// The deepest JSON a document may nest (objects and arrays within each other) and still be
    /// valid: SQLite's `JSON_MAX_DEPTH`.
    package static let maximumJSONDepth = 2_000

    /// The value at `path` inside `value`'s JSON text.
    /// - Parameters:
    ///   - value: the column's value.
    ///   - path: the keys from the outermost object inward; never empty.
    /// - Returns: the field's value, or `.null` (see the type's rules).
    package static func value(in value: StorageValue, at path: [String]) -> StorageValue {
        self.value(in: value, keys: keys(of: path))
    }

    /// The keys of `path` as UTF-8 bytes, the form `value(in:keys:)` compares: made once for a
    /// query, not once a record.
    package static func keys(of path: [String]) -> [[UInt8]] {
        path.map { Array($0.utf8) }
    }

    /// The value at the path whose keys (`keys(of:)`) are `keys` inside `value`'s JSON text.
    package static func value(in value: StorageValue, keys: [[UInt8]]) -> StorageValue {
        guard case .text(var text) = value else { return .null }
        return text.withUTF8 { bytes in
            var reader = Reader(bytes: bytes, path: keys)
            guard reader.readDocument(), let found = reader.found else { return .null }
            return reader.value(of: found)
        }
    }

    /// An iterative validating JSON reader that remembers where the field at its path is. A
    /// stack of open containers rather than recursion: a document may be 2,000 levels deep, and
    /// the evaluator may run on a thread with a small stack.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        let path: [[UInt8]]
        var index = 0
        /// The field at the path once read: where its text starts and ends, and what it is.
        var found: (start: Int, end: Int, kind: UInt8)?

        init(bytes: UnsafeBufferPointer<UInt8>, path: [[UInt8]]) {
            self.bytes = bytes
            self.path = path
        }

        /// One open object or array: whether it is an object, and whether it lies on the path
        /// (every key that led to it matched), so its members may be the field.
        private struct Open {
            let isObject: Bool
            let onPath: Bool
        }

        /// Reads the whole document; `false` when it is not valid JSON.
        mutating func readDocument() -> Bool {
            var stack: [Open] = []
            // Whether the value about to be read lies on the path, and whether it is the field.
            var nextOnPath = true
            var nextIsField = path.isEmpty
            // The depth of the stack while the field, an object or array, is open; else -1.
            var fieldDepth = -1
            skipSpace()
            while true {
                // A value starts here.
                guard index < bytes.count else { return false }
                let start = index
                let byte = bytes[index]
                if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    guard stack.count < NestedField.maximumJSONDepth else { return false }
                    index += 1
                    let isObject = byte == UInt8(ascii: "{")
                    stack.append(Open(isObject: isObject, onPath: nextOnPath && !nextIsField))
                    if nextIsField && found == nil {
                        fieldDepth = stack.count
                        found = (start, -1, byte)
                    }
                    skipSpace()
                    let closing = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                    if index < bytes.count && bytes[index] == closing {
                        index += 1
                        close(&stack, &fieldDepth)
                    } else {
                        guard beginMember(of: stack[stack.count - 1], depth: stack.count, &nextOnPath, &nextIsField)
                        else { return false }
                        continue
                    }
                } else {
                    guard readScalar() else { return false }
                    if nextIsField && found == nil { found = (start, index, byte) }
                }
                // After a value: a comma and the next member, or the end of containers.
                while true {
                    skipSpace()
                    guard let open = stack.last else {
                        return index == bytes.count
                    }
                    guard index < bytes.count else { return false }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        skipSpace()
                        guard beginMember(of: open, depth: stack.count, &nextOnPath, &nextIsField) else { return false }
                        break
                    }
                    guard bytes[index] == (open.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return false }
                    index += 1
                    close(&stack, &fieldDepth)
                }
            }
        }

        /// Closes the innermost container (`index` is past its closing bracket), and marks the
        /// end of the field when that container is the field.
        private mutating func close(_ stack: inout [Open], _ fieldDepth: inout Int) {
            if stack.count == fieldDepth, let field = found {
                found = (field.start, index, field.kind)
                fieldDepth = -1
            }
            stack.removeLast()
        }

        /// Reads the key and colon of an object's member (nothing for an array's element) and
        /// works out whether the member's value is on the path, or is the field.
        private mutating func beginMember(
            of open: Open,
            depth: Int,
            _ onPath: inout Bool,
            _ isField: inout Bool
        ) -> Bool {
            guard open.isObject else {
                // Paths name object members only: an array's elements are never on one.
                onPath = false
                isField = false
                return true
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
            let keyStart = index + 1
            guard readString() else { return false }
            let matches = open.onPath && depth <= path.count && keyEquals(keyStart, index - 1, path[depth - 1])
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
            index += 1
            skipSpace()
            onPath = matches
            isField = matches && depth == path.count
            return true
        }

        /// Whether the raw key text from `start` to `end` (quotes excluded) is `key`: byte for
        /// byte, as SQLite 3.40 compares a path's key with the key as written in the JSON.
        private func keyEquals(_ start: Int, _ end: Int, _ key: [UInt8]) -> Bool {
            guard end - start == key.count else { return false }
            for offset in 0..<key.count where bytes[start + offset] != key[offset] { return false }
            return true
        }

        private mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// Reads a string, number, `true`, `false` or `null`.
        private mutating func readScalar() -> Bool {
            switch bytes[index] {
            case UInt8(ascii: "\""): return readString()
            case UInt8(ascii: "t"): return readWord("true")
            case UInt8(ascii: "f"): return readWord("false")
            case UInt8(ascii: "n"): return readWord("null")
            default: return readNumber()
            }
        }

        private mutating func readWord(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        /// Reads a string from its opening quote to past its closing one.
        private mutating func readString() -> Bool {
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return true
                }
                if byte < 0x20 { return false }
                if byte == UInt8(ascii: "\\") {
                    index += 1
                    guard index < bytes.count else { return false }
                    switch bytes[index] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 1
                    case UInt8(ascii: "u"):
                        guard bytes.count - index > 4 else { return false }
                        for offset in 1...4 where Self.hexDigit(bytes[index + offset]) == nil { return false }
                        index += 5
                    default:
                        return false
                    }
                    continue
                }
                index += 1
            }
            return false
        }

        /// Reads a number as RFC 8259 writes one.
        private mutating func readNumber() -> Bool {
            func digits() -> Int {
                let start = index
                while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                    index += 1
                }
                return index - start
            }
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count else { return false }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else if digits() == 0 {
                return false
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { return false }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits() > 0 else { return false }
            }
            return true
        }

        private static func hexDigit(_ byte: UInt8) -> UInt32? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
            default: nil
            }
        }

        /// The value of the field found, by the type's rules.
        func value(of field: (start: Int, end: Int, kind: UInt8)) -> StorageValue {
            let text = UnsafeBufferPointer(rebasing: bytes[field.start..<field.end])
            switch field.kind {
            case UInt8(ascii: "n"): return .null
            case UInt8(ascii: "t"): return .integer(1)
            case UInt8(ascii: "f"): return .integer(0)
            case UInt8(ascii: "\""): return .text(Self.unescaped(text))
            case UInt8(ascii: "{"), UInt8(ascii: "["): return .text(Self.minified(text))
            default: return Self.number(text)
            }
        }

        /// A number's value: an integer when written without fraction or exponent and within
        /// 64 bits, else the nearest double (as SQLite's `json_extract` gives it).
        private static func number(_ text: UnsafeBufferPointer<UInt8>) -> StorageValue {
            let string = String(decoding: text, as: UTF8.self)
            let isInteger =
                !text.contains(UInt8(ascii: ".")) && !text.contains(UInt8(ascii: "e"))
                && !text.contains(UInt8(ascii: "E"))
            if isInteger, let integer = Int64(string) { return .integer(integer) }
            return .real(Double(string) ?? .nan)
        }

        /// A JSON string's text, its escapes read (a lone surrogate becomes U+FFFD).
        private static func unescaped(_ quoted: UnsafeBufferPointer<UInt8>) -> String {
            let inner = UnsafeBufferPointer(rebasing: quoted[1..<(quoted.count - 1)])
            guard inner.contains(UInt8(ascii: "\\")) else { return String(decoding: inner, as: UTF8.self) }
            var scalars = String.UnicodeScalarView()
            var utf8: [UInt8] = []
            var index = 0
            func flush() {
                scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
                utf8.removeAll(keepingCapacity: true)
            }
            func hex(at position: Int) -> UInt32 {
                (0..<4).reduce(0) { $0 << 4 | (hexDigit(inner[position + $1]) ?? 0) }
            }
            while index < inner.count {
                let byte = inner[index]
                guard byte == UInt8(ascii: "\\") else {
                    utf8.append(byte)
                    index += 1
                    continue
                }
                flush()
                let escape = inner[index + 1]
                index += 2
                switch escape {
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = hex(at: index)
                    index += 4
                    if (0xD800..<0xDC00).contains(code), index + 5 < inner.count,
                        inner[index] == UInt8(ascii: "\\"), inner[index + 1] == UInt8(ascii: "u")
                    {
                        let low = hex(at: index + 2)
                        if (0xDC00..<0xE000).contains(low) {
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                            index += 6
                        }
                    }
                    scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                default: scalars.append(Unicode.Scalar(escape))
                }
            }
            flush()
            return String(scalars)
        }

        /// An object's or array's text without the whitespace between its tokens.
        private static func minified(_ text: UnsafeBufferPointer<UInt8>) -> String {
            var out: [UInt8] = []
            out.reserveCapacity(text.count)
            var inString = false
            var escaped = false
            for byte in text {
                if inString {
                    out.append(byte)
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                    continue
                }
                switch byte {
                case 0x20, 0x09, 0x0A, 0x0D: continue
                case UInt8(ascii: "\""): inString = true
                default: break
                }
                out.append(byte)
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}
