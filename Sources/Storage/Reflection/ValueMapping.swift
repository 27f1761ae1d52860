import Foundation

/// The mapping between Swift values and stored values for everything that is not a plain number,
/// Bool or String: Date, Data, UUID, URL, Decimal, ``ColumnCodable`` types, enums with raw values,
/// and nested Codable values (stored as JSON text).
enum ValueMapping {
    /// The column type that values of `type` are stored as, found from the static type alone
    /// (used when a value is nil and so cannot be encoded to find out).
    static func columnType(for type: Any.Type) -> ColumnType {
        if let codable = type as? any ColumnCodable.Type { return codable.columnType }
        if let optional = type as? any OptionalProtocol.Type { return columnType(for: optional.wrappedType) }
        switch type {
        case is Int.Type, is Int8.Type, is Int16.Type, is Int32.Type, is Int64.Type,
            is UInt.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type, is UInt64.Type, is Bool.Type:
            return .integer
        case is Double.Type, is Float.Type, is Date.Type:
            return .real
        case is String.Type, is UUID.Type, is URL.Type, is Decimal.Type:
            return .text
        case is Data.Type:
            return .blob
        default:
            break
        }
        if let raw = type as? any RawRepresentable.Type { return columnType(for: rawValueType(raw)) }
        return .text
    }

    private static func rawValueType<R: RawRepresentable>(_ type: R.Type) -> Any.Type { R.RawValue.self }

