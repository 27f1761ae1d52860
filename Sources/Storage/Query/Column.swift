/// A column named in a query: `Column("age") >= 30 && Column("name").like("A%")`.
public struct Column: Sendable {
    /// The column's name.
    public let name: String

    /// Creates a reference to the named column.
    /// - Parameter name: the column's name; names compare ignoring ASCII case. A name the
    ///   collection lacks makes the query fail with `StorageError.Code.unknownColumn`.
    public init(_ name: String) {
        self.name = name
    }

    /// A pattern match with SQL LIKE semantics: `%` matches any run of characters, `_` exactly
    /// one; ASCII letters match case-insensitively.
    /// - Parameter pattern: the pattern, as `"A%"`.
    /// - Returns: the predicate; unknown when the column is null.
    public func like(_ pattern: String) -> StoragePredicate {
        .like(name, pattern)
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
        .in(name, values.map(\.storageValue))
    }

    /// Whether the column's value is the raw value of one of `values` (enums are stored as their
    /// raw values): `Column("mood").in([Mood.happy, .calm])`.
    /// - Parameter values: the values whose raw values are looked for.
    /// - Returns: the predicate.
    @_disfavoredOverload
    public func `in`<Values: Sequence>(_ values: Values) -> StoragePredicate
    where Values.Element: RawRepresentable, Values.Element.RawValue: StorageValueConvertible {
        .in(name, values.map(\.rawValue.storageValue))
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
        return value.isNull ? .isNull(lhs.name) : .compare(lhs.name, .equal, value)
    }

    /// The column holds a value other than `rhs` (a null `rhs` means the column is not null).
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value, converted as the row encoder stores its type.
    /// - Returns: the predicate.
    public static func != (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        let value = rhs.storageValue
        return value.isNull ? .not(.isNull(lhs.name)) : .compare(lhs.name, .notEqual, value)
    }

    /// `Column("email") == nil`: the column holds null.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: `nil`.
    /// - Returns: the predicate.
    public static func == (lhs: Column, rhs: _OptionalNilComparisonType) -> StoragePredicate {
        .isNull(lhs.name)
    }

    /// `Column("email") != nil`: the column holds a value.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: `nil`.
    /// - Returns: the predicate.
    public static func != (lhs: Column, rhs: _OptionalNilComparisonType) -> StoragePredicate {
        .not(.isNull(lhs.name))
    }

    /// The column's value sorts before `rhs`; unknown when the column is null.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value, converted as the row encoder stores its type.
    /// - Returns: the predicate.
    public static func < (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        .compare(lhs.name, .less, rhs.storageValue)
    }

    /// The column's value sorts before or equal to `rhs`; unknown when the column is null.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value, converted as the row encoder stores its type.
    /// - Returns: the predicate.
    public static func <= (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        .compare(lhs.name, .lessOrEqual, rhs.storageValue)
    }

    /// The column's value sorts after `rhs`; unknown when the column is null.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value, converted as the row encoder stores its type.
    /// - Returns: the predicate.
    public static func > (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        .compare(lhs.name, .greater, rhs.storageValue)
    }

    /// The column's value sorts after or equal to `rhs`; unknown when the column is null.
    /// - Parameters:
    ///   - lhs: the column.
    ///   - rhs: the value, converted as the row encoder stores its type.
    /// - Returns: the predicate.
    public static func >= (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        .compare(lhs.name, .greaterOrEqual, rhs.storageValue)
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
