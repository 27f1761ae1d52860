import Foundation
import StorageTestSupport
import Testing

@testable import Storage

/// The elements of `text` as the reader hands them out (from memory, or from a file when `file`
/// is given), each parsed by `JSONSerialization`; nil when the reader or a parse refuses.
private func streamed(_ text: Data, layout: JSONElementReader.Layout = .array, file: URL? = nil) -> [Any]? {
    do {
        let reader: JSONElementReader
        if let file {
            try text.write(to: file)
            reader = try JSONElementReader(contentsOf: file, layout: layout, collection: "c")
        } else {
            reader = JSONElementReader(data: text, layout: layout, collection: "c")
        }
        var elements: [Any] = []
        while let element = try reader.next() {
            elements.append(try JSONSerialization.jsonObject(with: element.text, options: [.fragmentsAllowed]))
        }
        return elements
    } catch {
        return nil
    }
}

/// `value` as canonical JSON text, to compare what two parses made.
private func canonical(_ value: Any) -> String {
    let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .fragmentsAllowed])
    return data.map { String(decoding: $0, as: UTF8.self) } ?? "?"
}

@Suite("JSONElementReader")
struct JSONElementReaderTests {
    /// A random JSON value, nested at most `depth` levels, with the white space JSON allows.
    private func randomValue(_ random: inout SeededGenerator, depth: Int) -> String {
        let spaces = ["", " ", "\n", "\t", "\r\n", "  "]
        func space() -> String { spaces.randomElement(using: &random)! }
        switch Int.random(in: 0..<(depth > 0 ? 9 : 6), using: &random) {
        case 0: return String(Int.random(in: -1_000...1_000, using: &random))
        case 1: return ["1.5", "-0.0", "2e10", "1E-3", "123456789012345678901234"].randomElement(using: &random)!
        case 2: return ["true", "false", "null"].randomElement(using: &random)!
        case 3, 4, 5:
            let pieces = ["a", "\\\"", "\\\\", "\\n", "\\u00e9", "é", "😀", ",", "]", "[", "{", "}", ":", " ", "\\/"]
            return "\""
                + (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined() + "\""
        case 6:
            let items = (0..<Int.random(in: 0...3, using: &random)).map { _ in
                space() + randomValue(&random, depth: depth - 1) + space()
            }
            return "[" + items.joined(separator: ",") + "]"
        default:
            let members = (0..<Int.random(in: 0...3, using: &random)).map { index in
                space() + "\"k\(index)\"" + space() + ":" + space() + randomValue(&random, depth: depth - 1) + space()
            }
            return "{" + members.joined(separator: ",") + "}"
        }
    }

    /// On random arrays and on each after a random byte was deleted, inserted or replaced, the
    /// reader accepts exactly the texts `JSONSerialization` reads as an array, with the same
    /// elements: it is a splitter in front of the same parser, never a second grammar.
    @Test func acceptsWhatJSONSerializationReadsAsAnArrayWithTheSameElements() throws {
        var random = SeededGenerator(seed: 8_259)
        let punctuation: [UInt8] = Array("[]{},:\" \n\\0a-.e".utf8)
        var accepted = 0
        var refused = 0
        for round in 0..<3_000 {
            let items = (0..<Int.random(in: 0...5, using: &random)).map { _ in randomValue(&random, depth: 3) }
            var bytes = Array((" [" + items.joined(separator: " ,\n") + "] \n").utf8)
            if round % 3 != 0 {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes.remove(at: position)
                case 1: bytes.insert(punctuation.randomElement(using: &random)!, at: position)
                default: bytes[position] = punctuation.randomElement(using: &random)!
                }
            }
            let text = Data(bytes)
            let whole = (try? JSONSerialization.jsonObject(with: text, options: [.fragmentsAllowed])) as? [Any]
            let stream = streamed(text)
            #expect((whole == nil) == (stream == nil), "\(String(decoding: text, as: UTF8.self))")
            if let whole, let stream {
                #expect(canonical(whole) == canonical(stream), "\(String(decoding: text, as: UTF8.self))")
                accepted += 1
            } else {
                refused += 1
            }
        }
        // Both kinds were tried in numbers.
        #expect(accepted > 1_000 && refused > 300, "\(accepted) accepted, \(refused) refused")
    }

    /// Nesting: 511 levels inside the array are read, 512 are refused, as `JSONSerialization`
    /// does for the whole text.
    @Test func nestingIsBoundAsJSONSerializationBoundsIt() {
        for depth in [510, 511, 512] {
            let text = Data(
                ("[" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "]").utf8
            )
            let whole = try? JSONSerialization.jsonObject(with: text)
            #expect((whole == nil) == (streamed(text) == nil), "depth \(depth)")
        }
    }

