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
    /// Cleared by a node this compiler does not know (a kind added after it was written): the
    /// predicate is then filtered with `PreparedPredicate` instead.
    private(set) var isComplete = true

    /// The stored schema of another collection, for a sub-query over it; `nil` (the default)
    /// leaves every sub-query to the caller's fallback (`isComplete` is cleared).
    var lookup: ((String) -> CollectionSchema?)?

    init(schema: CollectionSchema) {
        self.schema = schema
    }

    /// The SQL for a column reference: the quoted name, or `NULL` for a column the table lacks.
    func column(_ name: String) -> String {
        schema.column(named: name) == nil ? "NULL" : quote(name)
    }

    /// The SQL reading the field at `path` inside column `name`'s JSON text (its path bound, so
    /// appended to `arguments`), or the column itself for an empty path; `NULL` for a column
    /// the table lacks.
    mutating func column(_ name: String, path: [String]) -> String {
        guard !path.isEmpty, schema.column(named: name) != nil else { return column(name) }
        if Self.isIndexed(name, path, schema) { return Self.indexedField(quote(name), path) }
        arguments.append(.text(Self.jsonPath(path)))
        return Self.field(quote(name))
    }

    /// ` WHERE ...` for `predicate`, or the empty string; `nil` when SQLite cannot take it (more
    /// than `parameterLimit` bound values, or nested deeper than `nestingLimit`), and the caller
    /// filters with `PreparedPredicate`.
    mutating func whereClause(_ predicate: StoragePredicate?) -> String? {
        guard let predicate else { return "" }
        let (sql, depth) = compile(predicate)
        return isComplete && arguments.count <= Self.parameterLimit && depth <= Self.nestingLimit
            ? " WHERE " + sql : nil
    }

    /// ` ORDER BY ...` for `ordering`, or the empty string. Columns the table lacks are all null
    /// and do not change the order, so they are left out.
    /// A nested field's path is bound, so its values follow the WHERE clause's in `arguments`
    /// (`orderArguments` lists them).
    mutating func orderByClause(_ ordering: [Ordering]) -> String {
        let terms = ordering.compactMap { term -> String? in
            guard schema.column(named: term.column) != nil else { return nil }
            let direction = term.isDescending ? " DESC" : " ASC"
            guard !term.path.isEmpty else { return quote(term.column) + direction }
            if Self.isIndexed(term.column, term.path, schema) {
                return Self.indexedField(quote(term.column), term.path) + direction
            }
            arguments.append(.text(Self.jsonPath(term.path)))
            return Self.field(quote(term.column)) + direction
        }
        return terms.isEmpty ? "" : " ORDER BY " + terms.joined(separator: ", ")
    }

    /// The values `orderByClause` binds for `ordering`, in order, without building any SQL.
    static func orderArguments(_ ordering: [Ordering], _ schema: CollectionSchema) -> [StorageValue] {
        ordering.compactMap { term in
            term.path.isEmpty || schema.column(named: term.column) == nil || isIndexed(term.column, term.path, schema)
                ? nil : .text(jsonPath(term.path))
        }
    }

    /// Whether `schema` has an index on the field at `path` inside `column`
    /// (``IndexDefinition/init(nested:_:)``): its queries then write the index's expression,
    /// path and all, for SQLite to match it (a bound path matches no index).
    /// A schema with no columns and no indexes: the one a sub-query's terms are read against.
    static let unindexed = CollectionSchema(name: "", columns: [], primaryKey: "")

    static func isIndexed(_ column: String, _ path: [String], _ schema: CollectionSchema) -> Bool {
        guard !schema.indexes.isEmpty else { return false }
        return schema.indexes.contains { index in
            index.path == path && index.columns.count == 1 && Identifier.spelledAlike(index.columns[0], column)
        }
    }

    /// `field(_:)` with the path written in the SQL as a string literal, the expression of an
    /// index on a nested field and of the queries that use it. Only a declared index's path is
    /// ever written so; its keys hold no quote, backslash or control character (the schema
    /// refuses them), and a `'` is doubled as SQL writes one in a literal.
    static func indexedField(_ column: String, _ path: [String]) -> String {
        var literal = "'"
        for character in jsonPath(path) { literal += character == "'" ? "''" : String(character) }
        literal += "'"
        return "(CASE WHEN typeof(" + column + ") = 'text' AND json_valid(" + column + ") THEN json_extract("
            + column + ", " + literal + ") END)"
    }

    /// The SQL of a field inside the JSON text of `column` (an expression), its path bound to
    /// the one `?`: null unless the value is text holding valid JSON, as `NestedField` reads it
    /// (`json_extract` alone fails on text that is not JSON, and reads a blob's bytes as text).
    static func field(_ column: String) -> String {
        "(CASE WHEN typeof(" + column + ") = 'text' AND json_valid(" + column + ") THEN json_extract(" + column
            + ", ?) END)"
    }

    /// SQLite's JSON path of `keys`: `$."a"."b"`. Each key is quoted, so dots, `$`, `[` and
    /// spaces in it are plain characters; the store refuses keys holding a quote, a backslash or
    /// a control character, which this syntax cannot carry (see `Session.checkNestedFields`).
    static func jsonPath(_ keys: [String]) -> String {
        var path = "$"
        for key in keys { path += ".\"" + key + "\"" }
        return path
    }

    /// Whether SQLite's path syntax carries `keys` exactly.
    static func expressible(_ keys: [String]) -> Bool {
        !keys.isEmpty
            && keys.allSatisfy { key in
                !key.unicodeScalars.contains { $0 == "\"" || $0 == "\\" || $0.value < 0x20 }
            }
    }

    /// The most values a predicate may bind: `SQLITE_MAX_VARIABLE_NUMBER` (32,766 by default
    /// since 3.32), less room for the statement's own parameters (a LIMIT).
    static let parameterLimit = 32_000

    /// The longest IN list bound as one parameter per value; a longer one is bound as one JSON
    /// array, so its SQL text (and cached statement) is the same whatever its length.
    static let inlineListLimit = 64

    /// The deepest nesting of parentheses `compile` may give SQLite. Its parser's stack holds
    /// 100 entries (`YYSTACKDEPTH`, not growable in Debian's 3.40), and a level takes about three:
    /// `(a AND (b OR (c …` failed past about 30 levels (`parser stack overflow`). A deeper
    /// predicate is filtered with `PreparedPredicate` instead, so every depth the store accepts
    /// (`StoragePredicate.maximumDepth`) answers.
    static let nestingLimit = 24

    /// SQL text and the depth of its parentheses.
    typealias Compiled = (sql: String, depth: Int)

    /// The SQL for `predicate` and the depth of its parentheses (as `nestingLimit` counts them).
    /// SQLite's own three-valued logic and comparison rules apply, which `PredicateEvaluator`
    /// mirrors. Chains of AND and OR come out as balanced parentheses, so a chain of any length
    /// nests log₂ n deep.
    mutating func compile(_ predicate: StoragePredicate) -> Compiled {
        predicate.fold(
            term: { compileTerm($0) },
            all: { Self.balanced($0[...], " AND ") },
            any: { Self.balanced($0[...], " OR ") },
            not: { ("(NOT " + $0.sql + ")", $0.depth + 1) }
        )
    }

    /// The SQL of a term (a node that is not AND, OR or NOT) and the depth of its parentheses,
    /// its values appended to `arguments` in the order `termArguments` gives them.
    private mutating func compileTerm(_ term: StoragePredicate) -> Compiled {
        switch term {
        case .compare(let name, let comparison, let value):
            arguments.append(value)
            return (column(name) + " " + comparison.rawValue + " ?", 0)
        case .isNull(let name):
            return (column(name) + " IS NULL", 0)
        case .like(let name, let pattern):
            arguments.append(.text(pattern))
            // A blob never matches (false, not unknown), whether or not this SQLite was built with
            // SQLITE_LIKE_DOESNT_MATCH_BLOBS (see `PredicateEvaluator.likeMatches`).
            return ("(" + column(name) + " LIKE ? AND typeof(" + column(name) + ") <> 'blob')", 2)
        case .constant(let value):
            return (value ? "1" : "0", 0)
        case .in(let name, let values):
            let list = InList(values)
            arguments.append(contentsOf: list.arguments)
            return (column(name) + list.sql, list.depth)
        case .nested(let path, let inner):
            return nested(path, inner)
        case .subquery(let name, let collection, let inner):
            return subquery(name, collection, inner)
        default:
            // Not AND, OR or NOT (fold passes only terms): a kind of node added later.
            isComplete = false
            return ("NULL", 0)
        }
    }

    /// `column IN (SELECT key FROM collection WHERE …)`: the sub-query's predicate compiled over
    /// its own table, its values bound after those before it. A collection `lookup` does not know
    /// is left to the caller's fallback, which resolves the sub-query with a scan of its own.
    private mutating func subquery(_ name: String, _ collection: String, _ inner: StoragePredicate?) -> Compiled {
        guard let lookup, let target = lookup(collection) else {
            isComplete = false
            return ("NULL", 0)
        }
        // Without its nested-field indexes: a sub-query's paths are bound, never written, so
        // that the statement's arguments do not depend on another table's indexes.
        var unindexedTarget = target
        unindexedTarget.indexes.removeAll { !$0.path.isEmpty }
        var sub = SQLiteQueryCompiler(schema: unindexedTarget)
        sub.lookup = lookup
        var sql = column(name) + " IN (SELECT " + quote(target.primaryKey) + " FROM " + quote(target.name)
        var depth = 3
        if let inner {
            let compiled = sub.compile(inner)
            if !sub.isComplete { isComplete = false }
            sql += " WHERE " + compiled.sql
            depth += compiled.depth
        }
        arguments.append(contentsOf: sub.arguments)
        return (sql + ")", depth)
    }

    /// A term on a nested field: the term with the field's expression in place of its column.
    /// Anything but a term on one column (which the store never hands over) is left to
    /// `PreparedPredicate`.
    private mutating func nested(_ path: [String], _ inner: StoragePredicate) -> Compiled {
        let name: String
        switch inner {
        case .compare(let column, _, _), .isNull(let column), .like(let column, _), .in(let column, _):
            name = column
        default:
            isComplete = false
            return ("NULL", 0)
        }
        guard Self.expressible(path) else {
            isComplete = false
            return ("NULL", 0)
        }
        let field: String
        if schema.column(named: name) != nil, Self.isIndexed(name, path, schema) {
            field = Self.indexedField(quote(name), path)
        } else {
            arguments.append(.text(Self.jsonPath(path)))
            field = Self.field(column(name))
        }
        switch inner {
        case .compare(_, let comparison, let value):
            arguments.append(value)
            return (field + " " + comparison.rawValue + " ?", 2)
        case .isNull:
            return (field + " IS NULL", 2)
        case .like(_, let pattern):
            // A field is never a blob, so LIKE alone has `PredicateEvaluator.likeMatches`' answer.
            arguments.append(.text(pattern))
            return (field + " LIKE ?", 2)
        case .in(_, let values):
            let list = InList(values)
            arguments.append(contentsOf: list.arguments)
            return (field + list.sql, list.depth + 2)
        default:
            preconditionFailure("checked above")
        }
    }

    /// `(a AND (b AND c))`-style nesting of depth log₂ n over `operands`.
    private static func balanced(_ operands: ArraySlice<Compiled>, _ separator: String) -> Compiled {
        if operands.count == 1 { return operands[operands.startIndex] }
        let middle = operands.startIndex + operands.count / 2
        let (lhs, rhs) = (balanced(operands[..<middle], separator), balanced(operands[middle...], separator))
        return ("(" + lhs.sql + separator + rhs.sql + ")", max(lhs.depth, rhs.depth) + 1)
    }

    /// Appends the values `compile` binds for a term, in the order of its placeholders.
    private static func termArguments(
        _ term: StoragePredicate,
        _ schema: CollectionSchema,
        into arguments: inout [StorageValue]
    ) {
        switch term {
        case .compare(_, _, let value): arguments.append(value)
        case .like(_, let pattern): arguments.append(.text(pattern))
        case .in(_, let values): arguments.append(contentsOf: InList(values).arguments)
        case .nested(let path, let inner) where expressible(path):
            let name = inner.columnNames.first ?? ""
            if schema.column(named: name) == nil || !isIndexed(name, path, schema) {
                arguments.append(.text(jsonPath(path)))
            }
            termArguments(inner, schema, into: &arguments)
        case .subquery(_, _, let inner):
            // A sub-query's nested fields are always bound (see `subquery`): no schema's indexes.
            inner?.forEachTerm { termArguments($0, Self.unindexed, into: &arguments) }
        default: break
        }
    }

    /// The values `compile` binds for `predicate`, in the same order, without building any SQL.
    static func arguments(of predicate: StoragePredicate?, _ schema: CollectionSchema) -> [StorageValue] {
        var values: [StorageValue] = []
        predicate?.forEachTerm { termArguments($0, schema, into: &values) }
        return values
    }

    /// A predicate that compiles to the same SQL text as `predicate` and only to it (values
    /// replaced by null, IN lists by what their SQL depends on): the key of the scan-SQL cache,
    /// small even when the predicate holds a million-value IN list.
    static func shape(of predicate: StoragePredicate, _ schema: CollectionSchema) -> StoragePredicate {
        predicate.fold(
            term: { term in
                switch term {
                case .compare(let name, let comparison, _): return .compare(name, comparison, .null)
                case .like(let name, _): return .like(name, "")
                case .in(let name, let values): return .in(name, InList.shape(of: values))
                // The path is bound, so the SQL depends on it only through whether it can be.
                // An indexed field's path is written in the SQL, so it is part of the shape.
                case .nested(let path, let inner):
                    let name = inner.columnNames.first ?? ""
                    let written =
                        !expressible(path) || (schema.column(named: name) != nil && isIndexed(name, path, schema))
                    return .nested(path: written ? path : [], shape(of: inner, schema))
                case .subquery(let name, let collection, let inner):
                    let predicate = inner.map { shape(of: $0, Self.unindexed) }
                    return .subquery(name, collection: collection, predicate: predicate)
                default: return term
                }
            },
            all: StoragePredicate.all,
            any: StoragePredicate.any,
            not: StoragePredicate.not
        )
    }

    /// How an IN list is written: `IN (?, ?, …)` for a short list; for a long one, one JSON array
    /// bound to a single parameter and read back with `json_each` (built into SQLite since
    /// 3.38), so that a list of any length binds a handful of parameters. Values JSON cannot
    /// carry exactly (blobs, text holding a NUL, reals that are not whole numbers below 2⁵³,
    /// whose decimal text SQLite might round differently) are bound one by one after it.
    /// Either form has SQL's semantics, NULLs included; an empty list is `0`, as SQLite
    /// answers `x IN ()` (false, even for a null `x`).
    struct InList {
        let sql: String
        let arguments: [StorageValue]
        /// The depth of its parentheses: `IN (…)` is one, the JSON form's sub-query three.
        var depth: Int { sql.hasPrefix(" IN (SELECT") ? 3 : 1 }

        init(_ values: [StorageValue]) {
            if values.isEmpty {
                (sql, arguments) = (" IN ()", [])
                return
            }
            if values.count <= SQLiteQueryCompiler.inlineListLimit {
                sql = " IN (" + Array(repeating: "?", count: values.count).joined(separator: ", ") + ")"
                arguments = values
                return
            }
            var json = "["
            var separated = false
            var extras: [StorageValue] = []
            for value in values {
                guard Self.jsonCarries(value) else {
                    extras.append(value)
                    continue
                }
                if separated { json += "," }
                Self.appendJSON(value, to: &json)
                separated = true
            }
            json += "]"
            var sql = " IN (SELECT value FROM json_each(?)"
            if !extras.isEmpty {
                sql += " UNION ALL VALUES " + Array(repeating: "(?)", count: extras.count).joined(separator: ", ")
            }
            self.sql = sql + ")"
            arguments = [.text(json)] + extras
        }

        /// What the SQL of `values` depends on, without building it: the length of a short list,
        /// the number of values bound beside the JSON array of a long one (a one-element list
        /// starting with a non-null, so unlike every short list's shape).
        static func shape(of values: [StorageValue]) -> [StorageValue] {
            if values.count <= SQLiteQueryCompiler.inlineListLimit {
                return Array(repeating: .null, count: values.count)
            }
            return [.integer(Int64(values.count(where: { !jsonCarries($0) })))]
        }

        /// Whether JSON and SQLite's `json_each` carry `value` exactly.
        private static func jsonCarries(_ value: StorageValue) -> Bool {
            switch value {
            case .null, .integer: return true
            // Whole numbers print exactly; another real's decimal text might be read back rounded.
            case .real(let number):
                return number.isNaN || (number.rounded(.towardZero) == number && abs(number) < 0x1p53)
            case .text(let text): return !text.utf8.contains(0)  // json_each ends the text at a NUL
            case .blob: return false
            }
        }

        /// Appends the JSON of a value that `jsonCarries`.
        private static func appendJSON(_ value: StorageValue, to json: inout String) {
            switch value {
            case .null:
                json += "null"
            case .integer(let number):
                json += String(number)
            case .real(let number):
                // SQLite stores and binds a NaN as NULL.
                json += number.isNaN ? "null" : String(Int64(number)) + ".0"
            case .text(let text):
                json += "\""
                for scalar in text.unicodeScalars {
                    switch scalar {
                    case "\"": json += "\\\""
                    case "\\": json += "\\\\"
                    case _ where scalar.value < 0x20:
                        json += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
                    default: json.unicodeScalars.append(scalar)
                    }
                }
                json += "\""
            case .blob:
                preconditionFailure("a blob is bound, not written as JSON")
            }
        }
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

    init(_ request: ScanRequest, _ schema: CollectionSchema, schemaVersion: Int64) {
        collection = request.collection
        columns = request.columns
        predicate = request.predicate.map { SQLiteQueryCompiler.shape(of: $0, schema) }
        ordering = request.ordering
        hasLimit = request.limit != nil
        hasOffset = request.offset > 0
        self.schemaVersion = schemaVersion
    }
}
