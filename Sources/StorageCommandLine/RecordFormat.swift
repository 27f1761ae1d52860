import Foundation
import Storage

/// The formats records are exported in and imported from.
package enum RecordFormat: String, CaseIterable {
    /// One JSON array of objects.
    case json
    /// One JSON object per line.
    case ndjson
    /// A header line of column names, then one line per record (RFC 4180 quoting).
    case csv

    /// The format of an input file: named by its extension, or else told by its first
    /// character (`[` an array, `{` NDJSON, anything else CSV).
    static func detect(path: String, data: Data) -> RecordFormat {
        let lowered = path.lowercased()
        if lowered.hasSuffix(".ndjson") || lowered.hasSuffix(".jsonl") { return .ndjson }
        if lowered.hasSuffix(".csv") { return .csv }
        let first = data.first { !Character(UnicodeScalar($0)).isWhitespace }
        if first == UInt8(ascii: "[") { return .json }
        if first == UInt8(ascii: "{") { return .ndjson }
        return .csv
    }
}

/// Writes records, one at a time, in a `RecordFormat`: JSON numbers for integers and finite
/// reals, strings for text, base64 strings for blobs, `null` (empty in CSV) for nulls, and the
/// strings `"NaN"`, `"Infinity"`, `"-Infinity"` for the reals JSON cannot hold.
struct RecordWriter {
    let format: RecordFormat
    let columns: [String]
    private var count = 0

    init(format: RecordFormat, columns: [String]) {
        self.format = format
        self.columns = columns
    }

    /// What comes before the first record.
    func header() -> String {
        switch format {
        case .json: return "["
        case .ndjson: return ""
        case .csv: return columns.map(Self.csvField).joined(separator: ",") + "\r\n"
        }
    }

    /// One record, with what separates it from the previous one.
    mutating func record(_ values: [String: StorageValue]) -> String {
        defer { count += 1 }
        switch format {
        case .json:
            return (count == 0 ? "\n" : ",\n") + object(values)
        case .ndjson:
            return object(values) + "\n"
        case .csv:
            return columns.map { Self.csvField(for: values[$0] ?? .null) }.joined(separator: ",") + "\r\n"
        }
    }

    /// What comes after the last record.
    func footer() -> String {
        format == .json ? (count == 0 ? "]\n" : "\n]\n") : ""
    }

    private func object(_ values: [String: StorageValue]) -> String {
        "{" + columns.map { Self.jsonString($0) + ":" + Self.json(values[$0] ?? .null) }.joined(separator: ",") + "}"
    }

    static func json(_ value: StorageValue) -> String {
        switch value {
        case .null: return "null"
        case .integer(let number): return String(number)
        case .real(let number):
            if number.isNaN { return "\"NaN\"" }
            if number.isInfinite { return number > 0 ? "\"Infinity\"" : "\"-Infinity\"" }
            let text = "\(number)"
            return text.contains(where: { $0 == "." || $0 == "e" }) ? text : text + ".0"
        case .text(let text): return jsonString(text)
        case .blob(let data): return jsonString(data.base64EncodedString())
        }
    }

    static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case let control where control.value < 0x20:
                result += String(format: "\\u%04x", control.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    static func csvField(for value: StorageValue) -> String {
        switch value {
        case .null: return ""
        case .integer(let number): return String(number)
        case .real(let number):
            if number.isNaN { return "NaN" }
            if number.isInfinite { return number > 0 ? "Infinity" : "-Infinity" }
            return "\(number)"
        case .text(let text): return csvField(text)
        case .blob(let data): return data.base64EncodedString()
        }
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) || text.isEmpty else {
            return text
        }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// Reads records from NDJSON and CSV input, as dictionaries for `insert(dictionaries:into:)`.
enum RecordReader {
    /// The objects of an NDJSON input, one per non-empty line.
    /// - Throws: `StorageError` with `.invalidJSON` naming the line.
    static func ndjson(_ data: Data) throws -> [[String: Any]] {
        var rows: [[String: Any]] = []
        var lineNumber = 0
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) { continue }
            let object: Any
            do {
                object = try JSONSerialization.jsonObject(with: Data(line), options: [])
            } catch {
                throw StorageError(.invalidJSON, "line \(lineNumber) is not valid JSON")
            }
            guard let row = object as? [String: Any] else {
                throw StorageError(.invalidJSON, "line \(lineNumber) is not a JSON object")
            }
            rows.append(row)
        }
        return rows
    }

