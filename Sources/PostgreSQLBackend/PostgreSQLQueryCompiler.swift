internal import CPostgreSQL
import Storage

/// Turns a `StoragePredicate` and `Ordering`s into SQL over one table, with every value a bound
/// parameter (`$n::type`), and SQLite's semantics: numbers compare by value whether integer or
/// real, a number sorts before any text and text before any blob, text compares byte-wise
/// (`COLLATE "C"` columns), `LIKE` is ASCII case-insensitive with no escape character, and nulls
/// sort first.
///
/// A predicate it cannot express (a `LIKE` on a non-text column) makes `compile` return `nil`;
/// the caller then filters with `PreparedPredicate`.
struct PostgreSQLQueryCompiler {
    /// The schema of the table the SQL reads (a sub-query's while its predicate is compiled).
    private(set) var schema: CollectionSchema
    /// The stored schema and the qualified table of a sub-query's collection, by its name and
    /// the columns its predicate names, or `nil` for none: a sub-query is then not compiled
    /// (`compile` returns `nil`).
    var subqueryTarget: ((String, [String]) -> (schema: CollectionSchema, table: String)?)?
    /// The values of the placeholders, in order (`.null` in the place of an array).
    private(set) var arguments: [StorageValue] = []
    /// The array placeholders (an `in` list), by their index in `arguments`: the elements and
    /// their type.
    private var arrays: [Int: (elements: [StorageValue], type: Oid)] = [:]

    /// The placeholders' values as statement parameters.
    var parameters: PostgreSQLParameters {
        guard !arrays.isEmpty else { return PostgreSQLParameters(arguments) }
        var parameters = PostgreSQLParameters()
        for (index, argument) in arguments.enumerated() {
            if let array = arrays[index] {
                parameters.appendArray(array.elements, elementType: array.type)
            } else {
                parameters.append(argument)
            }
        }
        return parameters
    }
    private var columnsByFoldedName: [String: ColumnDefinition]

    init(schema: CollectionSchema) {
        self.schema = schema
        columnsByFoldedName = Self.columns(of: schema)
    }

    private static func columns(of schema: CollectionSchema) -> [String: ColumnDefinition] {
        var columns: [String: ColumnDefinition] = [:]
        for column in schema.columns { columns[Identifier.folded(column.name)] = column }
        return columns
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

    /// The SQL for `predicate`, or `nil` when it cannot be compiled. Walked with `fold`, without
    /// recursion; chains come out flat, so a long `in` list does not nest one level per value.
    mutating func compile(_ predicate: StoragePredicate) -> String? {
        predicate.fold(
            term: { compileTerm($0) },
            all: { Self.chain($0, " AND ") },
            any: { Self.chain($0, " OR ") },
            not: { $0.map { "(NOT " + $0 + ")" } }
        )
    }

    /// `(a AND b AND …)`, or `nil` when an operand could not be compiled.
    private static func chain(_ operands: [String?], _ separator: String) -> String? {
        var parts: [String] = []
        parts.reserveCapacity(operands.count)
        for operand in operands {
            guard let operand else { return nil }
            parts.append(operand)
        }
        return "(" + parts.joined(separator: separator) + ")"
    }

    /// The SQL of a term (a node that is not AND, OR or NOT), or `nil` when it cannot be compiled.
    private mutating func compileTerm(_ predicate: StoragePredicate) -> String? {
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
        case .constant(let value):
            return value ? "TRUE" : "FALSE"
        case .in(let name, let values):
            return member(name, values)
        case .subquery(let name, let collection, let inner):
            return subquery(name, collection, inner)
        default:
            // Not AND, OR or NOT (fold passes only terms): a kind of node added later.
            return nil
        }
    }

