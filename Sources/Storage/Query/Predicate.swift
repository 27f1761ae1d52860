/// A filter over a collection's records, with SQL's three-valued logic: a comparison with null
/// is unknown, and only records for which the predicate is true are selected.
///
/// Built with the operators on ``Column``: `Column("age") >= 30 && !(Column("email") == nil)`,
/// `Column("id").in(ids)`.
///
/// # For backends
///
/// New kinds of node may be added in later versions. A backend that compiles predicates for its
/// engine must therefore keep a `default:` (or `@unknown default:`) branch wherever it switches
/// over a predicate, and answer a node it does not know with ``PredicateEvaluator`` (or
/// ``PreparedPredicate``), which always implements every node: compile the parts it knows, and
/// filter the candidates with the evaluator. A query planner that only looks for terms it can use
/// (equalities, ranges) can simply skip the others, as long as every candidate is still checked
/// with the evaluator.
///
/// Chains of `&&` or `||` built in a loop can be thousands of nodes deep. Walk them with
/// `conjuncts` and `disjuncts` (or `fold`), which flatten a chain without recursion, rather than
/// recursing on `.and` and `.or` one node at a time.
///
/// The store simplifies every query's predicate before a backend sees it (``simplified()``:
/// negations pushed down to the terms, chains merged, constants folded) and refuses one nested
/// deeper than ``maximumDepth`` (1,000 levels of `&&`, `||` and `!`) with
/// ``StorageError/Code/invalidQuery``, on every engine alike. A backend is therefore handed at
/// most that depth, and a recursive walk of the flattened chains stays that shallow.
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
    /// `column IN (values…)`, with SQLite's semantics: true when the column's value equals one of
    /// `values` (numbers across storage classes, text by its bytes); unknown when the column is
    /// null, or when it equals none of them and `values` holds a null; false otherwise. An empty
    /// list is false even for a null column, as in SQLite. `.not(.in(…))` is SQL's `NOT IN`.
    case `in`(String, [StorageValue])
    /// A term applied to a field inside its column's JSON text rather than to the column:
    /// `.nested(path: ["city"], .compare("address", .equal, "Oslo"))` is
    /// `Column("address", "city") == "Oslo"`. The term is a `.compare`, `.isNull`, `.like` or
    /// `.in` naming the column; `path` holds the keys from the outermost object inward (never
    /// empty). The field's value is read as ``Column/init(_:_:)`` describes (SQLite's
    /// `json_extract`), and the term compares it with SQLite's rules; its compared values are
    /// not converted with the column's affinity (a field's type is the JSON's, not the column's).
    ///
    /// Added after the other cases: a backend that does not know it evaluates it with
    /// ``PreparedPredicate``, as for every node it does not know (see "For backends" above).
    case nested(path: [String], StoragePredicate)
    /// `column IN (SELECT primaryKey FROM collection WHERE predicate)`: a sub-query, as
    /// ``Column/in(_:where:)`` builds it, with the semantics of `.in` over the primary keys of
    /// the records of `collection` matching `predicate` (all of them when `nil`; none when the
    /// collection does not exist).
    ///
    /// Added after the other cases. The store resolves it before a backend sees a query (into
    /// `.in` over the keys found, in the same transaction) unless the backend runs sub-queries
    /// itself (``SubqueryFilteringReadTransaction``); other backends are never handed one
    /// (``PreparedPredicate`` reads one as an empty `.in`).
    case subquery(String, collection: String, predicate: StoragePredicate?)

    /// Every column the predicate names, in order of appearance (a column named twice appears
    /// twice).
    public var columnNames: [String] {
        var names: [String] = []
        forEachTerm { term in
            switch term {
            case .compare(let column, _, _), .isNull(let column), .like(let column, _), .in(let column, _):
                names.append(column)
            case .nested(_, let inner):
                names.append(contentsOf: inner.columnNames)
            case .subquery(let column, _, _):
                names.append(column)
            default:
                break
            }
        }
        return names
    }

    /// The operands of the chain of `.and`s rooted here, left to right (`[self]` when this is not
    /// an `.and`). Found without recursion, so a chain of any length is safe.
    public var conjuncts: [StoragePredicate] { chain(conjunction: true) }

    /// The operands of the chain of `.or`s rooted here, left to right (`[self]` when this is not
    /// an `.or`). Found without recursion, so a chain of any length is safe.
    public var disjuncts: [StoragePredicate] { chain(conjunction: false) }

    private func chain(conjunction: Bool) -> [StoragePredicate] {
        var operands: [StoragePredicate] = []
        var pending = [self]
        while let next = pending.popLast() {
            switch (next, conjunction) {
            case (.and(let lhs, let rhs), true), (.or(let lhs, let rhs), false):
                pending.append(rhs)
                pending.append(lhs)
            default:
                operands.append(next)
            }
        }
        return operands
    }

    /// Calls `body` with every term (a node that is not `.and`, `.or` or `.not`), left to right,
    /// without recursion.
    package func forEachTerm(_ body: (StoragePredicate) throws -> Void) rethrows {
        var pending = [self]
        while let next = pending.popLast() {
            switch next {
            case .and(let lhs, let rhs), .or(let lhs, let rhs):
                pending.append(rhs)
                pending.append(lhs)
            case .not(let operand):
                pending.append(operand)
            default:
                try body(next)
            }
        }
    }

    /// Folds the predicate bottom-up without recursion: `term` for every node that is not `.and`,
    /// `.or` or `.not` (left to right), `all` for a whole chain of `.and`s, `any` for a whole chain
    /// of `.or`s (so a chain of 10,000 `&&`s is one call with 10,000 operands), `not` for `.not`.
    ///
    /// ```swift
    /// let terms = predicate.fold(term: { _ in 1 }, all: { $0.reduce(0, +) }, any: { $0.reduce(0, +) }, not: { $0 })
    /// ```
    /// - Parameters:
    ///   - term: the result for a term, such as `.compare` or `.in` (or a kind of node added later).
    ///   - all: the result for an AND chain, from its operands' results in order.
    ///   - any: the result for an OR chain, from its operands' results in order.
    ///   - not: the result for a NOT, from its operand's.
    /// - Returns: the fold of the root.
    /// - Throws: whatever the closures throw.
    public func fold<Result>(
        term: (StoragePredicate) throws -> Result,
        all: ([Result]) throws -> Result,
        any: ([Result]) throws -> Result,
        not: (Result) throws -> Result
    ) rethrows -> Result {
        var steps: [FoldStep] = [.visit(self)]
        var results: [Result] = []
        while let step = steps.popLast() {
            switch step {
            case .visit(let node):
                switch node {
                case .and, .or:
                    let isAnd: Bool
                    if case .and = node { isAnd = true } else { isAnd = false }
                    let operands = node.chain(conjunction: isAnd)
                    steps.append(isAnd ? .all(operands.count) : .any(operands.count))
                    steps.append(contentsOf: operands.reversed().map(FoldStep.visit))
                case .not(let operand):
                    steps.append(.not)
                    steps.append(.visit(operand))
                default:
                    results.append(try term(node))
                }
            case .all(let count):
                let operands = Array(results.suffix(count))
                results.removeLast(count)
                results.append(try all(operands))
            case .any(let count):
                let operands = Array(results.suffix(count))
                results.removeLast(count)
                results.append(try any(operands))
            case .not:
                results.append(try not(results.removeLast()))
            }
        }
        return results[0]
    }

    /// `.and` over every operand, as a balanced tree (depth log₂ n rather than n), so that
    /// engines with an expression-depth limit and recursive walks both cope with long lists.
    /// - Parameter operands: the predicates that must all hold.
    /// - Returns: `.constant(true)` for no operands.
    public static func all(_ operands: [StoragePredicate]) -> StoragePredicate {
        balanced(operands[...], identity: true, StoragePredicate.and)
    }

    /// `.or` over every operand, as a balanced tree (depth log₂ n rather than n).
    /// - Parameter operands: the predicates of which one must hold.
    /// - Returns: `.constant(false)` for no operands.
    public static func any(_ operands: [StoragePredicate]) -> StoragePredicate {
        balanced(operands[...], identity: false, StoragePredicate.or)
    }

    private static func balanced(
        _ operands: ArraySlice<StoragePredicate>,
        identity: Bool,
        _ combine: (StoragePredicate, StoragePredicate) -> StoragePredicate
    ) -> StoragePredicate {
        switch operands.count {
        case 0: return .constant(identity)
        case 1: return operands[operands.startIndex]
        default:
            let middle = operands.startIndex + operands.count / 2
            return combine(
                balanced(operands[..<middle], identity: identity, combine),
                balanced(operands[middle...], identity: identity, combine)
            )
        }
    }

    /// The same predicate with every compared value (IN lists included) passed through
    /// `transform`, given its column. Chains of `.and` and `.or` come back balanced (see `all`).
    package func mapValues(_ transform: (String, StorageValue) throws -> StorageValue) rethrows -> StoragePredicate {
        try fold(
            term: { term in
                switch term {
                case .compare(let column, let op, let value):
                    return .compare(column, op, try transform(column, value))
                case .in(let column, let values):
                    return .in(column, try values.map { try transform(column, $0) })
                default:
                    return term
                }
            },
            all: StoragePredicate.all,
            any: StoragePredicate.any,
            not: StoragePredicate.not
        )
    }

    /// Both predicates hold (false wins over unknown).
    /// - Parameters:
    ///   - lhs: a condition.
    ///   - rhs: another condition.
    /// - Returns: a condition that holds when both hold (SQL's `AND`, with its rules for unknown).
    public static func && (lhs: StoragePredicate, rhs: StoragePredicate) -> StoragePredicate { .and(lhs, rhs) }
    /// Either predicate holds (true wins over unknown).
    /// - Parameters:
    ///   - lhs: a condition.
    ///   - rhs: another condition.
    /// - Returns: a condition that holds when either holds (SQL's `OR`, with its rules for unknown).
    public static func || (lhs: StoragePredicate, rhs: StoragePredicate) -> StoragePredicate { .or(lhs, rhs) }
    /// The predicate does not hold (unknown stays unknown).
    /// - Parameter operand: a condition.
    /// - Returns: its negation (SQL's `NOT`): unknown stays unknown, so a null column is selected
    ///   neither by a comparison nor by its negation.
    public static prefix func ! (operand: StoragePredicate) -> StoragePredicate { .not(operand) }
}

/// One step of `StoragePredicate.fold`'s explicit stack: visit a node, or combine the last
/// results into an AND chain, an OR chain, or a NOT.
private enum FoldStep {
    case visit(StoragePredicate)
    case all(Int)
    case any(Int)
    case not
}
