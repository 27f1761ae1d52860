/// A column named in a query: `Column("age") >= 30 && Column("name").like("A%")`, or a field
/// inside a column's JSON text: `Column("address", "city") == "Oslo"`.
public struct Column: Sendable {
    /// The column's name.
    public let name: String
    /// The keys of a field inside the column's JSON text, outermost first; empty for the column
    /// itself.
    public let path: [String]

    /// Creates a reference to the named column, or to a field inside its JSON text.
    ///
    /// A nested `Codable` value (`var address: Address`) is stored as JSON text in one column;
    /// `Column("address", "city")` names its `city`, `Column("address", "geo", "lat")` a field
    /// two levels in. A field that is missing or JSON `null` compares as null; a JSON number
    /// as a number, a string as text, `true` and `false` as 1 and 0, an object or array as its
    /// JSON text. The query fails with `StorageError.Code.invalidQuery` when the column is not
    /// text, when the path is deeper than ``maximumPathDepth`` keys, or a key is longer than
    /// ``maximumKeyLength`` bytes or holds a `"`, a `\` or a control character.
    /// - Parameters:
    ///   - name: the column's name; names compare ignoring ASCII case. A name the collection
    ///     lacks makes the query fail with `StorageError.Code.unknownColumn`.
    ///   - path: the keys of a field inside the column's JSON text; none for the column itself.
    public init(_ name: String, _ path: String...) {
        self.name = name
        self.path = path
    }

    /// A reference to the field at `path` of column `name`, the path as an array (for the
    /// `storage` command's parsers).
    /// - Parameters:
    ///   - name: the column's name.
    ///   - path: the keys of the field; none for the column itself.
    package init(name: String, path: [String]) {
        self.name = name
        self.path = path
    }

    /// The most keys a nested field's path may have: 32.
    public static let maximumPathDepth = 32
    /// The longest key a nested field's path may have, in UTF-8 bytes: 1,024.
    public static let maximumKeyLength = 1_024

    /// `term` (named after this column) as it applies to this reference: to the column itself,
    /// or to the field at `path` inside it.
    func applying(_ term: StoragePredicate) -> StoragePredicate {
        path.isEmpty ? term : .nested(path: path, term)
    }

    /// The value this reference reads from a record: the column's value, or the field at
    /// `path` inside its JSON text (as SQLite's `json_extract` reads it). For the core's own
    /// use wherever a query reads a nested field (filters, sorting, grouping).
    /// - Parameter row: the record's value for a column name.
    /// - Returns: the value.
    package func value(in row: (String) -> StorageValue) -> StorageValue {
        value(from: row(name))
    }

    /// The value this reference reads from its column's value `columnValue`.
    package func value(from columnValue: StorageValue) -> StorageValue {
        path.isEmpty ? columnValue : NestedField.value(in: columnValue, at: path)
    }

    /// A pattern match with SQL LIKE semantics: `%` matches any run of characters, `_` exactly
    /// one; ASCII letters match case-insensitively.
    /// - Parameter pattern: the pattern, as `"A%"`.
    /// - Returns: the predicate; unknown when the column is null.
    public func like(_ pattern: String) -> StoragePredicate {
        applying(.like(name, pattern))
    }

    /// Whether the column's value is one of `values`: SQL's `column IN (values…)`, one node
    /// however long the list (a million values is fine). Negate it for `NOT IN`:
    /// `!Column("id").in(ids)`.
    ///
    /// As in SQLite, the result is unknown (so the record is not selected, with or without `!`)
    /// when the column is null, or when it equals no value and `values` holds a null; an empty
    /// list is false.
    /// - Parameter values: the values, each converted as the row encoder stores its type.
    /// - Returns: the predicate.
    public func `in`<Values: Sequence>(_ values: Values) -> StoragePredicate
    where Values.Element: StorageValueConvertible {
        applying(.in(name, values.map(\.storageValue)))
    }

    /// Whether the column's value is the raw value of one of `values` (enums are stored as their
    /// raw values): `Column("mood").in([Mood.happy, .calm])`.
    /// - Parameter values: the values whose raw values are looked for.
    /// - Returns: the predicate.
    @_disfavoredOverload
    public func `in`<Values: Sequence>(_ values: Values) -> StoragePredicate
    where Values.Element: RawRepresentable, Values.Element.RawValue: StorageValueConvertible {
        applying(.in(name, values.map(\.rawValue.storageValue)))
    }
}

