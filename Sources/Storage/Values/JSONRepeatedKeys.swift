package import Foundation

/// Finds an object that holds one key twice in JSON text, which `JSONSerialization` accepts and
/// answers with one of the two values, silently: a key repeated byte for byte, or spelt twice in
/// different Unicode normalizations (`café` with `é`, and with `e` and a combining accent, which
/// Swift's dictionaries take for one key).
///
/// It reads text `JSONSerialization` has already accepted, so it only follows strings, objects
/// and arrays; walked with a stack of its own, without recursion.
package enum JSONRepeatedKeys {
    /// A key an object holds twice.
    package struct Repeat: Equatable, Sendable {
        /// The element of the top-level array the object is in (the object itself or one nested
        /// in it), or nil when the text is not an array.
        package let element: Int?
        /// The key as first spelt in the object.
        package let first: String
        /// The key as spelt the second time.
        package let second: String
    }

    /// The first key some object of `data` holds twice, or nil.
    /// - Parameter data: JSON text that `JSONSerialization` accepted (UTF-8, or UTF-16 or UTF-32
    ///   as it detects them).
    /// - Returns: where the first repeated key is and its two spellings, or nil.
    package static func first(in data: Data) -> Repeat? {
        if let converted = utf8(fromWide: data) { return first(in: Data(converted.utf8)) }
        return data.withUnsafeBytes { first(in: $0.bindMemory(to: UInt8.self)) }
    }

    /// An open array or object: an object's keys so far, and whether a key comes next.
    private struct Frame {
        var isObject: Bool
        var keys: [String: String] = [:]
        var expectsKey = false
    }

    private static func first(in bytes: UnsafeBufferPointer<UInt8>) -> Repeat? {
        var frames: [Frame] = []
        var spare: [[String: String]] = []
        var element: Int?
        var index = 0
        // A UTF-8 byte order mark, which `JSONSerialization` skips.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if frames.isEmpty && byte == UInt8(ascii: "[") { element = 0 }
                var frame = Frame(isObject: byte == UInt8(ascii: "{"))
                if frame.isObject {
                    frame.keys = spare.popLast() ?? [:]
                    frame.expectsKey = true
                }
                frames.append(frame)
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if var frame = frames.popLast(), frame.isObject {
                    frame.keys.removeAll(keepingCapacity: true)
                    spare.append(frame.keys)
                }
                index += 1
            case UInt8(ascii: ","):
                if frames.count == 1, let current = element, !frames[0].isObject { element = current + 1 }
                if !frames.isEmpty, frames[frames.count - 1].isObject { frames[frames.count - 1].expectsKey = true }
                index += 1
            case UInt8(ascii: "\""):
                let (end, hasEscape) = stringEnd(bytes, from: index + 1)
                if let last = frames.indices.last, frames[last].isObject, frames[last].expectsKey {
                    frames[last].expectsKey = false
                    let raw = UnsafeBufferPointer(rebasing: bytes[(index + 1)..<end])
                    let key = hasEscape ? unescaped(raw) : String(decoding: raw, as: UTF8.self)
                    if let earlier = frames[last].keys.updateValue(key, forKey: key) {
                        return Repeat(element: element, first: earlier, second: key)
                    }
                }
                index = end + 1
            default:
                index += 1
            }
        }
        return nil
    }

    /// The index of the quote that ends the string whose text starts at `start`, and whether the
    /// string holds a backslash escape.
    private static func stringEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (Int, Bool) {
        var index = start
        var hasEscape = false
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""): return (index, hasEscape)
            case UInt8(ascii: "\\"):
                hasEscape = true
                index += 2
            default: index += 1
            }
        }
        return (bytes.count, hasEscape)
    }

    /// The text of a JSON string's body with its escapes (`\n`, `\u00e9`, surrogate pairs) read.
    private static func unescaped(_ raw: UnsafeBufferPointer<UInt8>) -> String {
        var scalars = String.UnicodeScalarView()
        var pendingHigh: UInt32?
        var utf8: [UInt8] = []
        func flushUTF8() {
            if !utf8.isEmpty {
                scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
                utf8.removeAll(keepingCapacity: true)
            }
        }
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < raw.count else {
                utf8.append(byte)
                index += 1
                continue
            }
            flushUTF8()
            let escape = raw[index + 1]
            index += 2
            var unit: UInt32?
            switch escape {
            case UInt8(ascii: "n"): unit = 0x0A
            case UInt8(ascii: "t"): unit = 0x09
            case UInt8(ascii: "r"): unit = 0x0D
            case UInt8(ascii: "b"): unit = 0x08
            case UInt8(ascii: "f"): unit = 0x0C
            case UInt8(ascii: "u") where index + 4 <= raw.count:
                let hex = String(decoding: UnsafeBufferPointer(rebasing: raw[index..<(index + 4)]), as: UTF8.self)
                unit = UInt32(hex, radix: 16)
                index += 4
            default: unit = UInt32(escape)  // `\"`, `\\`, `\/`
            }
            guard let unit else { continue }
            if let high = pendingHigh {
                pendingHigh = nil
                if (0xDC00...0xDFFF).contains(unit),
                    let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))
                {
                    scalars.append(scalar)
                    continue
                }
                scalars.append("\u{FFFD}")
            }
            if (0xD800...0xDBFF).contains(unit) {
                pendingHigh = unit
            } else {
                scalars.append(Unicode.Scalar(unit) ?? "\u{FFFD}")
            }
        }
        if pendingHigh != nil { scalars.append("\u{FFFD}") }
        flushUTF8()
        return String(scalars)
    }

    /// The text of UTF-16 or UTF-32 JSON (told by its byte order mark or the zero bytes of its
    /// first characters, as RFC 4627 and `JSONSerialization` tell them), or nil for UTF-8.
    private static func utf8(fromWide data: Data) -> String? {
        guard data.count >= 2 else { return nil }
        let b = Array(data.prefix(4)) + [1, 1, 1, 1]
        let encoding: String.Encoding
        switch (b[0], b[1], b[2], b[3]) {
        case (0, 0, 0xFE, 0xFF), (0, 0, 0, _): encoding = .utf32BigEndian
        case (0xFF, 0xFE, 0, 0), (_, 0, 0, 0): encoding = .utf32LittleEndian
        case (0xFE, 0xFF, _, _), (0, _, _, _): encoding = .utf16BigEndian
        case (0xFF, 0xFE, _, _), (_, 0, _, _): encoding = .utf16LittleEndian
        default: return nil
        }
        var body = data
        if [0xFE, 0xFF].contains(b[0]) || (b[0] == 0 && b[1] == 0 && b[2] == 0xFE) {
            body = data.dropFirst(encoding == .utf32BigEndian || encoding == .utf32LittleEndian ? 4 : 2)
        }
        return String(data: body, encoding: encoding)
    }
}
