/// A ``StoragePredicate`` made ready to test many records: chains of `&&` and `||` flattened into
/// lists (so a chain of any length is walked without deep recursion) and every IN list hashed
/// once into a set of ``StorageKey``s (so a test costs one look-up, not one comparison per value).
///
/// A backend that filters records itself prepares the query's predicate once and tests every
/// candidate with it; `PredicateEvaluator.matches` prepares it again on every call.
///
/// ```swift
/// let prepared = PreparedPredicate(request.predicate)
/// for record in candidates where prepared.matches({ record[$0] ?? .null }) { … }
/// ```
public struct PreparedPredicate: Sendable {
    /// A node of the flattened predicate, naming its columns as `Column` (a name here, a slot
    /// in a ``BoundPredicate``).
    fileprivate indirect enum Node<Column: Sendable>: Sendable {
        case constant(Bool)
        case isNull(Column)
        case compare(Column, StoragePredicate.Comparison, StorageValue)
        case like(Column, String)
        case member(Column, MemberList)
        case all([Node])
        case any([Node])
        case not(Node)

        /// The same node with each column replaced by `map` of it.
        func mapColumns<Other>(_ map: (Column) -> Other) -> Node<Other> {
            switch self {
            case .constant(let result): return .constant(result)
            case .isNull(let column): return .isNull(map(column))
            case .compare(let column, let op, let value): return .compare(map(column), op, value)
            case .like(let column, let pattern): return .like(map(column), pattern)
            case .member(let column, let list): return .member(map(column), list)
            case .all(let operands): return .all(operands.map { $0.mapColumns(map) })
            case .any(let operands): return .any(operands.map { $0.mapColumns(map) })
            case .not(let operand): return .not(operand.mapColumns(map))
            }
        }
    }

    /// An IN list as SQLite sees it: a NaN is a null (SQLite stores NaN as NULL).
    fileprivate struct MemberList: Sendable {
        let keys: Set<StorageKey>
        let hasNull: Bool
        let isEmpty: Bool

        init(_ values: [StorageValue]) {
            var keys = Set<StorageKey>(minimumCapacity: values.count)
            var hasNull = false
            for value in values {
                if PreparedPredicate.isSQLNull(value) { hasNull = true } else { keys.insert(StorageKey(value)) }
            }
            self.keys = keys
            self.hasNull = hasNull
            isEmpty = values.isEmpty
        }

        /// `value IN (list)`, three-valued.
        func contains(_ value: StorageValue) -> Bool? {
            if isEmpty { return false }
            if PreparedPredicate.isSQLNull(value) { return nil }
            if keys.contains(StorageKey(value)) { return true }
            return hasNull ? nil : false
        }
    }

    private let root: Node<String>?

    /// Prepares `predicate`: flattens its chains and hashes its IN lists, once.
    /// - Parameter predicate: the filter; `nil` matches every record.
    public init(_ predicate: StoragePredicate?) {
        root = predicate?.fold(
            term: { term -> Node<String> in
                switch term {
                case .compare(let column, let op, let value): return .compare(column, op, value)
                case .isNull(let column): return .isNull(column)
                case .like(let column, let pattern): return .like(column, pattern)
                case .constant(let value): return .constant(value)
                case .in(let column, let values): return .member(column, MemberList(values))
                case .and, .or, .not: preconditionFailure("fold passes only terms")
                }
            },
            all: Node.all,
            any: Node.any,
            not: Node.not
        )
    }

    /// Whether the predicate is true for a record; unknown counts as false.
    /// - Parameter value: the record's value for a column name (`.null` when it has none).
    /// - Returns: whether the record is selected.
    public func matches(_ value: (String) -> StorageValue) -> Bool {
        guard let root else { return true }
        return Self.evaluate(root, value) == true
    }

