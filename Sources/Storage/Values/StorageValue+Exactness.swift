extension StorageValue {
    /// The value in the form every backend stores it, so that what one backend reads back, all do.
    ///
    /// - NaN is refused: SQLite stores a NaN as NULL (after which the record no longer reads back
    ///   as the type that wrote it), so no backend accepts one.
    /// - -0.0 is stored as 0.0: SQLite keeps whole reals of real columns as integers on disk,
    ///   which drops the sign of zero; the two compare equal everywhere, and now read back the same
    ///   on every backend.
    /// - ±infinity is kept as it is on every backend.
    /// - Throws: ``StorageError`` with code `.valueOutOfRange` for a NaN, naming the column.
    @inline(__always)
    package func checkedForStorage(column: @autoclosure () -> String) throws -> StorageValue {
        guard case .real(let number) = self, !number.isFinite || number == 0 else { return self }
        if number.isNaN {
            throw StorageError(
                .valueOutOfRange,
                "column \(Identifier.quoted(column())): NaN cannot be stored (SQLite would keep it as null);"
                    + " store nil or a sentinel value instead",
                column: column()
            )
        }
        if number == 0 && number.sign == .minus { return .real(0) }
        return self
    }
}
