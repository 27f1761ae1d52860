/// How the untyped path infers column types: over the whole batch, so that the order of the rows
/// never changes the schema or the stored values.
extension Session {
    /// The type of a column holding values of types `current` and `new` in one batch: integer,
    /// then real, then text, as the values require (text holds every other kind). The rule is
    /// commutative and associative, so any order of the same rows gives the same type.
    static func batchType(_ current: ColumnType, _ new: ColumnType) -> ColumnType {
        if current == new || new == .untyped { return current }
        switch (current, new) {
        case (.untyped, _): return new
        case (.integer, .real), (.real, .integer): return .real
        default: return .text
        }
    }

    /// A value of the batch as its column stores it. A real in a text column keeps every digit
    /// (Swift's shortest exact form), where SQLite's own conversion would keep 15.
    /// - Throws: ``StorageError`` with `.valueOutOfRange` for an integer in a real column that no
    ///   Double holds exactly (see `realHoldsExactly`).
    @inline(__always)
    static func converted(_ value: StorageValue, to type: ColumnType, column: String) throws -> StorageValue {
        if type == .text, case .real(let number) = value { return .text("\(number)") }
        if type == .real, case .integer(let number) = value, !realHoldsExactly(number) {
            throw inexactReal(number, column: column)
        }
        return value.applyingAffinity(type)
    }
}