    /// A decimal's text, checked to read back as the same decimal (NaN does not).
    private static func exactText(_ decimal: Decimal, column: String) throws -> String {
        let text = decimal.description
        guard !decimal.isNaN, Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) == decimal else {
            throw StorageError(
                .valueOutOfRange,
                "column \(Identifier.quoted(column)): the decimal \(text) cannot be stored exactly",
                column: column
            )
        }
        return text
    }

    /// The stored form of a value that is not a plain number, Bool or String.
    ///
    /// `json` is only called for a value stored as JSON: the coders keep their JSON coder in a
    /// lazy property, and every read of one pays a dynamic exclusivity check.
    /// - Returns: the value and the column type it implies.
    static func encode<T: Encodable>(
        _ value: T,
        column: String,
        json: @autoclosure () -> JSONEncoder
    ) throws -> (StorageValue, ColumnType) {
        // The common Foundation types first, by metatype identity: far cheaper than the
        // conformance look-up below, and this runs once per such property per record.
        // The stored forms are the types' `StorageValueConvertible` conformances, so that a
        // query compares with exactly what is stored.
        if T.self == Date.self { return (unsafeBitCast(value, to: Date.self).storageValue, .real) }
        if T.self == Data.self { return (unsafeBitCast(value, to: Data.self).storageValue, .blob) }
        if let codable = value as? any ColumnCodable {
            return (codable.storageValue, type(of: codable).columnType)
        }
        switch value {
        case let uuid as UUID: return (uuid.storageValue, .text)
        case let url as URL: return (url.storageValue, .text)
        case let decimal as Decimal: return (.text(try exactText(decimal, column: column)), .text)
        default: break
        }
        let encoder = json()
        let probe = SingleValueEncoder(column: column, json: encoder)
        do {
            try value.encode(to: probe)
        } catch is NeedsContainer {
            return (try encodeJSON(value, column: column, json: encoder), .text)
        }
        // An empty array or struct asks for a container but never writes to it.
        if probe.needsContainer { return (try encodeJSON(value, column: column, json: encoder), .text) }
        return (probe.result ?? .null, probe.resultType ?? .untyped)
    }

    private static func encodeJSON<T: Encodable>(_ value: T, column: String, json: JSONEncoder) throws -> StorageValue {
        do {
            return .text(String(decoding: try json.encode(value), as: UTF8.self))
        } catch {
            throw StorageError(
                .unsupportedType,
                "cannot encode a \(T.self) as JSON for column \(Identifier.quoted(column)): \(error)",
                column: column,
                underlying: SendableErrorDescription(error)
            )
        }
    }

    /// Reads a value that is not a plain number, Bool or String from its stored form; `json` is
    /// only called for a value stored as JSON.
    static func decode<T: Decodable>(
        _ type: T.Type,
        from value: StorageValue,
        column: @autoclosure () -> String,
        json: @autoclosure () -> JSONDecoder
    ) throws -> T {
        if T.self == Date.self {
            switch value {
            case .real(let seconds): return unsafeBitCast(Date(timeIntervalSince1970: seconds), to: T.self)
            case .integer(let seconds): return unsafeBitCast(Date(timeIntervalSince1970: Double(seconds)), to: T.self)
            default: throw mismatch(column(), "expected seconds since 1970 for a Date, found \(kind(value))")
            }
        }
        if T.self == Data.self {
            guard case .blob(let data) = value else {
                throw mismatch(column(), "expected a blob for Data, found \(kind(value))")
            }
            return unsafeBitCast(data, to: T.self)
        }
        if let codable = type as? any ColumnCodable.Type {
            do {
                return try codable.init(storageValue: value) as! T
            } catch let error as StorageError {
                throw error
            } catch {
                throw mismatch(column(), "\(value) is not a valid \(T.self): \(error)", underlying: error)
            }
        }
        switch type {
        case is UUID.Type:
            guard case .text(let text) = value, let uuid = UUID(uuidString: text) else {
                throw mismatch(column(), "expected UUID text, found \(kind(value))")
            }
            return uuid as! T
        case is URL.Type:
            guard case .text(let text) = value, let url = URL(string: text) else {
                throw mismatch(column(), "expected URL text, found \(kind(value))")
            }
            return url as! T
        case is Decimal.Type:
            switch value {
            case .text(let text):
                guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                    throw mismatch(column(), "expected decimal text, found \(String(reflecting: text))")
                }
                return decimal as! T
            case .integer(let number): return Decimal(number) as! T
            case .real(let number): return Decimal(number) as! T
            default: throw mismatch(column(), "expected a decimal, found \(kind(value))")
            }
        default:
            break
        }
        let decoder = json()
        do {
            return try T(from: SingleValueDecoder(value: value, column: column(), json: decoder))
        } catch is NeedsContainer {
            let bytes: Data
            switch value {
            case .text(let text): bytes = Data(text.utf8)
            case .blob(let data): bytes = data
            case .null:
                throw StorageError(
                    .missingValue,
                    "column \(Identifier.quoted(column())) is null, but \(T.self) is required",
                    column: column()
                )
            default: throw mismatch(column(), "expected JSON text for \(T.self), found \(kind(value))")
            }
            do {
                return try decoder.decode(T.self, from: bytes)
            } catch {
                throw mismatch(column(), "stored JSON does not decode as \(T.self): \(error)", underlying: error)
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw mismatch(column(), "\(kind(value)) is not a valid \(T.self): \(error)", underlying: error)
        }
    }

    static func mismatch(_ column: String, _ message: String, underlying: (any Error)? = nil) -> StorageError {
        StorageError(
            .typeMismatch,
            "column \(Identifier.quoted(column)): \(message)",
            column: column,
            underlying: underlying.map { SendableErrorDescription($0) }
        )
    }

    /// A short name for a value's storage class, for error messages.
    static func kind(_ value: StorageValue) -> String {
        switch value {
        case .null: return "null"
        case .integer(let number): return "integer \(number)"
        case .real(let number): return "real \(number)"
        case .text(let text): return "text \(Identifier.quoted(text))"
        case .blob(let data): return "a blob of \(data.count) bytes"
        }
    }

    static func makeJSONEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func makeJSONDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }
}

/// Lets `ValueMapping` see through `Optional<Wrapped>` in a metatype.
protocol OptionalProtocol {
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalProtocol {
    static var wrappedType: Any.Type { Wrapped.self }
}

/// Thrown by the single-value coders when a value needs a keyed or unkeyed container, which
/// means it is stored as JSON.
struct NeedsContainer: Error {}

/// A non-Sendable error carried as its description.
struct SendableErrorDescription: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = String(describing: error) }
}
