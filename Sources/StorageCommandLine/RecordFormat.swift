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

/// An input file that cannot be read as records: exit status 1, nothing written.
struct InputError: Error, CustomStringConvertible {
    var message: String
    /// The code `--json` reports: `io` for a file that cannot be read or written, `invalidInput`
    /// for one whose content is wrong.
    var code: String

    init(_ message: String, code: String = "invalidInput") {
        self.message = message
        self.code = code
    }

    var description: String { message }
}