    /// The records of a CSV input: the first line names the columns; an empty field is null, a
    /// field that reads as an integer or a real (unquoted) is that number, anything else text.
    /// - Throws: `InputError` naming the line of a malformed quote or of too many fields.
    static func csv(_ data: Data) throws -> [[String: Any]] {
        guard let text = String(data: data, encoding: .utf8) else {
            throw InputError("the CSV input is not UTF-8")
        }
        let lines = try csvLines(text)
        guard let header = lines.first else { return [] }
        let names = header.map(\.text)
        var rows: [[String: Any]] = []
        for (index, fields) in lines.dropFirst().enumerated() {
            if fields.count == 1 && fields[0].text.isEmpty && !fields[0].quoted { continue }
            guard fields.count <= names.count else {
                throw InputError(
                    "CSV line \(index + 2) has \(fields.count) fields, the header \(names.count)"
                )
            }
            var row: [String: Any] = [:]
            for (name, field) in zip(names, fields) {
                row[name] = value(field)
            }
            rows.append(row)
        }
        return rows
    }

    private static func value(_ field: (text: String, quoted: Bool)) -> Any {
        if field.quoted { return field.text }
        if field.text.isEmpty { return NSNull() }
        if let integer = Int64(field.text) { return NSNumber(value: integer) }
        if let real = Double(field.text), field.text.contains(where: { "0123456789".contains($0) }) {
            return NSNumber(value: real)
        }
        return field.text
    }

    /// The fields of each line, with whether each was quoted.
    private static func csvLines(_ text: String) throws -> [[(text: String, quoted: Bool)]] {
        var lines: [[(text: String, quoted: Bool)]] = []
        var fields: [(text: String, quoted: Bool)] = []
        var field = ""
        var quoted = false
        var inQuotes = false
        var lineNumber = 1
        var iterator = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = nil
        func next() -> Unicode.Scalar? {
            if let scalar = pending {
                pending = nil
                return scalar
            }
            return iterator.next()
        }
        while let scalar = next() {
            if inQuotes {
                if scalar == "\"" {
                    if let following = next() {
                        if following == "\"" {
                            field.unicodeScalars.append("\"")
                        } else {
                            inQuotes = false
                            pending = following
                        }
                    } else {
                        inQuotes = false
                    }
                } else {
                    if scalar == "\n" { lineNumber += 1 }
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"":
                guard field.isEmpty && !quoted else {
                    throw InputError("CSV line \(lineNumber): a quote inside an unquoted field")
                }
                inQuotes = true
                quoted = true
            case ",":
                fields.append((field, quoted))
                field = ""
                quoted = false
            case "\r":
                continue
            case "\n":
                fields.append((field, quoted))
                lines.append(fields)
                fields = []
                field = ""
                quoted = false
                lineNumber += 1
            default:
                if quoted {
                    throw InputError("CSV line \(lineNumber): text after a closing quote")
                }
                field.unicodeScalars.append(scalar)
            }
        }
        if inQuotes { throw InputError("CSV line \(lineNumber): a quote is never closed") }
        if !field.isEmpty || quoted || !fields.isEmpty {
            fields.append((field, quoted))
            lines.append(fields)
        }
        return lines
    }
}

/// An input file that cannot be read as records: exit status 1, nothing written.
struct InputError: Error, CustomStringConvertible {
    var message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}
