import Foundation
import StorageTestSupport
import Testing

@testable import Storage

/// One record as read: the line it starts on and its fields as text.
private struct Read: Equatable, CustomStringConvertible {
    var line: Int
    var fields: [String]

    init(_ line: Int, _ fields: [String]) {
        self.line = line
        self.fields = fields
    }

    var description: String { "\(line): \(fields.map { String(reflecting: $0) }.joined(separator: ", "))" }
}

/// Every record of `input`, read through one reused `CSVRecord`.
private func records(_ input: CSVReader.Input) throws -> [Read] {
    let reader = try CSVReader(input)
    var record = CSVRecord()
    var result: [Read] = []
    while try reader.next(into: &record) {
        result.append(Read(record.line, (0..<record.count).map { String(decoding: record.field($0), as: UTF8.self) }))
    }
    return result
}

private func records(_ text: String) throws -> [Read] { try records(.data(Data(text.utf8))) }

/// The `.invalidCSV` error reading `text` throws.
private func failure(_ text: String) -> StorageError? {
    #expect(throws: StorageError.self) { try records(text) }
}

/// A file holding `data`, removed after `body`.
private func withFile<R>(_ data: Data, _ body: (URL) throws -> R) throws -> R {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("csv-\(UUID().uuidString).csv")
    try data.write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url)
}