    /// From a file, elements that cross the reader's 1 MiB chunks (a long string, an escape split
    /// at the boundary) come out whole, and each names its line and byte offset.
    @Test func elementsAcrossChunksFromAFileAndTheirPlaces() throws {
        try TemporaryDirectory.with { directory in
            let file = directory.appendingPathComponent("big.json")
            let long = String(repeating: "x", count: (1 << 20) - 9) + "\\\"" + String(repeating: "y", count: 1 << 20)
            let text = "[\n{\"a\": \"\(long)\"},\n  {\"b\": [1, {\"c\": null}]}\n]"
            try Data(text.utf8).write(to: file)
            let reader = try JSONElementReader(contentsOf: file, layout: .array, collection: "c")
            let first = try #require(try reader.next())
            let second = try #require(try reader.next())
            #expect(try reader.next() == nil)
            #expect(
                (try JSONSerialization.jsonObject(with: first.text) as? [String: String])?["a"]?.count == (2 << 20) - 8
            )
            #expect((first.index, first.line, first.offset) == (0, 2, 2))
            #expect((second.index, second.line) == (1, 3))
            #expect(second.offset == text.utf8.count - "{\"b\": [1, {\"c\": null}]}\n]".utf8.count)
            #expect(streamed(Data(text.utf8), file: file).map(canonical) == streamed(Data(text.utf8)).map(canonical))
        }
    }

    /// From a file, NDJSON lines that cross the reader's 1 MiB chunks (one longer than a chunk,
    /// a blank line at a boundary, a last line without a newline) come out whole and placed.
    @Test func linesAcrossChunksFromAFile() throws {
        try TemporaryDirectory.with { directory in
            let file = directory.appendingPathComponent("big.ndjson")
            let long = "{\"a\": \"" + String(repeating: "x", count: (3 << 19)) + "\"}"
            let short = "{\"b\": 1}"
            let pad = "{\"c\": \"" + String(repeating: "y", count: (1 << 20) - long.utf8.count % (1 << 20) - 12) + "\"}"
            let text = long + "\n" + pad + "\n \r\n" + short + "\n" + short
            try Data(text.utf8).write(to: file)
            let reader = try JSONElementReader(contentsOf: file, layout: .lines, collection: "c")
            var elements: [JSONElementReader.Element] = []
            while let element = try reader.next() { elements.append(element) }
            #expect(elements.map { String(decoding: $0.text, as: UTF8.self) } == [long, pad, short, short])
            #expect(elements.map(\.line) == [1, 2, 4, 5])
            #expect(
                elements.map(\.offset) == [
                    0, long.utf8.count + 1, text.utf8.count - 2 * short.utf8.count - 1,
                    text.utf8.count - short.utf8.count,
                ]
            )
        }
    }

    /// NDJSON: one value per line, blank lines (spaces, CR) skipped, each line's number and
    /// offset kept; a byte order mark is skipped.
    @Test func linesAreSplitAndNamed() throws {
        let text = Data([0xEF, 0xBB, 0xBF]) + Data("{\"a\":1}\r\n\n   \n{\"a\":2}\n{\"a\":3}".utf8)
        let reader = JSONElementReader(data: text, layout: .lines, collection: "c")
        var places: [(Int, Int, Int)] = []
        while let element = try reader.next() {
            #expect((try JSONSerialization.jsonObject(with: element.text) as? [String: Int])?["a"] == places.count + 1)
            places.append((element.index, element.line, element.offset))
        }
        #expect(places.map(\.0) == [0, 1, 2])
        #expect(places.map(\.1) == [1, 4, 5])
        #expect(places.map(\.2) == [3, 17, 25])
    }

    /// What stops an array is named with its byte offset and line.
    @Test func malformedArraysNameWhereTheyStop() {
        let cases: [(String, String)] = [
            ("", "no value at byte 0"),
            ("{\"a\": 1}", "expected '[' at byte 0"),
            ("[1,\n2", "the array is not closed at byte 5 (line 2)"),
            ("[1,,]", "expected a value at byte 3"),
            ("[,1]", "expected a value at byte 1"),
            ("[1 2]", "expected ',' or ']' after element 0 at byte 3"),
            ("[1] [2]", "text after the array at byte 4"),
            ("[\"abc", "a string is not closed at byte 5"),
        ]
        for (text, expected) in cases {
            let reader = JSONElementReader(data: Data(text.utf8), layout: .array, collection: "c")
            do {
                while try reader.next() != nil {}
                Issue.record("\(text) was read")
            } catch let error as StorageError {
                #expect(error.code == .invalidJSON)
                #expect(
                    error.message.hasSuffix(expected) || error.message.contains(expected + " "),
                    "\(text): \(error.message)"
                )
            } catch {
                Issue.record("\(error)")
            }
        }
    }
}
