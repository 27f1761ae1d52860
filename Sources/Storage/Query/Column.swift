/// A column named in a query: `Column("age") >= 30 && Column("name").like("A%")`.
public struct Column: Sendable {
    /// The column's name.
    public let name: String

    /// Creates a reference to the named column.
    public init(_ name: String) {
        self.name = name
    }

    /// A pattern match with SQL LIKE semantics: `%` matches any run of characters, `_` exactly
    /// one; ASCII letters match case-insensitively.
    public func like(_ pattern: String) -> StoragePredicate {
        .like(name, pattern)
    }

    /// Whether the column's value is one of `values`.
    public func `in`(_ values: [some StorageValueConvertible]) -> StoragePredicate {
        values.reduce(StoragePredicate.constant(false)) { result, value in result || (self == value) }
    }
}

extension Column {
    /// The column equals `rhs` (a null `rhs` means the column is null).
    public static func == (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        let value = rhs.storageValue
        return value.isNull ? .isNull(lhs.name) : .compare(lhs.name, .equal, value)
    }

    /// The column holds a value other than `rhs` (a null `rhs` means the column is not null).
    public static func != (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        let value = rhs.storageValue
        return value.isNull ? .not(.isNull(lhs.name)) : .compare(lhs.name, .notEqual, value)
    }

    /// `Column("email") == nil`: the column holds null.
    public static func == (lhs: Column, rhs: _OptionalNilComparisonType) -> StoragePredicate {
        .isNull(lhs.name)
    }

    /// `Column("email") != nil`: the column holds a value.
    public static func != (lhs: Column, rhs: _OptionalNilComparisonType) -> StoragePredicate {
        .not(.isNull(lhs.name))
    }

    /// The column's value sorts before `rhs`; unknown when the column is null.
    public static func < (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        .compare(lhs.name, .less, rhs.storageValue)
    }

    /// The column's value sorts before or equal to `rhs`; unknown when the column is null.
    public static func <= (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        .compare(lhs.name, .lessOrEqual, rhs.storageValue)
    }

    /// The column's value sorts after `rhs`; unknown when the column is null.
    public static func > (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        .compare(lhs.name, .greater, rhs.storageValue)
    }

    /// The column's value sorts after or equal to `rhs`; unknown when the column is null.
    public static func >= (lhs: Column, rhs: some StorageValueConvertible) -> StoragePredicate {
        .compare(lhs.name, .greaterOrEqual, rhs.storageValue)
    }
}
