/// A filter over a collection's records, with SQL's three-valued logic: a comparison with null
/// is unknown, and only records for which the predicate is true are selected.
///
/// Built with the operators on `Column`: `Column("age") >= 30 && !(Column("email") == nil)`.
public indirect enum StoragePredicate: Sendable, Hashable {
    /// How a column is compared with a value.
    public enum Comparison: String, Sendable, Hashable {
        case equal = "="
        case notEqual = "<>"
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
    }

    /// `column <op> value`.
    case compare(String, Comparison, StorageValue)
    /// `column IS NULL`.
    case isNull(String)
    /// `column LIKE pattern`.
    case like(String, String)
    /// Both hold.
    case and(StoragePredicate, StoragePredicate)
    /// Either holds.
    case or(StoragePredicate, StoragePredicate)
    /// The operand does not hold (unknown stays unknown).
    case not(StoragePredicate)
    /// Always true or always false.
    case constant(Bool)

    /// Every column the predicate names, in order of appearance.
    public var columnNames: [String] {
        switch self {
        case .compare(let column, _, _), .isNull(let column), .like(let column, _):
            return [column]
        case .and(let lhs, let rhs), .or(let lhs, let rhs):
            return lhs.columnNames + rhs.columnNames
        case .not(let operand):
            return operand.columnNames
        case .constant:
            return []
        }
    }

    /// The same predicate with every compared value passed through `transform`, given its column.
    package func mapValues(_ transform: (String, StorageValue) throws -> StorageValue) rethrows -> StoragePredicate {
        switch self {
        case .compare(let column, let op, let value):
            return .compare(column, op, try transform(column, value))
        case .isNull, .like, .constant:
            return self
        case .and(let lhs, let rhs):
            return .and(try lhs.mapValues(transform), try rhs.mapValues(transform))
        case .or(let lhs, let rhs):
            return .or(try lhs.mapValues(transform), try rhs.mapValues(transform))
        case .not(let operand):
            return .not(try operand.mapValues(transform))
        }
    }

    /// Both predicates hold (false wins over unknown).
    public static func && (lhs: StoragePredicate, rhs: StoragePredicate) -> StoragePredicate { .and(lhs, rhs) }
    /// Either predicate holds (true wins over unknown).
    public static func || (lhs: StoragePredicate, rhs: StoragePredicate) -> StoragePredicate { .or(lhs, rhs) }
    /// The predicate does not hold (unknown stays unknown).
    public static prefix func ! (operand: StoragePredicate) -> StoragePredicate { .not(operand) }
}