/// On threads of their own: a few tests read tens of megabytes.
@Suite(.dedicatedThreads) struct CSVReaderTests {
    @Test func quotedFieldsHoldCommasAndDoubledQuotes() throws {
        #expect(
            try records(#"a,"b,c","say ""hi""",d"# + "\n" + #""""""# + "\n")
                == [Read(1, ["a", "b,c", #"say "hi""#, "d"]), Read(2, [#"""#])]
        )
    }

    /// Line breaks inside quotes are kept as they are and counted, so the next record's line is
    /// the editor's.
    @Test func quotedFieldsHoldLineBreaks() throws {
        let text = "\"one\ntwo\",x\n\"three\r\nfour\",y\r\nlast,z\n"
        #expect(
            try records(text) == [
                Read(1, ["one\ntwo", "x"]), Read(3, ["three\r\nfour", "y"]), Read(5, ["last", "z"]),
            ]
        )
    }

    @Test func recordsEndWithCRLFOrLFOrACarriageReturn() throws {
        let expected = [Read(1, ["a", "b"]), Read(2, ["c", "\"d\""]), Read(3, ["", "e"])]
        for ending in ["\n", "\r\n", "\r"] {
            let text = ["a,b", #"c,"""d""""#, ",e"].joined(separator: ending) + ending
            #expect(try records(text) == expected, "\(String(reflecting: ending))")
        }
        #expect(try records("a\r\nb\nc\rd") == [Read(1, ["a"]), Read(2, ["b"]), Read(3, ["c"]), Read(4, ["d"])])
    }

    /// A carriage return alone inside quotes is a line break, as it is between records.
    @Test func aCarriageReturnInQuotesIsCountedAsALine() throws {
        #expect(try records("a\r\"x\ry\"\rb\r") == [Read(1, ["a"]), Read(2, ["x\ry"]), Read(4, ["b"])])
        #expect(failure("a\r\"x\ry\"\r\"open\r")?.message.hasPrefix("line 4 ") == true)
    }

    @Test func blankLinesAreSkippedAndCounted() throws {
        #expect(try records("\n\na\n\r\n\nb\n\n") == [Read(3, ["a"]), Read(6, ["b"])])
        #expect(try records("\n\n").isEmpty)
        #expect(try records("").isEmpty)
    }

    @Test func emptyFieldsAreKept() throws {
        #expect(
            try records(",,\na,,b\n\"\",x\ny,\"\"\nz,") == [
                Read(1, ["", "", ""]), Read(2, ["a", "", "b"]), Read(3, ["", "x"]), Read(4, ["y", ""]),
                Read(5, ["z", ""]),
            ]
        )
        #expect(try records(",") == [Read(1, ["", ""])])
    }

    @Test func theLastRecordNeedsNoLineBreak() throws {
        #expect(try records("a,b\nc,d") == [Read(1, ["a", "b"]), Read(2, ["c", "d"])])
        #expect(try records("a,b\n\"c\nc\"") == [Read(1, ["a", "b"]), Read(2, ["c\nc"])])
        #expect(try records("x\r") == [Read(1, ["x"])])
    }

    @Test func aByteOrderMarkAtTheStartIsSkipped() throws {
        #expect(try records("\u{FEFF}id,name\n1,x") == [Read(1, ["id", "name"]), Read(2, ["1", "x"])])
        #expect(try records("\u{FEFF}") == [])
        #expect(try records("\u{FEFF}\"q\"") == [Read(1, ["q"])])
        // Anywhere else it is a field's text.
        #expect(try records("a\n\u{FEFF}b") == [Read(1, ["a"]), Read(2, ["\u{FEFF}b"])])
    }

    @Test func malformedInputNamesItsLine() throws {
        let unclosed = failure("a\nb\n\"c,d\ne\n\nf")
        #expect(unclosed?.code == .invalidCSV)
        #expect(unclosed?.message == "line 3 of the CSV data: a quoted field is not closed before the end of the input")
        let inside = failure("a\nb\"c\n")
        #expect(inside?.code == .invalidCSV)
        #expect(inside?.message.hasPrefix("line 2 of the CSV data: a quote inside an unquoted field") == true)
        let after = failure("a\n\"x\ny\"\n\"b\"c\n")
        #expect(after?.code == .invalidCSV)
        #expect(after?.message.hasPrefix("line 4 of the CSV data: text after the closing quote") == true)
    }

    /// A record placed so that each of its bytes in turn is the last of the reader's first
    /// chunk: a field, a doubled quote, a quoted line break and a CRLF split between two reads
    /// read as when whole.
    @Test func aRecordAcrossTheChunkBoundaryReadsAsWhole() throws {
        let record = "\"he said \"\"hi\"\"\",\"x\r\ny\",plain\r\nnext,\"q\"\r\n"
        let bytes = Array(record.utf8)
        let expected = [Read(2, ["he said \"hi\"", "x\r\ny", "plain"]), Read(4, ["next", "q"])]
        for last in 0..<bytes.count {
            // A first record of padding, so that byte `last` of the record ends the first chunk.
            let padding = CSVReader.chunkSize - 1 - last
            var data = Data(repeating: UInt8(ascii: "p"), count: padding - 1)
            data.append(UInt8(ascii: "\n"))
            data.append(contentsOf: bytes)
            let read = try records(.data(data))
            #expect(read.count == 3)
            #expect(read.first?.fields.first?.utf8.count == padding - 1)
            #expect(Array(read.dropFirst()) == expected, "split after byte \(last)")
            if last.isMultiple(of: 7) || bytes[last] == 0x0D || bytes[last] == 0x22 {
                #expect(try withFile(data) { try records(.file($0)) } == read, "from a file, split after byte \(last)")
            }
        }
    }

    /// A field longer than two chunks, with line breaks, spans three reads.
    @Test func aFieldLongerThanAChunk() throws {
        let long = String(repeating: "abc,\"\n", count: CSVReader.chunkSize / 2)
        let quoted = "\"" + long.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        let text = "id,text\r\n1," + quoted + "\r\n2,short"
        let lastLine = 2 + CSVReader.chunkSize / 2 + 1
        let expected = [Read(1, ["id", "text"]), Read(2, ["1", long]), Read(lastLine, ["2", "short"])]
        #expect(try records(text) == expected)
        #expect(try withFile(Data(text.utf8)) { try records(.file($0)) } == expected)
        let open = try withFile(Data(("x\n" + quoted.dropLast()).utf8)) { url in
            #expect(throws: StorageError.self) { try records(.file(url)) }
        }
        #expect(open?.message.hasPrefix("line 2 of \(FileManager.default.temporaryDirectory.path)") == true)
    }

    @Test func aMissingFileIsAnIOError() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString).csv")
        let error = #expect(throws: StorageError.self) { _ = try CSVReader(.file(url)) }
        #expect(error?.code == .io)
        #expect(error?.path == url.path)
    }
}
