import Foundation

/// One record of a CSV file: its fields' bytes end to end, where each field ends, and the line
/// the record starts on (1-based, as an editor counts them), for error messages.
struct CSVRecord {
    var bytes: [UInt8] = []
    var ends: [Int] = []
    var line = 0

    var count: Int { ends.count }

    /// The bytes of field `index` (quotes removed, doubled quotes undone).
    func field(_ index: Int) -> ArraySlice<UInt8> {
        bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]]
    }

    mutating func reset(line: Int) {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        self.line = line
    }
}

/// A streaming RFC 4180 reader: reads its input a chunk at a time, so a file of any size is never
/// in memory at once, and hands out one record at a time, reusing the record's storage.
///
/// Accepted: fields separated by commas; records ended by CRLF, LF or a lone CR; quoted fields
/// holding commas, doubled quotes and line breaks (kept as they are); a UTF-8 byte order mark at
/// the start; blank lines (skipped); no line break after the last record. Refused with
/// `.invalidCSV` naming the line: a quote left open at the end of the input, a quote inside an
/// unquoted field, and text after a closing quote. Fields stay bytes: `CSVImport` checks UTF-8
/// where it makes text.
final class CSVReader {
    /// Where the CSV text comes from.
    enum Input {
        case file(URL)
        case data(Data)
    }

    private enum Source {
        case file(FileHandle)
        case data(Data)
    }

    /// The size of one read: large enough that reading costs little beside parsing, small enough
    /// that memory stays flat.
    static let chunkSize = 1 << 20

    private let input: Source
    private let source: String
    private var buffer: [UInt8] = []
    private var position = 0
    private var dataOffset = 0
    private var line = 1
    private var atStart = true

    /// A reader of `input`.
    /// - Throws: `.io` when a file cannot be opened.
    convenience init(_ input: Input) throws {
        switch input {
        case .file(let url): try self.init(contentsOf: url)
        case .data(let data): self.init(data: data)
        }
    }

    /// A reader of the file at `url`.
    /// - Throws: `.io` when the file cannot be opened.
    init(contentsOf url: URL) throws {
        do {
            input = .file(try FileHandle(forReadingFrom: url))
        } catch {
            throw StorageError(
                .io,
                "cannot open the CSV file '\(url.path)'",
                path: url.path,
                underlying: SendableErrorDescription(error)
            )
        }
        source = url.path
    }

    /// A reader of CSV text in memory.
    init(data: Data) {
        input = .data(data)
        source = "the CSV data"
    }

    deinit {
        if case .file(let handle) = input { try? handle.close() }
    }

    /// Fills the buffer with the next chunk; false at the end of the input.
    private func refill() throws -> Bool {
        position = 0
        switch input {
        case .data(let data):
            let start = data.startIndex + dataOffset
            let end = min(start + Self.chunkSize, data.endIndex)
            buffer = Array(data[start..<end])
            dataOffset += end - start
        case .file(let handle):
            do {
                buffer = Array(try handle.read(upToCount: Self.chunkSize) ?? Data())
            } catch {
                throw StorageError(
                    .io,
                    "reading '\(source)' failed at line \(line)",
                    path: source,
                    underlying: SendableErrorDescription(error)
                )
            }
        }
        if atStart {
            atStart = false
            if buffer.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        }
        return position < buffer.count
    }

    private func error(_ message: String, line: Int) -> StorageError {
        StorageError(.invalidCSV, "line \(line) of \(source): \(message)", path: source)
    }

    private enum State {
        case fieldStart, unquoted, quoted, quoteInQuoted
    }

    /// Reads the next record into `record`.
    /// - Returns: false at the end of the input.
    /// - Throws: `.invalidCSV` naming the line for malformed input, `.io` when reading fails.
    func next(into record: inout CSVRecord) throws -> Bool {
        record.reset(line: line)
        var state = State.fieldStart
        var quoteLine = line
        while true {
            if position == buffer.count, try !refill() {
                switch state {
                case .fieldStart:
                    if record.ends.isEmpty { return false }
                    record.ends.append(record.bytes.count)
                case .unquoted, .quoteInQuoted:
                    record.ends.append(record.bytes.count)
                case .quoted:
                    throw error("a quoted field is not closed before the end of the input", line: quoteLine)
                }
                return true
            }
            let byte = buffer[position]
            position += 1
            switch state {
            case .fieldStart, .unquoted:
                switch byte {
                case 0x2C:  // ,
                    record.ends.append(record.bytes.count)
                    state = .fieldStart
                case 0x0A, 0x0D:  // LF, CR
                    line += 1
                    if byte == 0x0D { try skipPendingLF() }
                    if state == .fieldStart && record.ends.isEmpty {
                        // A blank line: no record.
                        record.line = line
                        continue
                    }
                    record.ends.append(record.bytes.count)
                    return true
                case 0x22:  // "
                    guard state == .fieldStart else {
                        throw error("a quote inside an unquoted field (quote the whole field)", line: line)
                    }
                    state = .quoted
                    quoteLine = line
                default:
                    record.bytes.append(byte)
                    state = .unquoted
                }
            case .quoted:
                if byte == 0x22 {
                    state = .quoteInQuoted
                } else {
                    // A line break in the field: CR, LF, or the LF of a CRLF (counted at its CR).
                    if byte == 0x0D
                        || (byte == 0x0A
                            && !(record.bytes.count > (record.ends.last ?? 0) && record.bytes.last == 0x0D))
                    {
                        line += 1
                    }
                    record.bytes.append(byte)
                }
            case .quoteInQuoted:
                switch byte {
                case 0x22:
                    record.bytes.append(byte)
                    state = .quoted
                case 0x2C:
                    record.ends.append(record.bytes.count)
                    state = .fieldStart
                case 0x0A, 0x0D:
                    line += 1
                    record.ends.append(record.bytes.count)
                    if byte == 0x0D { try skipPendingLF() }
                    return true
                default:
                    throw error("text after the closing quote of a field", line: line)
                }
            }
        }
    }

    /// Consumes the LF of a CRLF that ended a record, reading the next chunk if it is there.
    private func skipPendingLF() throws {
        if position == buffer.count, try !refill() { return }
        if buffer[position] == 0x0A { position += 1 }
    }
}