    /// Three-valued evaluation: `nil` is SQL's unknown (and a `nil` predicate is true).
    /// - Parameter value: the record's value for a column name (`.null` when it has none).
    /// - Returns: `true`, `false`, or `nil` for unknown.
    public func evaluate(_ value: (String) -> StorageValue) -> Bool? {
        guard let root else { return true }
        return Self.evaluate(root, value)
    }

    /// The predicate with each column name replaced, once, by the number `slot` gives it (a
    /// field id, a column position), for a backend that reads a record's values by number:
    /// testing a record then costs no look-up of a name (hashing a column name twice a record
    /// was a quarter of an LMDB scan with a filter).
    /// - Parameter slot: the number of a column name; the bound predicate passes it back to its
    ///   `value` closure as it is, whatever it is (a backend without the column may use -1).
    /// - Returns: the bound predicate.
    public func binding(_ slot: (String) -> Int) -> BoundPredicate {
        BoundPredicate(root: root?.mapColumns(slot))
    }

    fileprivate static func evaluate<Column>(_ node: Node<Column>, _ value: (Column) -> StorageValue) -> Bool? {
        switch node {
        case .constant(let result):
            return result
        case .isNull(let column):
            return value(column).isNull
        case .compare(let column, let op, let rhs):
            let lhs = value(column)
            if lhs.isNull || rhs.isNull { return nil }
            let order = StorageValue.compare(lhs, rhs)
            switch op {
            case .equal: return order == 0
            case .notEqual: return order != 0
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            case .greaterOrEqual: return order >= 0
            }
        case .like(let column, let pattern):
            guard let text = PredicateEvaluator.likeText(value(column)) else { return nil }
            return PredicateEvaluator.like(text, pattern)
        case .member(let column, let list):
            return list.contains(value(column))
        case .all(let operands):
            return evaluate(operands, winner: false, value)
        case .any(let operands):
            return evaluate(operands, winner: true, value)
        case .not(let operand):
            return evaluate(operand, value).map { !$0 }
        }
    }

    /// AND (`winner` false) or OR (`winner` true) of `operands`: `winner` wins over unknown, so
    /// the walk goes on after an unknown in case a `winner` follows.
    private static func evaluate<Column>(
        _ operands: [Node<Column>],
        winner: Bool,
        _ value: (Column) -> StorageValue
    ) -> Bool? {
        var result: Bool? = !winner
        for operand in operands {
            switch evaluate(operand, value) {
            case .some(winner): return winner
            case .none: result = nil
            case .some: break
            }
        }
        return result
    }

    /// Whether SQLite treats `value` as NULL: a null, or a NaN (which SQLite stores as NULL).
    static func isSQLNull(_ value: StorageValue) -> Bool {
        switch value {
        case .null: return true
        case .real(let number): return number.isNaN
        default: return false
        }
    }
}

/// A ``PreparedPredicate`` whose columns are numbers (``PreparedPredicate/binding(_:)``): the same
/// tests, with the same three-valued results, reading a record's values by number.
///
/// ```swift
/// let bound = PreparedPredicate(request.predicate).binding { fieldIDs[$0] ?? -1 }
/// for record in candidates where bound.matches({ $0 < 0 ? .null : record.value(field: $0) }) { … }
/// ```
public struct BoundPredicate: Sendable {
    fileprivate let root: PreparedPredicate.Node<Int>?

    /// Whether the predicate is true for a record; unknown counts as false.
    /// - Parameter value: the record's value for a column's number (`.null` when it has none).
    /// - Returns: whether the record is selected.
    public func matches(_ value: (Int) -> StorageValue) -> Bool {
        guard let root else { return true }
        return PreparedPredicate.evaluate(root, value) == true
    }

    /// Three-valued evaluation: `nil` is SQL's unknown (and a `nil` predicate is true).
    /// - Parameter value: the record's value for a column's number (`.null` when it has none).
    /// - Returns: `true`, `false`, or `nil` for unknown.
    public func evaluate(_ value: (Int) -> StorageValue) -> Bool? {
        guard let root else { return true }
        return PreparedPredicate.evaluate(root, value)
    }
}
