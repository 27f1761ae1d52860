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
    /// The predicate as a flat program: each operation in prefix order, a compound one followed
    /// by its operands and holding the index past them. An operation holds only numbers (its
    /// column's, its value's), so reading one while testing a record retains nothing: a tree of
    /// enum cases retained the payloads it matched, about a twentieth of an LMDB filter.
    fileprivate struct Program: Sendable {
        enum Operation: Sendable {
            case constant(Bool)
            case isNull(column: Int)
            case compare(column: Int, StoragePredicate.Comparison, value: Int)
            case like(column: Int, pattern: Int)
            case member(column: Int, list: Int)
            /// AND of the operations up to `end` (exclusive).
            case all(end: Int)
            /// OR of the operations up to `end` (exclusive).
            case any(end: Int)
            /// NOT of the one operation that follows, which ends at `end`.
            case not(end: Int)
            /// The operation that follows (ending at `end`), applied to the field at path number
            /// `path` inside the JSON text of the column: each of its columns reads as that field.
            case nested(column: Int, path: Int, end: Int)
        }

        var operations: [Operation] = []
        var values: [StorageValue] = []
        var patterns: [String] = []
        var lists: [MemberList] = []
        /// The paths of nested fields, each key as UTF-8 bytes (`NestedField.keys(of:)`).
        var paths: [[[UInt8]]] = []
    }

    /// A node of the predicate while it is prepared (flattened by `fold`), before it becomes a
    /// `Program`.
    private indirect enum Node {
        case constant(Bool)
        case isNull(String)
        case compare(String, StoragePredicate.Comparison, StorageValue)
        case like(String, String)
        case member(String, MemberList)
        case all([Node])
        case any([Node])
        case not(Node)
        case nested(String, [String], Node)
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

    /// The program, or `nil` for no predicate (every record matches).
    fileprivate let program: Program?
    /// The column names the program's operations number (in the order first met).
    private let columns: [String]

    /// The predicate as a tree of `Node`s, its chains flattened by `fold`.
    private static func node(_ predicate: StoragePredicate) -> Node {
        predicate.fold(
            term: { term -> Node in
                switch term {
                case .compare(let column, let op, let value): return .compare(column, op, value)
                case .isNull(let column): return .isNull(column)
                case .like(let column, let pattern): return .like(column, pattern)
                case .constant(let value): return .constant(value)
                case .in(let column, let values): return .member(column, MemberList(values))
                case .nested(let path, let inner):
                    // The store hands over only a term here, one level deep (`Session` checks it).
                    return .nested(inner.columnNames.first ?? "", path, node(inner))
                case .subquery(let column, _, _):
                    // The store resolves a sub-query before a backend sees it; one evaluated
                    // unresolved matches nothing, as an empty IN list.
                    return .member(column, MemberList([]))
                case .and, .or, .not: preconditionFailure("fold passes only terms")
                }
            },
            all: Node.all,
            any: Node.any,
            not: Node.not
        )
    }

    /// Prepares `predicate`: flattens its chains and hashes its IN lists, once.
    /// - Parameter predicate: the filter; `nil` matches every record.
    public init(_ predicate: StoragePredicate?) {
        let root = predicate.map(Self.node)
        guard let root else {
            program = nil
            columns = []
            return
        }
        var program = Program()
        var columns: [String] = []
        var numbers: [String: Int] = [:]
        func number(_ column: String) -> Int {
            if let known = numbers[column] { return known }
            numbers[column] = columns.count
            columns.append(column)
            return columns.count - 1
        }
        // Depth-first, as deep as the tree `fold` made (chains are lists, not nesting).
        func emit(_ node: Node) {
            switch node {
            case .constant(let result):
                program.operations.append(.constant(result))
            case .isNull(let column):
                program.operations.append(.isNull(column: number(column)))
            case .compare(let column, let op, let value):
                // A NaN compares as a null, as SQLite binds it: every comparison is unknown.
                program.values.append(Self.isSQLNull(value) ? .null : value)
                program.operations.append(.compare(column: number(column), op, value: program.values.count - 1))
            case .like(let column, let pattern):
                program.patterns.append(pattern)
                program.operations.append(.like(column: number(column), pattern: program.patterns.count - 1))
            case .member(let column, let list):
                program.lists.append(list)
                program.operations.append(.member(column: number(column), list: program.lists.count - 1))
            case .all(let operands), .any(let operands):
                let at = program.operations.count
                program.operations.append(.constant(true))  // replaced below, once `end` is known
                for operand in operands { emit(operand) }
                let end = program.operations.count
                if case .all = node {
                    program.operations[at] = .all(end: end)
                } else {
                    program.operations[at] = .any(end: end)
                }
            case .not(let operand):
                let at = program.operations.count
                program.operations.append(.constant(true))
                emit(operand)
                program.operations[at] = .not(end: program.operations.count)
            case .nested(let column, let path, let operand):
                let at = program.operations.count
                program.operations.append(.constant(true))
                program.paths.append(NestedField.keys(of: path))
                emit(operand)
                program.operations[at] = .nested(
                    column: number(column),
                    path: program.paths.count - 1,
                    end: program.operations.count
                )
            }
        }
        emit(root)
        self.program = program
        self.columns = columns
    }

    /// Whether the predicate is true for a record; unknown counts as false.
    /// - Parameter value: the record's value for a column name (`.null` when it has none).
    /// - Returns: whether the record is selected.
    public func matches(_ value: (String) -> StorageValue) -> Bool {
        evaluate(value) == true
    }

    /// Three-valued evaluation: `nil` is SQL's unknown (and a `nil` predicate is true).
    /// - Parameter value: the record's value for a column name (`.null` when it has none).
    /// - Returns: `true`, `false`, or `nil` for unknown.
    public func evaluate(_ value: (String) -> StorageValue) -> Bool? {
        guard let program else { return true }
        return columns.withUnsafeBufferPointer { names in
            Self.run(program) { value(names[$0]) }
        }
    }

    /// The predicate with each column name replaced, once, by the number `slot` gives it (a
    /// field id, a column position), for a backend that reads a record's values by number:
    /// testing a record then costs no look-up of a name (hashing a column name twice a record
    /// was a quarter of an LMDB scan with a filter).
    /// - Parameter slot: the number of a column name; the bound predicate passes it back to its
    ///   `value` closure as it is, whatever it is (a backend without the column may use -1).
    /// - Returns: the bound predicate.
    public func binding(_ slot: (String) -> Int) -> BoundPredicate {
        BoundPredicate(program: program, slots: columns.map(slot))
    }

    /// Runs `program` on one record: `value` answers a column by the program's number for it.
    fileprivate static func run(_ program: Program, _ value: (Int) -> StorageValue) -> Bool? {
        program.operations.withUnsafeBufferPointer { operations in
            program.values.withUnsafeBufferPointer { values in
                evaluate(at: 0, operations, values, program, value)
            }
        }
    }

    /// The operation at `index` and its operands.
    private static func evaluate(
        at index: Int,
        _ operations: UnsafeBufferPointer<Program.Operation>,
        _ values: UnsafeBufferPointer<StorageValue>,
        _ program: Program,
        _ value: (Int) -> StorageValue
    ) -> Bool? {
        switch operations[index] {
        case .constant(let result):
            return result
        case .isNull(let column):
            return value(column).isNull
        case .compare(let column, let op, let rhs):
            let lhs = value(column)
            if lhs.isNull || values[rhs].isNull { return nil }
            let order = StorageValue.compare(lhs, values[rhs])
            switch op {
            case .equal: return order == 0
            case .notEqual: return order != 0
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            case .greaterOrEqual: return order >= 0
            }
        case .like(let column, let pattern):
            return PredicateEvaluator.likeMatches(value(column), program.patterns[pattern])
        case .member(let column, let list):
            return program.lists[list].contains(value(column))
        case .all(let end):
            return evaluate(from: index + 1, to: end, winner: false, operations, values, program, value)
        case .any(let end):
            return evaluate(from: index + 1, to: end, winner: true, operations, values, program, value)
        case .not:
            return evaluate(at: index + 1, operations, values, program, value).map { !$0 }
        case .nested(let column, let path, _):
            let field = NestedField.value(in: value(column), keys: program.paths[path])
            return evaluate(at: index + 1, operations, values, program) { _ in field }
        }
    }

    /// AND (`winner` false) or OR (`winner` true) of the operations from `start` to `end`: `winner`
    /// wins over unknown, so the walk goes on after an unknown in case a `winner` follows.
    private static func evaluate(
        from start: Int,
        to end: Int,
        winner: Bool,
        _ operations: UnsafeBufferPointer<Program.Operation>,
        _ values: UnsafeBufferPointer<StorageValue>,
        _ program: Program,
        _ value: (Int) -> StorageValue
    ) -> Bool? {
        var result: Bool? = !winner
        var index = start
        while index < end {
            switch evaluate(at: index, operations, values, program, value) {
            case .some(winner): return winner
            case .none: result = nil
            case .some: break
            }
            index = self.end(of: index, operations)
        }
        return result
    }

    /// The index past the operation at `index` and its operands.
    @inline(__always)
    private static func end(of index: Int, _ operations: UnsafeBufferPointer<Program.Operation>) -> Int {
        switch operations[index] {
        case .all(let end), .any(let end), .not(let end), .nested(_, _, let end): return end
        default: return index + 1
        }
    }

    /// Whether SQLite treats `value` as NULL: a null, or a NaN (which SQLite stores as NULL).
    package static func isSQLNull(_ value: StorageValue) -> Bool {
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
    fileprivate let program: PreparedPredicate.Program?
    /// The number `binding` gave each of the program's columns.
    fileprivate let slots: [Int]

    /// Whether the predicate is true for a record; unknown counts as false.
    /// - Parameter value: the record's value for a column's number (`.null` when it has none).
    /// - Returns: whether the record is selected.
    public func matches(_ value: (Int) -> StorageValue) -> Bool {
        evaluate(value) == true
    }

    /// Three-valued evaluation: `nil` is SQL's unknown (and a `nil` predicate is true).
    /// - Parameter value: the record's value for a column's number (`.null` when it has none).
    /// - Returns: `true`, `false`, or `nil` for unknown.
    public func evaluate(_ value: (Int) -> StorageValue) -> Bool? {
        guard let program else { return true }
        return slots.withUnsafeBufferPointer { slots in
            PreparedPredicate.run(program) { value(slots[$0]) }
        }
    }
}