    /// `column IN (values)` with SQLite's semantics (as `PreparedPredicate` has them): true when
    /// the column's value equals one of the values (numbers by value, text and blobs by their
    /// bytes); else unknown when the column's value is null or the list holds a null (a NaN is
    /// one), false otherwise; false for an empty list. As `column = ANY($n::type[])`, one array
    /// parameter of the column's type, which an index on the column serves: the values the column
    /// cannot hold (another class, a real with a fraction in an integer column, an integer a
    /// double cannot hold exactly in a real column, text with a NUL character) can equal no stored
    /// value and are left out.
    private mutating func member(_ name: String, _ values: [StorageValue]) -> String {
        guard !values.isEmpty else { return "FALSE" }
        guard let column = definition(of: name) else { return "NULL::boolean" }
        var elements: [StorageValue] = []
        elements.reserveCapacity(values.count)
        var hasNull = false
        for value in values {
            switch (column.type, value) {
            case (_, .null):
                hasNull = true
            case (_, .real(let number)) where number.isNaN:
                hasNull = true
            case (.integer, .integer):
                elements.append(value)
            case (.integer, .real(let number)):
                if let integer = StorageValue.exactInteger(number) { elements.append(.integer(integer)) }
            case (.real, .real):
                elements.append(value)
            case (.real, .integer(let number)):
                let real = Double(number)
                if StorageValue.exactInteger(real) == number { elements.append(.real(real)) }
            case (.text, .text(let text)), (.untyped, .text(let text)):
                // PostgreSQL text cannot hold a NUL character, so no stored text has one.
                if !text.utf8.contains(0) { elements.append(value) }
            case (.blob, .blob):
                elements.append(value)
            default:
                break
            }
        }
        let identifier = PostgreSQLIdentifier.quoted(name)
        guard !elements.isEmpty else {
            // No value can match: unknown for a null value or when the list holds a null.
            return hasNull ? "NULL::boolean" : "(" + identifier + " IS NULL AND NULL)"
        }
        if hasNull { elements.append(.null) }
        let type: (name: String, oid: Oid)
        switch column.type {
        case .integer: type = ("int8", PostgreSQLType.int8)
        case .real: type = ("float8", PostgreSQLType.float8)
        case .text, .untyped: type = ("text", PostgreSQLType.text)
        case .blob: type = ("bytea", PostgreSQLType.bytea)
        }
        arrays[arguments.count] = (elements, type.oid)
        arguments.append(.null)
        return "(" + identifier + " = ANY($\(arguments.count)::" + type.name + "[]))"
    }

    /// `(column IN (SELECT key FROM table WHERE …))`, the sub-query's predicate compiled over its
    /// own table with the placeholders numbered on from those before it. `nil` (the caller
    /// resolves the sub-query itself) without `subqueryTarget`, for a collection it does not
    /// know, for a column the table lacks (an empty sub-query is false there, any other unknown),
    /// and where the column's class and the key's differ (SQL would refuse `int8 = text`, and
    /// compare an integer with a real through a double).
    private mutating func subquery(_ name: String, _ collection: String, _ inner: StoragePredicate?) -> String? {
        guard let subqueryTarget, let target = subqueryTarget(collection, inner?.columnNames ?? []),
            let column = definition(of: name),
            let key = target.schema.primaryKeyColumn, Self.sameClass(column.type, key.type)
        else { return nil }
        let outer = (schema, columnsByFoldedName)
        schema = target.schema
        columnsByFoldedName = Self.columns(of: target.schema)
        var filter = ""
        var compiled = true
        if let inner {
            if let condition = compile(inner) { filter = " WHERE " + condition } else { compiled = false }
        }
        (schema, columnsByFoldedName) = outer
        guard compiled else { return nil }
        return "(" + PostgreSQLIdentifier.quoted(name) + " IN (SELECT " + PostgreSQLIdentifier.quoted(key.name)
            + " FROM " + target.table + filter + "))"
    }

    /// Whether values of columns of types `a` and `b` compare in SQL as `.in` compares them.
    private static func sameClass(_ a: ColumnType, _ b: ColumnType) -> Bool {
        switch (a, b) {
        case (.integer, .integer), (.real, .real), (.blob, .blob): true
        case (.text, .text), (.text, .untyped), (.untyped, .text), (.untyped, .untyped): true
        default: false
        }
    }

    private mutating func compare(
        _ name: String,
        _ comparison: StoragePredicate.Comparison,
        _ value: StorageValue
    )
        -> String
    {
        // A null or a NaN (which SQLite binds as a null) makes every comparison unknown.
        guard !PreparedPredicate.isSQLNull(value), let column = definition(of: name), let valueType = value.columnType
        else { return "NULL::boolean" }
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
