import Foundation

extension StorageValue {
    /// This value converted the way SQLite converts a value stored into a column of `type`
    /// (its "type affinity"): numeric text becomes a number in integer and real columns,
    /// integral reals become integers in integer columns, integers become reals in real columns,
    /// numbers become text in text columns. Every backend stores values after this conversion, so
    /// all of them hold and compare exactly what SQLite would.
    /// - Parameter type: the column's declared type.
    /// - Returns: the value as the column holds it; `self` when no conversion applies.
    public func applyingAffinity(_ type: ColumnType) -> StorageValue {
        switch (type, self) {
        case (.integer, .real(let value)):
            return Self.exactInteger(value).map(StorageValue.integer) ?? self
        case (.integer, .text(let text)):
            guard let number = Self.parseNumber(text) else { return self }
            return number.applyingAffinity(.integer)
        case (.real, .integer(let value)):
            return .real(Double(value))
        case (.real, .text(let text)):
            guard let number = Self.parseNumber(text) else { return self }
            return number.applyingAffinity(.real)
        case (.text, .integer(let value)):
            return .text(String(value))
        case (.text, .real(let value)):
            return .text(Self.sqliteText(value))
        default:
            return self
        }
    }

    /// The Int64 equal to `value`, when there is one.
    package static func exactInteger(_ value: Double) -> Int64? {
        guard value.isFinite, value.rounded(.towardZero) == value,
            value >= -9_223_372_036_854_775_808.0, value < 9_223_372_036_854_775_808.0
        else { return nil }
        return Int64(value)
    }

    /// Parses decimal numeric text as SQLite does: an optional sign, digits, an optional fraction
    /// and exponent, surrounded by optional spaces. Hex and words like `inf` are not numbers.
    package static func parseNumber(_ text: String) -> StorageValue? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 64 else { return nil }
        var sawDigit = false
        var isInteger = true
        for (offset, byte) in trimmed.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                sawDigit = true
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                if offset != 0 { isInteger = false }
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                isInteger = false
            default:
                return nil
            }
        }
        guard sawDigit else { return nil }
        if isInteger, let value = Int64(trimmed) { return .integer(value) }
        guard let value = Double(trimmed), value.isFinite else { return nil }
        return .real(value)
    }

    /// A real as SQLite prints it (`%!.15g`): 15 significant digits, and always a decimal point.
    package static func sqliteText(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Inf" : "Inf" }
        var text = String(format: "%.15g", value)
        if !text.contains(".") && !text.contains("e") {
            text += ".0"
        } else if let e = text.firstIndex(of: "e"), !text[..<e].contains(".") {
            text.insert(contentsOf: ".0", at: e)
        }
        return text
    }
}
