/// A type that chooses its own stored form (ORIGINS.md §4, WCDB's `WCTColumnCoding`).
///
/// ```swift
/// extension Color: ColumnCodable {
///     static var columnType: ColumnType { .text }
///     var storageValue: StorageValue { .text(hex) }
///     init(storageValue: StorageValue) throws { ... }
/// }
/// ```
/// The stored form is identical on every backend. Most types need no conformance: enums with raw
/// values, nested `Codable` values, Date, UUID, URL and Decimal are mapped without code.
public protocol ColumnCodable: StorageValueConvertible {
    /// The declared type of columns holding this type.
    static var columnType: ColumnType { get }
    /// The stored form of this value.
    var storageValue: StorageValue { get }
    /// Recreates a value from its stored form.
    /// - Throws: any error when `storageValue` is not a valid stored form; it is reported as a
    ///   ``StorageError`` naming the column.
    init(storageValue: StorageValue) throws
}
