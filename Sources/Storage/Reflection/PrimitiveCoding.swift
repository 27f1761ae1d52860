/// Conversions between stored values and Swift's plain types, shared by every coder: strict,
/// range-checked, and with errors that name the column.
enum PrimitiveCoding {
    // The coders take the column name as an autoclosure: it is only needed for an error, and a
    // keyed container would otherwise compute `key.stringValue` for every property.
    // Always inlined: the callers are generic over a CodingKey type, so a call would run this
    // unspecialized, converting through BinaryInteger's generic words-based path, many times
    // the work of a specialized conversion (docs/BENCHMARKS.md).
    @inline(__always)
    static func encode<T: BinaryInteger>(_ value: T, column: @autoclosure () -> String) throws -> StorageValue {
        guard let exact = Int64(exactly: value) else {
            let column = column()
            throw StorageError(
                .valueOutOfRange,
                "column \(Identifier.quoted(column)): \(value) does not fit a 64-bit signed integer",
                column: column
            )
        }
        return .integer(exact)
    }

    @inline(__always)
    static func decodeInteger<T: FixedWidthInteger>(
        _ value: StorageValue,
        column: @autoclosure () -> String
    ) throws -> T {
        switch value {
        case .integer(let number):
            guard let exact = T(exactly: number) else {
                throw StorageError(
                    .valueOutOfRange,
                    "column \(Identifier.quoted(column())): \(number) does not fit \(T.self)",
                    column: column()
                )
            }
            return exact
        case .real(let number):
            guard let integer = StorageValue.exactInteger(number), let exact = T(exactly: integer) else {
                throw ValueMapping.mismatch(column(), "real \(number) is not a whole number that fits \(T.self)")
            }
            return exact
        case .text(let text):
            // An integer column widened to text (a property that became a String) keeps its
            // old records' digits; the type that wrote them still reads them.
            guard let number = Int64(text) else { throw wrongKind(value, T.self, column()) }
            return try decodeInteger(.integer(number), column: column())
        default:
            throw wrongKind(value, T.self, column())
        }
    }

    static func decodeBool(_ value: StorageValue, column: @autoclosure () -> String) throws -> Bool {
        switch value {
        case .integer(0): return false
        case .integer(1): return true
        default: throw wrongKind(value, Bool.self, column())
        }
    }

    static func decodeDouble(_ value: StorageValue, column: @autoclosure () -> String) throws -> Double {
        switch value {
        case .real(let number): return number
        case .integer(let number): return Double(number)
        default: throw wrongKind(value, Double.self, column())
        }
    }

    /// A stored real as a Float, refused when the Float would not be the same number: a Double
    /// written by another type, or by the untyped path, must not be rounded on the way in.
    static func decodeFloat(_ value: StorageValue, column: @autoclosure () -> String) throws -> Float {
        let number = try decodeDouble(value, column: column())
        guard let exact = Float(exactly: number) else {
            throw StorageError(
                .valueOutOfRange,
                "column \(Identifier.quoted(column())): \(number) cannot be read as a Float without rounding",
                column: column()
            )
        }
        return exact
    }

    static func decodeString(_ value: StorageValue, column: @autoclosure () -> String) throws -> String {
        guard case .text(let text) = value else { throw wrongKind(value, String.self, column()) }
        return text
    }

    private static func wrongKind(_ value: StorageValue, _ type: Any.Type, _ column: String) -> StorageError {
        if value.isNull {
            return StorageError(
                .missingValue,
                "column \(Identifier.quoted(column)) is null, but a \(type) is required",
                column: column
            )
        }
        return ValueMapping.mismatch(column, "cannot read \(ValueMapping.kind(value)) as \(type)")
    }
}
