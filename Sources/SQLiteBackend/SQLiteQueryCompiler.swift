import Storage

/// Turns a `StoragePredicate` and `Ordering`s into SQL text over one table, with the compared values as
/// bound parameters.
///
/// The text holds only quoted identifiers, keywords and `?`, so it is a good statement-cache key.
/// A column the table lacks is compiled as the literal `NULL`, which is what its records hold.
struct SQLiteQueryCompiler {
    /// The table's schema.
    let schema: CollectionSchema
    /// The values for the `?` placeholders, in order.
    private(set) var arguments: [StorageValue] = []

    init(schema: CollectionSchema) {
        self.schema = schema
    }

    /// The SQL for a column reference: the quoted name, or `NULL` for a column the table lacks.
    func column(_ name: String) -> String {
        schema.column(named: name) == nil ? "NULL" : quote(name)
    }

    /// ` WHERE ...` for `predicate`, or the empty string.
    mutating func whereClause(_ predicate: StoragePredicate?) -> String {
        guard let predicate else { return "" }
        return " WHERE " + compile(predicate)
    }

    /// ` ORDER BY ...` for `ordering`, or the empty string. Columns the table lacks are all null
    /// and do not change the order, so they are left out.
    func orderByClause(_ ordering: [Ordering]) -> String {
        let terms = ordering.compactMap { term -> String? in
            guard schema.column(named: term.column) != nil else { return nil }
            return quote(term.column) + (term.isDescending ? " DESC" : " ASC")
        }
        return terms.isEmpty ? "" : " ORDER BY " + terms.joined(separator: ", ")
    }

    /// The SQL for `predicate`. SQLite's own three-valued logic and comparison rules apply, which
    /// `PredicateEvaluator` mirrors.
    mutating func compile(_ predicate: StoragePredicate) -> String {
        switch predicate {
        case .compare(let name, let comparison, let value):
            arguments.append(value)
            return column(name) + " " + comparison.rawValue + " ?"
        case .isNull(let name):
            return column(name) + " IS NULL"
        case .like(let name, let pattern):
            arguments.append(.text(pattern))
            return column(name) + " LIKE ?"
        case .and(let lhs, let rhs):
            return "(" + compile(lhs) + " AND " + compile(rhs) + ")"
        case .or(let lhs, let rhs):
            if let list = inList(predicate) { return list }
            return "(" + compile(lhs) + " OR " + compile(rhs) + ")"
        case .not(let operand):
            return "(NOT " + compile(operand) + ")"
        case .constant(let value):
            return value ? "1" : "0"
        }
    }

    /// The values `compile` binds for `predicate`, in the same order, without building any SQL:
    /// every comparison's value and every LIKE pattern, depth first, left to right (an IN list
    /// keeps that order too).
    static func arguments(of predicate: StoragePredicate?) -> [StorageValue] {
        var values: [StorageValue] = []
        func visit(_ predicate: StoragePredicate) {
            switch predicate {
            case .compare(_, _, let value): values.append(value)
            case .like(_, let pattern): values.append(.text(pattern))
            case .and(let lhs, let rhs), .or(let lhs, let rhs):
                visit(lhs)
                visit(rhs)
            case .not(let operand): visit(operand)
            case .isNull, .constant: break
            }
        }
        if let predicate { visit(predicate) }
        return values
    }

    /// `"c" IN (?, ?, ...)` for a chain of ORs of equalities on one column, as `Column.in` builds.
    /// Same three-valued result as the chain, but it does not nest one expression level per value
    /// (SQLite limits expression depth).
    private mutating func inList(_ predicate: StoragePredicate) -> String? {
        var values: [StorageValue] = []
        var name: String?
        var pending = [predicate]
        while let next = pending.popLast() {
            switch next {
            case .or(let lhs, let rhs):
                pending.append(rhs)
                pending.append(lhs)
            case .constant(false):
                continue  // false OR x is x
            case .compare(let column, .equal, let value):
                if name == nil { name = column }
                guard name == column else { return nil }
                values.append(value)
            default:
                return nil
            }
        }
        guard let name, values.count > 1 else { return nil }
        arguments.append(contentsOf: values)
        let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
        return column(name) + " IN (" + placeholders + ")"
    }
}

/// What the SQL text of a scan depends on: everything in the request but the compared values,
/// and the schema version of the table it was compiled against.
struct SQLiteScanShape: Hashable {
    let collection: String
    let columns: [String]
    let predicate: StoragePredicate?
    let ordering: [Ordering]
    let hasLimit: Bool
    let hasOffset: Bool
    let schemaVersion: Int64

    init(_ request: ScanRequest, schemaVersion: Int64) {
        collection = request.collection
        columns = request.columns
        predicate = request.predicate?.mapValues { _, _ in .null }
        ordering = request.ordering
        hasLimit = request.limit != nil
        hasOffset = request.offset > 0
        self.schemaVersion = schemaVersion
    }
}
