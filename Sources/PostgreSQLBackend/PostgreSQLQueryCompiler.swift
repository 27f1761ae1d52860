import Storage

/// Turns a `StoragePredicate` and `Ordering`s into SQL over one table, with every value a bound
/// parameter (`$n::type`), and SQLite's semantics: numbers compare by value whether integer or
/// real, a number sorts before any text and text before any blob, text compares byte-wise
/// (`COLLATE "C"` columns), `LIKE` is ASCII case-insensitive with no escape character, and nulls
/// sort first.
///
/// A predicate it cannot express (a `LIKE` on a non-text column, or a node it does not know)
/// makes `compile` return `nil`; the caller then filters with `PredicateEvaluator`.
struct PostgreSQLQueryCompiler {
    let schema: CollectionSchema
    /// The values of the placeholders, in order.
    private(set) var arguments: [StorageValue] = []
    private let columnsByFoldedName: [String: ColumnDefinition]

    init(schema: CollectionSchema) {
        self.schema = schema
        var columns: [String: ColumnDefinition] = [:]
        for column in schema.columns { columns[Identifier.folded(column.name)] = column }
        columnsByFoldedName = columns
    }

    /// The stored definition of the column `name` (compared ignoring ASCII case).
    func definition(of name: String) -> ColumnDefinition? {
        columnsByFoldedName[Identifier.folded(name)]
    }

    /// The SQL for a column in a select list: its identifier, or `NULL` when the table lacks it.
    func selected(_ name: String) -> String {
        definition(of: name) == nil ? "NULL::text" : PostgreSQLIdentifier.quoted(name)
    }

    /// `$n::type` for a new argument.
    private mutating func placeholder(_ value: StorageValue, as type: String) -> String {
        arguments.append(value)
        return "$\(arguments.count)::" + type
    }

    /// ` ORDER BY ...`, nulls first ascending (as SQLite), or the empty string.
    func orderByClause(_ ordering: [Ordering]) -> String {
        let terms = ordering.compactMap { term -> String? in
            guard definition(of: term.column) != nil else { return nil }
            return PostgreSQLIdentifier.quoted(term.column)
                + (term.isDescending ? " DESC NULLS LAST" : " ASC NULLS FIRST")
        }
        return terms.isEmpty ? "" : " ORDER BY " + terms.joined(separator: ", ")
    }

    /// The rank of a storage class in SQLite's order: numbers, then text, then blobs.
    private static func rank(_ type: ColumnType) -> Int {
        switch type {
        case .integer, .real: 1
        case .text, .untyped: 2
        case .blob: 3
        }
    }

    /// The SQL for `predicate`, or `nil` when it cannot be compiled.
    mutating func compile(_ predicate: StoragePredicate) -> String? {
        switch predicate {
        case .compare(let name, let comparison, let value):
            return compare(name, comparison, value)
        case .isNull(let name):
            return definition(of: name) == nil ? "TRUE" : "(" + PostgreSQLIdentifier.quoted(name) + " IS NULL)"
        case .like(let name, let pattern):
            guard let column = definition(of: name) else { return "NULL::boolean" }
            guard column.type == .text || column.type == .untyped else { return nil }
            let parameter = placeholder(.text(pattern), as: "text")
            return "(lower(" + PostgreSQLIdentifier.quoted(name) + ") LIKE lower(" + parameter
                + " COLLATE \"C\") ESCAPE '')"
        case .and, .or:
            let isAnd: Bool
            if case .and = predicate { isAnd = true } else { isAnd = false }
            // Chains are flattened, so a long `in` list does not nest one level per value.
            var operands: [StoragePredicate] = []
            var pending = [predicate]
            while let next = pending.popLast() {
                switch (next, isAnd) {
                case (.and(let lhs, let rhs), true), (.or(let lhs, let rhs), false):
                    pending.append(rhs)
                    pending.append(lhs)
                default:
                    operands.append(next)
                }
            }
            var parts: [String] = []
            for operand in operands {
                guard let part = compile(operand) else { return nil }
                parts.append(part)
            }
            return "(" + parts.joined(separator: isAnd ? " AND " : " OR ") + ")"
        case .not(let operand):
            return compile(operand).map { "(NOT " + $0 + ")" }
        case .constant(let value):
            return value ? "TRUE" : "FALSE"
        default:
            // A node this compiler does not know (`in` today, any added later): the caller
            // evaluates the predicate in Swift with `PredicateEvaluator`.
            return nil
        }
    }

    private mutating func compare(
        _ name: String,
        _ comparison: StoragePredicate.Comparison,
        _ value: StorageValue
    )
        -> String
    {
        guard let column = definition(of: name), let valueType = value.columnType else { return "NULL::boolean" }
        let identifier = PostgreSQLIdentifier.quoted(name)
        let columnRank = Self.rank(column.type)
        let valueRank = Self.rank(valueType)
        guard columnRank == valueRank else {
            // The column holds only its own class, so the comparison is the same for every
            // non-null value, and unknown for nulls.
            let holds: Bool
            switch comparison {
            case .equal: holds = false
            case .notEqual: holds = true
            case .less, .lessOrEqual: holds = columnRank < valueRank
            case .greater, .greaterOrEqual: holds = columnRank > valueRank
            }
            return holds ? "(" + identifier + " IS NOT NULL OR NULL)" : "(" + identifier + " IS NULL AND NULL)"
        }
        let parameter: String
        switch (column.type, value) {
        case (.integer, .integer):
            parameter = placeholder(value, as: "int8")
        case (_, .integer(let number)):
            parameter = placeholder(.real(Double(number)), as: "float8")
        case (_, .real):
            parameter = placeholder(value, as: "float8")
        case (_, .blob):
            parameter = placeholder(value, as: "bytea")
        default:
            parameter = placeholder(value, as: "text")
        }
        return "(" + identifier + " " + comparison.rawValue + " " + parameter + ")"
    }
}
