/// The one evaluator of ``StoragePredicate`` and ``Ordering`` for backends that cannot push a query down to
/// their engine. It implements SQLite's semantics exactly (three-valued logic, comparison across
/// storage classes, LIKE), so every backend returns what SQLite returns.
public enum PredicateEvaluator {
    /// Whether `predicate` is true for a record; unknown (a comparison with null) counts as false.
    ///
    /// Prepares the predicate on every call: to test many records, prepare it once with
    /// ``PreparedPredicate`` (an IN list is hashed when it is prepared).
    /// - Parameters:
    ///   - predicate: the filter; `nil` matches every record.
    ///   - value: the record's value for a column name (`.null` when it has none).
    /// - Returns: whether the record is selected.
    public static func matches(_ predicate: StoragePredicate?, _ value: (String) -> StorageValue) -> Bool {
        PreparedPredicate(predicate).matches(value)
    }

    /// Three-valued evaluation: `nil` is SQL's unknown.
    /// - Parameters:
    ///   - predicate: the filter.
    ///   - value: the record's value for a column name (`.null` when it has none).
    /// - Returns: `true`, `false`, or `nil` for unknown.
    public static func evaluate(_ predicate: StoragePredicate, _ value: (String) -> StorageValue) -> Bool? {
        PreparedPredicate(predicate).evaluate(value)
    }

    /// Compares two records by `orderings`, SQLite style (nulls first when ascending).
    /// - Parameters:
    ///   - orderings: the order; the primary key last breaks ties.
    ///   - lhs: the first record's value of a column, by name.
    ///   - rhs: the second record's value of a column, by name.
    /// - Returns: `true` when the first record sorts before the second.
    public static func precedes(
        _ orderings: [Ordering],
        _ lhs: (String) -> StorageValue,
        _ rhs: (String) -> StorageValue
    ) -> Bool {
        for ordering in orderings {
            let order = StorageValue.compare(
                ordering.value(from: lhs(ordering.column)),
                ordering.value(from: rhs(ordering.column))
            )
            if order != 0 { return ordering.isDescending ? order > 0 : order < 0 }
        }
        return false
    }

    /// `value LIKE pattern` in three-valued logic: unknown for a null; false for a blob (as SQLite
    /// built with `SQLITE_LIKE_DOESNT_MATCH_BLOBS`, which Debian's is, and which every backend
    /// follows whatever its engine's build: bytes are not text, and reading them as text would
    /// depend on their encoding); else the match of the value's text, numbers as SQLite prints
    /// them.
    static func likeMatches(_ value: StorageValue, _ pattern: String) -> Bool? {
        switch value {
        case .null: return nil
        case .blob: return false
        case .integer(let number): return like(String(number), pattern)
        case .real(let number): return like(StorageValue.sqliteText(number), pattern)
        case .text(let text): return like(text, pattern)
        }
    }

    /// SQL LIKE without an escape character: `%` any run, `_` one character, ASCII letters
    /// compared case-insensitively. Greedy with one backtrack point, so linear for typical patterns.
    package static func like(_ text: String, _ pattern: String) -> Bool {
        let subject = Array(text.unicodeScalars).map(foldASCII)
        let pattern = Array(pattern.unicodeScalars).map(foldASCII)
        var s = 0
        var p = 0
        var starPattern = -1
        var starSubject = 0
        while s < subject.count {
            if p < pattern.count && pattern[p] == "%" {
                starPattern = p
                starSubject = s
                p += 1
            } else if p < pattern.count && (pattern[p] == "_" || pattern[p] == subject[s]) {
                p += 1
                s += 1
            } else if starPattern >= 0 {
                p = starPattern + 1
                starSubject += 1
                s = starSubject
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == "%" { p += 1 }
        return p == pattern.count
    }

    private static func foldASCII(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        scalar.value >= 65 && scalar.value <= 90 ? Unicode.Scalar(scalar.value + 32)! : scalar
    }
}