extension Column {
    /// The column equals `rhs` (a null `rhs` means the column is null).
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value, converted as the row encoder stores its type.
    /// - Returns: the predicate.
    public static func == (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        let value = rhs.storageValue
        return lhs.applying(value.isNull ? .isNull(lhs.name) : .compare(lhs.name, .equal, value))
    }

    /// The column holds a value other than `rhs` (a null `rhs` means the column is not null).
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value, converted as the row encoder stores its type.
    /// - Returns: the predicate.
    public static func != (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        let value = rhs.storageValue
        if value.isNull { return .not(lhs.applying(.isNull(lhs.name))) }
        return lhs.applying(.compare(lhs.name, .notEqual, value))
    }

    /// `Column("email") == nil`: the column holds null.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: `nil`.
    /// - Returns: the predicate.
    public static func == (lhs: Column, rhs: _OptionalNilComparisonType) -> StoragePredicate {
        lhs.applying(.isNull(lhs.name))
    }

    /// `Column("email") != nil`: the column holds a value.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: `nil`.
    /// - Returns: the predicate.
    public static func != (lhs: Column, rhs: _OptionalNilComparisonType) -> StoragePredicate {
        .not(lhs.applying(.isNull(lhs.name)))
    }

    /// The column's value sorts before `rhs`; unknown when the column is null.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value, converted as the row encoder stores its type.
    /// - Returns: the predicate.
    public static func < (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        lhs.applying(.compare(lhs.name, .less, rhs.storageValue))
    }

    /// The column's value sorts before or equal to `rhs`; unknown when the column is null.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value, converted as the row encoder stores its type.
    /// - Returns: the predicate.
    public static func <= (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        lhs.applying(.compare(lhs.name, .lessOrEqual, rhs.storageValue))
    }

    /// The column's value sorts after `rhs`; unknown when the column is null.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value, converted as the row encoder stores its type.
    /// - Returns: the predicate.
    public static func > (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        lhs.applying(.compare(lhs.name, .greater, rhs.storageValue))
    }

    /// The column's value sorts after or equal to `rhs`; unknown when the column is null.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value, converted as the row encoder stores its type.
    /// - Returns: the predicate.
    public static func >= (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        lhs.applying(.compare(lhs.name, .greaterOrEqual, rhs.storageValue))
    }
}

// Raw-value enums compare by their raw value, which is how `Codable` stores them. Disfavored so
// that a type that is also `StorageValueConvertible` (a `ColumnCodable` enum) uses its own form.
extension Column {
    /// The column equals the raw value of `rhs`: `Column("mood") == Mood.happy`.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value whose raw value is compared.
    /// - Returns: the predicate.
    @_disfavoredOverload
    public static func == <Value: RawRepresentable>(lhs: Column, rhs: Value) -> StoragePredicate
    where Value.RawValue: StorageValueConvertible {
        lhs == rhs.rawValue
    }

    /// The column holds a value other than the raw value of `rhs`.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value whose raw value is compared.
    /// - Returns: the predicate.
    @_disfavoredOverload
    public static func != <Value: RawRepresentable>(lhs: Column, rhs: Value) -> StoragePredicate
    where Value.RawValue: StorageValueConvertible {
        lhs != rhs.rawValue
    }

    /// The column's value sorts before the raw value of `rhs`.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value whose raw value is compared.
    /// - Returns: the predicate.
    @_disfavoredOverload
    public static func < <Value: RawRepresentable>(lhs: Column, rhs: Value) -> StoragePredicate
    where Value.RawValue: StorageValueConvertible {
        lhs < rhs.rawValue
    }

    /// The column's value sorts before or equal to the raw value of `rhs`.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value whose raw value is compared.
    /// - Returns: the predicate.
    @_disfavoredOverload
    public static func <= <Value: RawRepresentable>(lhs: Column, rhs: Value) -> StoragePredicate
    where Value.RawValue: StorageValueConvertible {
        lhs <= rhs.rawValue
    }

    /// The column's value sorts after the raw value of `rhs`.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value whose raw value is compared.
    /// - Returns: the predicate.
    @_disfavoredOverload
    public static func > <Value: RawRepresentable>(lhs: Column, rhs: Value) -> StoragePredicate
    where Value.RawValue: StorageValueConvertible {
        lhs > rhs.rawValue
    }

    /// The column's value sorts after or equal to the raw value of `rhs`.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value whose raw value is compared.
    /// - Returns: the predicate.
    @_disfavoredOverload
    public static func >= <Value: RawRepresentable>(lhs: Column, rhs: Value) -> StoragePredicate
    where Value.RawValue: StorageValueConvertible {
        lhs >= rhs.rawValue
    }
}
